#include "attune/sim/run_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attune/diagnose/diagnosis.h"

namespace attune::sim {
namespace {

Workload llama3_8b_on_h100(const std::string& framework, const std::string& dialect = "") {
  Workload w;
  auto& m = w.model;
  m.name = "llama3-8b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn = 14336;
  m.vocab = 128256;
  auto& p = w.plan;
  p.framework = framework;
  p.dialect = dialect;
  p.gpu = "h100";
  p.world = 8;
  p.nodes = 1;
  p.gpus_per_node = 8;
  p.tp = 2;
  p.dp = 4;
  p.mbs = 1;
  p.gbs = 64;
  p.seq_len = 8192;
  return w;
}

// Writes the simulated log to a file and diagnoses it like a real run's.
diagnose::Diagnosis round_trip(const Workload& w, const Prediction& p, const RunOptions& o) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("attune_sim_run_" + w.plan.framework + "_" + w.plan.dialect + "_" + o.flavour + "_" +
                     std::to_string(o.seed) + ".log");
  {
    std::ofstream out(path);
    write_run_log(w, p, o, out);
  }
  diagnose::DiagnoseOptions d;
  d.world = w.plan.world;
  d.seq_len = w.plan.seq_len;
  d.global_batch = w.plan.gbs;
  d.gpu = w.plan.gpu;
  diagnose::Diagnosis result = diagnose::diagnose_logs({path.string()}, d);
  std::filesystem::remove(path);
  return result;
}

std::string log_text(const Workload& w, const Prediction& p, const RunOptions& o) {
  std::ostringstream out;
  write_run_log(w, p, o, out);
  return out.str();
}

TEST(RunLog, DiagnoserReadsMegatronRunBackToThePrediction) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o;
  o.steps = 60;
  o.seed = 7;
  diagnose::Diagnosis d = round_trip(w, p, o);
  EXPECT_EQ(d.framework, "megatron");
  EXPECT_EQ(d.steps, 60);
  ASSERT_TRUE(d.step_time_s);
  // 2% noise over ~50 steady steps: the median is well inside 3%.
  EXPECT_NEAR(*d.step_time_s / p.step_time_s, 1.0, 0.03);
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu / p.tokens_per_s_per_gpu, 1.0, 0.03);
  ASSERT_TRUE(d.steady.cv);
  EXPECT_GT(*d.steady.cv, 0.005);  // the noise is there
  EXPECT_LT(*d.steady.cv, 0.05);
  ASSERT_TRUE(d.peak_reserved_gib);
  EXPECT_NEAR(*d.peak_reserved_gib, p.memory.peak_reserved_gib, 0.05);
  EXPECT_FALSE(d.failure);
  EXPECT_EQ(d.loss.size(), 60u);
  EXPECT_LT(d.loss.back().second, d.loss.front().second);  // the loss falls
}

TEST(RunLog, TorchtitanFormatAndSeeds) {
  Workload w = llama3_8b_on_h100("torchtitan");
  Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o;
  o.steps = 40;
  diagnose::Diagnosis d = round_trip(w, p, o);
  EXPECT_EQ(d.framework, "torchtitan");
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu / p.tokens_per_s_per_gpu, 1.0, 0.04);
  std::ostringstream a, b, c;
  write_run_log(w, p, o, a);
  write_run_log(w, p, o, b);
  o.seed = 2;
  write_run_log(w, p, o, c);
  EXPECT_EQ(a.str(), b.str());  // seeded
  EXPECT_NE(a.str(), c.str());
}

TEST(RunLog, FailuresPrintTheFrameworksError) {
  Workload w = llama3_8b_on_h100("megatron");
  w.plan.tp = 3;  // 32 heads
  Prediction bad = predict(w);
  ASSERT_EQ(bad.failure, "invalid_argument");
  diagnose::Diagnosis d = round_trip(w, bad, RunOptions{});
  ASSERT_TRUE(d.failure);
  EXPECT_EQ(diagnose::to_string(d.failure->kind), "invalid_argument");

  Workload big = llama3_8b_on_h100("megatron");
  big.plan.mbs = 16;
  big.plan.gbs = 64 * 4;
  Prediction oom = predict(big);
  ASSERT_EQ(oom.failure, "oom");
  diagnose::Diagnosis od = round_trip(big, oom, RunOptions{});
  ASSERT_TRUE(od.failure);
  EXPECT_EQ(diagnose::to_string(od.failure->kind), "oom");
}

