#include "attune/sim/run_log.h"

#include <gtest/gtest.h>

#include <cmath>
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

// Llama 3 8B TP2 on 8 nodes.
Workload on_eight_nodes() {
  Workload w = llama3_8b_on_h100("megatron");
  w.plan.world = 64;
  w.plan.nodes = 8;
  w.plan.dp = 32;
  w.plan.gbs = 512;
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

// Mean over the steady steps of 200: a step waits for a straggler with the
// chance that one of the 8 GPUs straggles, 1 - (1 - 0.0275)^8 = 0.2, and then
// takes twice as long, so the mean rises by 0.2 x (2 - 1) = 20% (binomial
// spread over ~180 steps: about 3%).
TEST(RunLog, StragglersPerGpuSlowTheMeanStepNotTheMedian) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o;
  o.steps = 200;
  o.seed = 11;
  o.noise.run_cv = 0;
  const diagnose::Diagnosis calm = round_trip(w, p, o);
  o.noise.straggler_probability = 0.0275;
  o.noise.straggler_slowdown = 2;
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
  // The same chance per GPU on 64 GPUs holds up 83% of the steps.
  const Workload wide = on_eight_nodes();
  const Prediction pw = predict(wide);
  ASSERT_TRUE(pw.ok) << pw.error;
  const diagnose::Diagnosis many = round_trip(wide, pw, o);
  ASSERT_TRUE(many.step_time_s);
  EXPECT_GT(*many.step_time_s / pw.step_time_s, 1.8);  // the median step is a straggler's
}

TEST(RunLog, NoiseSettingsOutOfRangeThrow) {
  Workload w = llama3_8b_on_h100("megatron");
  Prediction p = predict(w);
  RunOptions o;
  o.noise.straggler_probability = 1.5;
  EXPECT_THROW(log_text(w, p, o), std::invalid_argument);
  o.noise.straggler_probability = 0.1;
  o.noise.straggler_slowdown = 0;
  EXPECT_THROW(log_text(w, p, o), std::invalid_argument);
  o.noise.straggler_slowdown = 1.5;
  o.noise.run_cv = -0.1;
  EXPECT_THROW(log_text(w, p, o), std::invalid_argument);
}

double stddev(const std::vector<double>& v) {
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

// The spread of the run-level factor over 300 launches.
double run_factor_spread(const Workload& w, const Prediction& p, RunOptions o) {
  std::vector<double> factors;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    o.seed = seed;
    std::ostringstream out;
    factors.push_back(write_run_log(w, p, o, out).run_factor);
  }
  return stddev(factors);
}

// Each launch draws its own run-level factor: across 300 seeds its spread is
// the run CV (sampling error of a standard deviation over 300: about 4%),
// and the log's steady step follows it.
TEST(RunLog, EachLaunchDrawsARunLevelFactorWithTheRunCv) {
  Workload w = llama3_8b_on_h100("megatron");
  const Prediction p = predict(w);
  RunOptions o;
  o.steps = 3;
  o.noise.run_cv = 0.04;
  o.noise.step_cv = 0;
  EXPECT_NEAR(run_factor_spread(w, p, o), 0.04, 0.006);
  o.steps = 30;
  o.seed = 3;
  std::ostringstream out;
  const double factor = write_run_log(w, p, o, out).run_factor;
  const diagnose::Diagnosis d = round_trip(w, p, o);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s / p.step_time_s, factor, 0.002);
}

// On 8 nodes the CV adds three doublings' worth; a slow node (certain here)
// slows the whole run by its factor.
TEST(RunLog, RunCvGrowsWithNodesAndASlowNodeSlowsTheRun) {
  const Workload w = on_eight_nodes();
  const Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o;
  o.steps = 3;
  o.noise.run_cv = 0.01;
  o.noise.per_node_doubling_cv = 0.01;
  o.noise.cross_node_cv = 0;
  EXPECT_NEAR(run_factor_spread(w, p, o), 0.04, 0.006);
  o.noise.run_cv = o.noise.per_node_doubling_cv = 0;
  o.noise.slow_node_probability = 1;
  o.noise.slow_node_slowdown = 1.3;
  std::ostringstream out;
  EXPECT_DOUBLE_EQ(write_run_log(w, p, o, out).run_factor, 1.3);
}

