// Tests of diagnose_logs() end to end on hand-written logs in the formats of
// docs/research/logs.md: step time and tokens/s/GPU read back per framework,
// step counts, and the whole-run averages kept out of the steady state.
#include "attune/diagnose/diagnosis.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace attune::diagnose {
namespace {

// Writes text to a file of its own and diagnoses it.
Diagnosis diagnose_text(const std::string& text, const DiagnoseOptions& o) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("attune_diagnosis_{}_{}_{}.log", info->test_suite_name(), info->name(),
                                static_cast<const void*>(&text));
  {
    std::ofstream out(path);
    out << text;
  }
  Diagnosis d = diagnose_logs({path.string()}, o);
  std::filesystem::remove(path);
  return d;
}

DiagnoseOptions recipe(int world, long long gbs, long long seq_len) {
  DiagnoseOptions o;
  o.world = world;
  o.global_batch = gbs;
  o.seq_len = seq_len;
  return o;
}

bool has_note(const Diagnosis& d, std::string_view part) {
  for (const auto& n : d.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

// Seconds of step n (1-based) of a run settling at 2 s: a slow first step.
double step_seconds(long n) { return n == 1 ? 20.0 : n == 2 ? 3.0 : 2.0; }

// ---------------------------------------------------------------- automodel

// train_ft's line (logs.md §4): tps is the global step's tokens over its time,
// "(x/gpu)" divides by DP·CP only. 8 GPUs as TP 2 x DP 4, 64 x 4096 tokens a step.
std::string automodel_log(int steps) {
  const double tokens = 64.0 * 4096;
  std::string log;
  for (long n = 1; n <= steps; ++n) {
    const double tps = tokens / step_seconds(n);
    log += fmt::format(
        "2026-08-10 15:48:59 | INFO | root | step {} | epoch 0 | loss {:.4f} | grad_norm 1.0000 | lr 1.00e-05 | "
        "mem 45.67 GiB | tps {:.2f}({:.2f}/gpu) | num_label_tokens {}\n",
        n, 2.0 + 1.0 / static_cast<double>(n), tps, tps / 4, static_cast<long long>(tokens));
  }
  return log;
}

TEST(DiagnoseAutomodel, JobTokensPerSecondGiveStepTimeAndPerGpuRate) {
  const Diagnosis d = diagnose_text(automodel_log(30), recipe(8, 64, 4096));
  EXPECT_EQ(d.framework, "automodel");
  EXPECT_EQ(d.steps, 30);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 2.0, 1e-4);  // 64 x 4096 tokens / tps
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu, 64.0 * 4096 / 2.0 / 8, 0.1);  // tps / world, not the per-replica figure
  EXPECT_EQ(d.throughput_source, "log");
}

TEST(DiagnoseAutomodel, WithoutTheWorldTheLogsPerReplicaFigureStandsIn) {
  const Diagnosis d = diagnose_text(automodel_log(30), recipe(0, 64, 4096));
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 2.0, 1e-4);
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu, 64.0 * 4096 / 2.0 / 4, 0.1);  // "(x/gpu)": per DP replica
  EXPECT_TRUE(has_note(d, "per-replica"));
}

TEST(DiagnoseAutomodel, WithoutTheRecipeTheRatesStillRankTheSteps) {
  const Diagnosis d = diagnose_text(automodel_log(30), DiagnoseOptions{});
  EXPECT_FALSE(d.step_time_s);  // 1/tps is no time
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu, 64.0 * 4096 / 2.0 / 4, 0.1);
  EXPECT_EQ(d.steady.samples_used, 20);  // steps 11..30
}

// ---------------------------------------------------------------- hf

// Trainer with logging_steps 1 (logs.md §7): the bar moves on, the step's dict
// follows; at the end the whole-run summary, whose runtime includes the slow
// first steps.
std::string hf_log(int steps, bool bar) {
  std::string log;
  double elapsed = 0;
  for (long n = 1; n <= steps; ++n) {
    elapsed += step_seconds(n);
    if (bar) {
      log += fmt::format("{:3d}%|{:10s}| {}/{} [00:{:02d}<00:00, {:5.2f}s/it]\n", 100 * n / steps, "", n, steps,
                         static_cast<int>(elapsed) % 60, step_seconds(n));
    }
    log += fmt::format("{{'loss': {}, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': {}}}\n",
                       2.0 + 1.0 / static_cast<double>(n), static_cast<double>(n) / 1000);
  }
  log += fmt::format(
      "{{'train_runtime': {:.4f}, 'train_samples_per_second': {:.3f}, 'train_steps_per_second': {:.3f}, "
      "'train_loss': 2.5, 'epoch': 1.0}}\n",
      elapsed, 64 * steps / elapsed, steps / elapsed);
  return log;
}

TEST(DiagnoseHf, SummaryStaysOutOfTheSteadyStateBesidePerStepSamples) {
  const Diagnosis d = diagnose_text(hf_log(30, true), recipe(8, 64, 4096));
  EXPECT_EQ(d.framework, "hf");
  EXPECT_EQ(d.steps, 30);  // the summary is not a step
  EXPECT_EQ(d.last_step, 30);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 2.0, 1e-9);  // not the whole run's 79 s / 30
  ASSERT_TRUE(d.tokens_per_s_per_gpu);
  EXPECT_NEAR(*d.tokens_per_s_per_gpu, 64.0 * 4096 / 2.0 / 8, 1e-6);
  EXPECT_EQ(d.steady.samples_used, 20);
  EXPECT_EQ(d.loss.size(), 30u);  // the run's mean train_loss is no point of the curve
  EXPECT_TRUE(has_note(d, "whole-run average"));
}

