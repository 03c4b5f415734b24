#include "attune/sim/run_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/diagnose/diagnosis.h"

namespace attune::sim {
namespace {

Workload llama3_8b_on_h100(const std::string& framework) {
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
                    ("attune_sim_run_" + w.plan.framework + "_" + std::to_string(o.seed) + ".log");
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

}  // namespace
}  // namespace attune::sim
