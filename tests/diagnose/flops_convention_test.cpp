// One run, read from every log format the simulator writes, gives one
// model-FLOPs figure in one stated convention (Megatron's); a framework's own
// figure in another formula (Megatron-DeepSpeed counts recompute, torchtitan
// full attention) is kept beside it under its own name (docs/diagnose.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attune/diagnose/diagnosis.h"
#include "attune/diagnose/flops.h"
#include "attune/sim/run_log.h"
#include "attune/sim/step_model.h"

namespace attune::diagnose {
namespace {

sim::Workload llama3_8b_with_recompute() {
  sim::Workload w;
  auto& m = w.model;
  m.name = "llama3-8b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn = 14336;
  m.vocab = 128256;
  auto& p = w.plan;
  p.framework = "megatron";
  p.gpu = "h100";
  p.world = 8;
  p.nodes = 1;
  p.gpus_per_node = 8;
  p.tp = 2;
  p.dp = 4;
  p.mbs = 1;
  p.gbs = 64;
  p.seq_len = 8192;
  w.knobs.recompute_granularity = "full";  // Megatron-DeepSpeed then counts a fourth pass
  return w;
}

Diagnosis read_as(const sim::Workload& w, const sim::Prediction& p, const std::string& flavour, bool model_known) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("attune_flops_convention_" + std::to_string(::getpid()) + "_" + flavour + ".log");
  {
    std::ofstream out(path);
    sim::RunOptions o;
    o.steps = 40;
    o.flavour = flavour;
    sim::write_run_log(w, p, o, out);
  }
  DiagnoseOptions d;
  d.world = w.plan.world;
  d.seq_len = w.plan.seq_len;
  d.global_batch = w.plan.gbs;
  d.gpu = w.plan.gpu;
  if (model_known) d.model = w.model;
  Diagnosis out = diagnose_logs({path.string()}, d);
  std::filesystem::remove(path);
  return out;
}

TEST(FlopsConvention, EveryLogFormatGivesTheSameModelFlops) {
  const sim::Workload w = llama3_8b_with_recompute();
  const sim::Prediction p = sim::predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  const std::string megatron = to_string(FlopsConvention::CausalHalved);
  const Diagnosis reference = read_as(w, p, "megatron", true);
  ASSERT_TRUE(reference.tflops_per_gpu);
  EXPECT_EQ(reference.flops_convention, megatron);
  for (const std::string flavour : {"bridge", "deepspeed", "torchtitan", "automodel", "hf", "nemo"}) {
    const Diagnosis d = read_as(w, p, flavour, true);
    ASSERT_TRUE(d.tflops_per_gpu) << flavour;
    EXPECT_EQ(d.flops_convention, megatron) << flavour;
    // The same run: the same figure, up to the log's rounding and its noise.
    EXPECT_NEAR(*d.tflops_per_gpu / *reference.tflops_per_gpu, 1.0, 0.02) << flavour;
    ASSERT_TRUE(d.mfu) << flavour;
    EXPECT_NEAR(*d.mfu, *d.tflops_per_gpu / *d.peak_tflops, 1e-9) << flavour;
  }
}

TEST(FlopsConvention, MegatronDeepSpeedFigureIsKeptUnderItsOwnName) {
  const sim::Workload w = llama3_8b_with_recompute();
  const sim::Prediction p = sim::predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  const Diagnosis d = read_as(w, p, "deepspeed", true);
  ASSERT_TRUE(d.tflops_per_gpu && d.logged_tflops_per_gpu);
  EXPECT_EQ(d.tflops_source, "computed");
  EXPECT_GT(*d.logged_tflops_per_gpu, *d.tflops_per_gpu * 1.3);  // recompute counted: 4 passes, not 3
  EXPECT_NE(d.logged_flops_convention.find("throughput_calculator"), std::string::npos);
  // Without the model there is no Megatron figure: the log's, named as what it is.
  const Diagnosis alone = read_as(w, p, "deepspeed", false);
  ASSERT_TRUE(alone.tflops_per_gpu);
  EXPECT_EQ(*alone.tflops_per_gpu, *alone.logged_tflops_per_gpu);
  EXPECT_EQ(alone.flops_convention, alone.logged_flops_convention);
  EXPECT_NE(alone.flops_convention, to_string(FlopsConvention::CausalHalved));
}

TEST(FlopsConvention, MegatronLogKeepsItsOwnFigure) {
  const sim::Workload w = llama3_8b_with_recompute();
  const sim::Prediction p = sim::predict(w);
  ASSERT_TRUE(p.ok) << p.error;
  const Diagnosis d = read_as(w, p, "megatron", false);
  ASSERT_TRUE(d.tflops_per_gpu);
  EXPECT_EQ(d.tflops_source, "log");
  EXPECT_EQ(d.flops_convention, to_string(FlopsConvention::CausalHalved));
  EXPECT_NEAR(*d.tflops_per_gpu / p.tflops_per_gpu, 1.0, 0.03);
}

}  // namespace
}  // namespace attune::diagnose