TEST(RunLog, FlavourFollowsTheRecipeFramework) {
  auto flavour = [](const std::string& framework, const std::string& dialect = "") {
    recipe::Plan p;
    p.framework = framework;
    p.dialect = dialect;
    return log_flavour(p);
  };
  EXPECT_EQ(flavour("megatron"), "megatron");
  EXPECT_EQ(flavour("bridge"), "bridge");
  EXPECT_EQ(flavour("automodel"), "automodel");
  EXPECT_EQ(flavour("torchtitan"), "torchtitan");
  EXPECT_EQ(flavour("axolotl"), "hf");
  EXPECT_EQ(flavour("hyperpod", "nemo1"), "nemo");
  EXPECT_EQ(flavour("hyperpod", "smp"), "nemo");
  EXPECT_EQ(flavour("hyperpod", "checkpointless"), "nemo");
  EXPECT_EQ(flavour("hyperpod", "llmft"), "hf");
  const std::vector<std::string> all = {"megatron", "bridge", "nemo", "automodel", "torchtitan", "deepspeed", "hf"};
  EXPECT_EQ(log_flavours(), all);
}

TEST(RunLog, UnknownFlavourOverrideThrowsNamingTheAcceptedOnes) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  RunOptions o;
  o.flavour = "lightning";
  std::ostringstream out;
  try {
    write_run_log(w, p, o, out);
    FAIL() << "no exception for an unknown flavour";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lightning"), std::string::npos) << what;
    for (const auto& name : log_flavours()) EXPECT_NE(what.find(name), std::string::npos) << name << ": " << what;
  }
  EXPECT_TRUE(out.str().empty());
}

// Mean over the steady steps of 200: a step waits for a straggler with
// probability 0.2 and then takes twice as long, so the mean rises by
// 0.2 x (2 - 1) = 20% (binomial spread over ~180 steps: about 3%).
TEST(RunLog, StragglersSlowTheMeanStepNotTheMedian) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o;
  o.steps = 200;
  o.seed = 11;
  const diagnose::Diagnosis calm = round_trip(w, p, o);
  o.straggler_probability = 0.2;
  o.straggler_slowdown = 2;
  const diagnose::Diagnosis slow = round_trip(w, p, o);
  ASSERT_TRUE(calm.steady.mean_step_time_s && slow.steady.mean_step_time_s);
  const double rise = *slow.steady.mean_step_time_s / *calm.steady.mean_step_time_s;
  EXPECT_GT(rise, 1.12);
  EXPECT_LT(rise, 1.28);
  ASSERT_TRUE(slow.step_time_s);
  EXPECT_NEAR(*slow.step_time_s / p.step_time_s, 1.0, 0.03);  // 80% of the steps are untouched
  EXPECT_EQ(log_text(w, p, o), log_text(w, p, o));
  RunOptions other = o;
  other.seed = 12;
  EXPECT_NE(log_text(w, p, o), log_text(w, p, other));
}

TEST(RunLog, StragglerSettingsOutOfRangeThrow) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  RunOptions o;
  o.straggler_probability = 1.5;
  EXPECT_THROW(log_text(w, p, o), std::invalid_argument);
  o.straggler_probability = 0.1;
  o.straggler_slowdown = 0;
  EXPECT_THROW(log_text(w, p, o), std::invalid_argument);
}

// One case per format the simulator prints, chosen the way a recipe would
// (framework and HyperPod dialect) or by override.
struct FlavourCase {
  const char* name;
  const char* framework;
  const char* dialect;
  const char* flavour;    // override, "" for the recipe's own
  const char* diagnosed;  // the framework the diagnoser should detect
  bool rank_tagged;       // torchrun's "[rankN]: " on the traceback
};