// Start-up comes before the first step's lines, the first step carries its
// set-up, and without noise the run takes what expected_run_seconds says.
TEST(RunLog, StartUpAndTheFirstStepCostWhatTheyShould) {
  Workload w = llama3_8b_on_h100("megatron");
  const Prediction p = predict(w);
  const Perturbation truth;
  RunOptions o = run_options(w, p, truth, 5, 20);
  o.noise = NoiseModel{0, 0, 0, 0};
  EXPECT_DOUBLE_EQ(o.startup_s, startup_seconds(w, truth));
  EXPECT_GT(o.startup_s, 60);
  std::vector<double> at;
  o.before_lines = [&](double s) { at.push_back(s); };
  std::ostringstream out;
  const RunOutcome r = write_run_log(w, p, o, out);
  ASSERT_GE(at.size(), 20u);
  EXPECT_NEAR(at.front(), o.startup_s + 3 * p.step_time_s + o.first_step_extra_s, 1e-6);
  EXPECT_NEAR(r.elapsed_s, expected_run_seconds(w, p, truth, 20), 1e-6);
  EXPECT_TRUE(r.failure.empty());
  // A slower start-up in the truth, a longer one on a larger world, graphs
  // captured on the first step.
  Perturbation slow;
  slow.startup = 2;
  EXPECT_DOUBLE_EQ(startup_seconds(w, slow), 2 * startup_seconds(w, truth));
  Workload wide = w;
  wide.plan.world = 256;
  wide.plan.nodes = 32;
  EXPECT_GT(startup_seconds(wide, truth), startup_seconds(w, truth));
  Workload graphs = w;
  graphs.knobs.set(Choice::CudaGraphs, cuda_graphs::kLayers);
  EXPECT_GT(first_step_extra_seconds(graphs), first_step_extra_seconds(w));
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

// A failure as the truth (or the model) predicts it, at a step.
Prediction failing(Prediction p, const std::string& kind, int at_step, const std::string& message = "") {
  p.failure = kind;
  p.fails_at_step = at_step;
  p.error = message;
  return p;
}

std::string diagnosed_kind(const diagnose::Diagnosis& d) {
  return d.failure ? diagnose::to_string(d.failure->kind) : std::string("(none)");
}

// Every way a simulated run ends is read back by the diagnoser as that kind,
// at the time the real failure would take.
TEST_P(RunLogFlavour, EveryFailureKindIsDiagnosedAsItself) {
  const Workload w = workload();
  const Prediction p = predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  RunOptions o = options();
  o.noise.run_cv = 0;
  struct Case {
    std::string kind, message;
    int at_step;
  };
  const std::vector<Case> cases = {
      {"import_error", "ModuleNotFoundError: No module named 'flash_attn_interface'", 0},
      {"invalid_argument", "ValueError: num_attention_heads (32) must be divisible by tensor_model_parallel_size (3)", 0},
      {"hang", "", 30},
      {"nccl_timeout", "", 30},
      {"nccl_error", "", 20},
      {"illegal_memory_access", "", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    const Prediction f = failing(p, c.kind, c.at_step, c.message);
    const diagnose::Diagnosis d = round_trip(w, f, o);
    EXPECT_EQ(diagnosed_kind(d), c.kind) << log_text(w, f, o);
    std::ostringstream out;
    const RunOutcome r = write_run_log(w, f, o, out);
    EXPECT_EQ(r.failure, c.kind);
    if (c.at_step == 0) {
      EXPECT_LT(r.elapsed_s, o.startup_s);  // before the first step
      EXPECT_EQ(d.steps, 0);
    } else {
      EXPECT_EQ(r.failed_at_step, c.at_step);
      EXPECT_EQ(d.steps, c.at_step - 1);
    }
    if (c.kind == "hang") {
      EXPECT_NEAR(r.elapsed_s - r.stalled_at_s, o.nccl_timeout_s, 1e-6);  // the watchdog's timeout
    }
    if (c.kind == "nccl_timeout") {
      EXPECT_NEAR(r.elapsed_s - r.stalled_at_s, 15 * p.step_time_s, 1e-6);
    }
  }
}

TEST_P(RunLogFlavour, OomsAtTheOptimizerAndLateAreDiagnosed) {
  const Workload w = workload();
  Prediction p = predict(w);
  RunOptions o = options();
  // Out of memory once the optimizer state is allocated: the first step's end.
  Prediction at_optimizer = failing(p, "oom", 1);
  at_optimizer.oom_at_optimizer = true;
  at_optimizer.memory.total_gib = p.hbm_gib + 2;
  EXPECT_EQ(diagnosed_kind(round_trip(w, at_optimizer, o)), "oom");
  std::ostringstream a;
  const RunOutcome first = write_run_log(w, at_optimizer, o, a);
  EXPECT_EQ(first.failure, "oom");
  EXPECT_NE(a.str().find("torch/optim/adam.py"), std::string::npos) << a.str();  // the optimizer allocates its state
  // A run within the risk margin: certain here, at a step past the second.
  o.oom_risk = 1;
  const diagnose::Diagnosis late = round_trip(w, p, o);
  EXPECT_EQ(diagnosed_kind(late), "oom");
  std::ostringstream b;
  const RunOutcome r = write_run_log(w, p, o, b);
  EXPECT_EQ(r.failure, "oom");
  EXPECT_GE(r.failed_at_step, 3);
  EXPECT_LE(r.failed_at_step, o.steps);
  EXPECT_EQ(late.steps, r.failed_at_step - 1);
}

TEST_P(RunLogFlavour, ANodeFailureEndsTheRunWithSlurmsLines) {
  const Workload w = workload();
  const Prediction p = predict(w);
  RunOptions o = options();
  o.noise.node_failure_per_node_hour = 3600;  // about one a second
  const diagnose::Diagnosis d = round_trip(w, p, o);
  EXPECT_EQ(diagnosed_kind(d), "node_failure");
  std::ostringstream out;
  const RunOutcome r = write_run_log(w, p, o, out);
  EXPECT_EQ(r.failure, "node_failure");
  EXPECT_LT(r.elapsed_s, o.startup_s + 60);
  EXPECT_NE(out.str().find("DUE TO NODE FAILURE"), std::string::npos);
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