TEST(DiagnoseHf, SummaryIsUsedWhenItIsTheOnlyTimingSource) {
  // Dicts without a bar (PrinterCallback): no per-step times.
  const Diagnosis d = diagnose_text(hf_log(30, false), recipe(8, 64, 4096));
  EXPECT_EQ(d.steps, 30);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 79.0 / 30, 1e-9);  // train_runtime / steps
  EXPECT_TRUE(has_note(d, "whole-run average"));
  EXPECT_EQ(d.loss.size(), 30u);

  // The summary alone, as the train-metrics block.
  const Diagnosis alone = diagnose_text(
      "***** train metrics *****\n"
      "  epoch                    =        1.0\n"
      "  train_loss               =     1.2345\n"
      "  train_runtime            = 0:10:00.00\n"
      "  train_samples_per_second =      12.8\n"
      "  train_steps_per_second   =        0.5\n",
      recipe(8, 64, 4096));
  ASSERT_TRUE(alone.step_time_s);
  EXPECT_NEAR(*alone.step_time_s, 2.0, 1e-9);  // 600 s over 300 steps
  ASSERT_TRUE(alone.samples_per_s);
  EXPECT_NEAR(*alone.samples_per_s, 12.8, 1e-4);
  EXPECT_EQ(alone.steady.samples_used, 1);
}

// ---------------------------------------------------------------- deepspeed

// Megatron-DeepSpeed's iteration line every step and the engine's progress and
// throughput lines every steps_per_print (10) steps, just before it (logs.md §6).
TEST(DiagnoseDeepspeed, EngineLinesAreNotStepsOfTheirOwn) {
  std::string log;
  for (long n = 1; n <= 60; ++n) {
    if (n % 10 == 0) {
      log += fmt::format(
          "[2026-11-30 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step={}, skipped=0, lr=[0.0003, "
          "0.0003], mom=[(0.9, 0.95), (0.9, 0.95)]\n"
          "[2026-11-30 10:00:00,000] [INFO] [timer.py:260:stop] epoch=0/micro_step={}/global_step={}, "
          "RunningAvgSamplesPerSec=31.5, CurrSamplesPerSec=32.0, MemAllocated=30.12GB, MaxMemAllocated=60.5GB\n",
          n, n, n);
    }
    log += fmt::format(
        " iteration {:8d}/{:8d} | consumed samples: {:12d} | consumed tokens: {:12d} | elapsed time per iteration "
        "(ms): {:.1f} | learning rate: 3.000E-04 | global batch size:    64 | lm loss: 2.500000E+00 | loss scale: "
        "1.0 | actual seqlen:  4096 | number of skipped iterations:   0 | number of nan iterations:   0 | samples "
        "per second: {:.3f} | tokens per gpu per second (tgs): {:.3f} | TFLOPs: 150.00 |\n",
        n, 60, n * 64, n * 64 * 4096, step_seconds(n) * 1e3, 64 / step_seconds(n),
        64 * 4096 / step_seconds(n) / 8);
  }
  const Diagnosis d = diagnose_text(log, recipe(8, 64, 4096));
  EXPECT_EQ(d.framework, "deepspeed");
  EXPECT_EQ(d.steps, 60);  // not 66
  EXPECT_EQ(d.last_step, 60);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 2.0, 1e-9);
  ASSERT_TRUE(d.peak_allocated_gib);
  EXPECT_NEAR(*d.peak_allocated_gib, 60.5, 1e-4);  // the engine's memory still counts
}

// ---------------------------------------------------------------- nemo

// NeMo 2's ProgressPrinter prints "iteration {n-1}/{total-1}" (logs.md §3).
TEST(DiagnoseNemo, ProgressPrinterRunReportsItsLastStepOneBased) {
  std::string log;
  for (long n = 1; n <= 60; ++n) {
    log += fmt::format(
        "Training epoch 0, iteration {}/{} | lr: 3e-05 | consumed_samples: {} | global_batch_size: 64 | "
        "global_step: {} | reduced_train_loss: 2.5 | train_step_timing in s: {}\n",
        n - 1, 59, n * 64, n - 1, step_seconds(n));
  }
  const Diagnosis d = diagnose_text(log, recipe(8, 64, 4096));
  EXPECT_EQ(d.framework, "nemo");
  EXPECT_EQ(d.steps, 60);
  EXPECT_EQ(d.last_step, 60);
  ASSERT_TRUE(d.step_time_s);
  EXPECT_NEAR(*d.step_time_s, 2.0, 1e-9);
  ASSERT_FALSE(d.loss.empty());
  EXPECT_EQ(d.loss.front().first, 1);
}

TEST(Diagnosis, StepsTheLogDidNotNumberHaveNoLastStep) {
  // Bare Trainer dicts: losses, but neither step numbers nor timing.
  const Diagnosis d = diagnose_text("{'loss': 0.09, 'learning_rate': 9e-05, 'epoch': 0.38}\n"
                                    "{'loss': 0.08, 'learning_rate': 9e-05, 'epoch': 0.4}\n",
                                    DiagnoseOptions{});
  EXPECT_EQ(d.steps, 2);
  EXPECT_EQ(d.timed_steps, 0);
  EXPECT_EQ(d.last_step, 0);
  EXPECT_FALSE(d.step_time_s);
}

}  // namespace
}  // namespace attune::diagnose