void PrintTo(const FlavourCase& c, std::ostream* os) { *os << c.name; }

class RunLogFlavour : public ::testing::TestWithParam<FlavourCase> {
 protected:
  Workload workload() const { return llama3_8b_on_h100(GetParam().framework, GetParam().dialect); }
  RunOptions options() const {
    RunOptions o;
    o.steps = 60;
    o.seed = 5;
    o.flavour = GetParam().flavour;
    return o;
  }
};

TEST_P(RunLogFlavour, DiagnoserReadsTheRunBackToThePrediction) {
  Workload w = workload();
  Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  diagnose::Diagnosis d = round_trip(w, p, options());
  EXPECT_EQ(d.framework, GetParam().diagnosed);
  EXPECT_FALSE(d.failure);
  ASSERT_TRUE(d.step_time_s) << "no steady step time read back";
  EXPECT_NEAR(*d.step_time_s / p.step_time_s, 1.0, 0.03);
  ASSERT_TRUE(d.tokens_per_s_per_gpu) << "no tokens/s/GPU read back";
  EXPECT_NEAR(*d.tokens_per_s_per_gpu / p.tokens_per_s_per_gpu, 1.0, 0.03);
  EXPECT_FALSE(d.loss.empty());
}

TEST_P(RunLogFlavour, FailuresAreDiagnosedInEveryFormat) {
  Workload big = workload();
  big.plan.mbs = 16;
  big.plan.gbs = 64 * 4;
  Prediction oom = predict(big);
  ASSERT_EQ(oom.failure, "oom");
  const diagnose::Diagnosis od = round_trip(big, oom, options());
  ASSERT_TRUE(od.failure);
  EXPECT_EQ(diagnose::to_string(od.failure->kind), "oom");
  const std::string text = log_text(big, oom, options());
  EXPECT_EQ(text.rfind(GetParam().rank_tagged ? "[rank0]: Traceback" : "Traceback", 0), 0u) << text;
  EXPECT_NE(text.find("torch.OutOfMemoryError: CUDA out of memory."), std::string::npos);

  Workload bad = workload();
  bad.plan.tp = 3;  // 32 heads
  Prediction invalid = predict(bad);
  ASSERT_EQ(invalid.failure, "invalid_argument");
  const diagnose::Diagnosis id = round_trip(bad, invalid, options());
  ASSERT_TRUE(id.failure);
  EXPECT_EQ(diagnose::to_string(id.failure->kind), "invalid_argument");
}

// The diagnoser's reader joins a line of exactly 80 characters with the next
// (terminal hard wrap), which would glue two of the simulator's lines together.
TEST_P(RunLogFlavour, NoLineLooksHardWrapped) {
  Workload w = workload();
  Prediction p = predict(w);
  std::istringstream in(log_text(w, p, options()));
  for (std::string line; std::getline(in, line);) {
    std::size_t points = 0;
    for (unsigned char c : line) points += (c & 0xC0) != 0x80;
    EXPECT_NE(points, 80u) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RunLogFlavour,
    ::testing::Values(FlavourCase{"megatron", "megatron", "", "", "megatron", true},
                      FlavourCase{"bridge", "bridge", "", "", "bridge", true},
                      FlavourCase{"nemo1", "hyperpod", "nemo1", "", "nemo", false},
                      FlavourCase{"hyperpod_smp", "hyperpod", "smp", "", "nemo", false},
                      FlavourCase{"hyperpod_checkpointless", "hyperpod", "checkpointless", "", "nemo", false},
                      FlavourCase{"hyperpod_llmft", "hyperpod", "llmft", "", "hf", false},
                      FlavourCase{"automodel", "automodel", "", "", "automodel", false},
                      FlavourCase{"torchtitan", "torchtitan", "", "", "torchtitan", false},
                      FlavourCase{"deepspeed", "megatron", "", "deepspeed", "deepspeed", false},
                      FlavourCase{"hf", "axolotl", "", "", "hf", false},
                      FlavourCase{"nemo_override", "megatron", "", "nemo", "nemo", false}),
    [](const ::testing::TestParamInfo<FlavourCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attune::sim
