// Tests of the per-framework log parsers and detection, on fixtures written
// from the format strings in docs/research/logs.md (not copied from logs).
#include "attune/diagnose/log_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attune::diagnose {
namespace {

constexpr double kEps = 1e-9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

ParseSink run(std::string_view framework, std::string_view text) {
  auto parser = make_parser(framework);
  EXPECT_NE(parser, nullptr);
  ParseSink sink;
  long n = 0;
  for (const std::string& l : split_lines(text)) {
    LogLine line{l, ++n, -1};
    parser->feed(line, sink);
  }
  parser->finish(sink);
  return sink;
}

int count(const ParseSink& sink, Disturbance::Kind k) {
  int n = 0;
  for (const auto& d : sink.disturbances) n += d.kind == k;
  return n;
}

const PhaseTime* phase(const std::vector<PhaseTime>& phases, std::string_view name) {
  for (const auto& p : phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// ---------------------------------------------------------------- megatron
const char* kMegatronCurrent =
    " [2025-03-01 10:00:00.123456] iteration        1/    1000 | consumed samples:          256 | "
    "elapsed time per iteration (ms): 15234.5 | throughput per GPU (TFLOP/s/GPU): 120.3 | "
    "learning rate: 1.000000E-06 | global batch size:   256 | lm loss: 1.083000E+01 | "
    "loss scale: 1.0 | grad norm: 12.345 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n"
    "[Rank 0] (after 1 iterations) memory (MB) | allocated: 20480.00 | max allocated: 40960.00 | "
    "reserved: 45056.00 | max reserved: 45056.00\n"
    "[Rank 4] (after 1 iterations) memory (MB) | allocated: 10240.00 | max allocated: 51200.00 | "
    "reserved: 30720.00 | max reserved: 52224.00\n"
    "(min, max) time across ranks (ms):\n"
    "    forward-backward ...............................: (5164.84, 5177.15)\n"
    " [2025-03-01 10:00:12.000000] iteration       11/    1000 | consumed samples:         2816 | "
    "elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 456.7 | "
    "learning rate: 1.100000E-05 | global batch size:   256 | lm loss: 9.876543E+00 | "
    "load_balancing_loss: 1.010000E+00 | loss scale: 1.0 | grad norm: 3.210 | "
    "number of skipped iterations:   1 | number of nan iterations:   0 |\n"
    "saving checkpoint at iteration      11 to /ckpt in torch_dist format\n"
    "  successfully saved checkpoint from iteration      11 to /ckpt\n"
    " validation loss at iteration 11 on validation set | lm loss value: 9.5E+00 | "
    "lm loss PPL: 1.3E+04 |\n"
    "[Rank 0] (after 21 iterations) memory (MB) | allocated: 2048.00 | max allocated: 4096.00 | "
    "reserved: 8192.00 | max reserved: 8192.00\n"
    " [2025-03-01 10:00:24.000000] iteration       21/    1000 | consumed samples:         5376 | "
    "elapsed time per iteration (ms): 1230.0 | throughput per GPU (TFLOP/s/GPU): 458.0 | "
    "learning rate: 1.200000E-05 | global batch size:   256 | loss scale: 1.0 | "
    "number of skipped iterations:   0 | number of nan iterations:   2 |\n";

TEST(MegatronParser, CurrentFormatFieldsAndUnits) {
  ParseSink sink = run("megatron", kMegatronCurrent);
  ASSERT_EQ(sink.samples.size(), 3u);
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.steps_in_interval, 1);
  EXPECT_NEAR(*s.step_time_s, 15234.5 / 1000.0, kEps);
  EXPECT_FLOAT_EQ(*s.tflops_per_gpu, 120.3);
  EXPECT_FLOAT_EQ(*s.lr, 1e-6);
  EXPECT_EQ(*s.global_batch, 256);
  EXPECT_NEAR(*s.loss, 10.83, kEps);
  EXPECT_FLOAT_EQ(*s.grad_norm, 12.345);
  EXPECT_EQ(*s.skipped_iterations, 0);
  EXPECT_EQ(*s.nan_iterations, 0);
  EXPECT_FALSE(s.loss_is_nan);
  EXPECT_EQ(s.line, 1);

  const StepSample& s2 = sink.samples[1];
  EXPECT_EQ(s2.step, 11);
  EXPECT_EQ(s2.steps_in_interval, 10);  // 11 - 1
  EXPECT_NEAR(*s2.step_time_s, 1.2345, kEps);
  EXPECT_NEAR(*s2.loss, 9.876543, kEps);  // lm loss, not load_balancing_loss
  EXPECT_EQ(*s2.skipped_iterations, 1);
}

TEST(MegatronParser, AHardWrappedRecordIsRejoined) {
  // Wrapped at 86 columns by whatever copied it, with a word cut at the wrap; nsys text after it.
  ParseSink sink = run("megatron",
                       " [2025-10-02 22:52:07] iteration       10/      50 | consumed samples:         5120 |\n"
                       "elapsed time per iteration (ms): 13212.7 | learning rate: 3.000000E-04 | global batch\n"
                       "size:   512 | lm loss: 4.474437E+00 | loss scale: 1.0 | grad norm: 0.704 | number of s\n"
                       "kipped iterations:   0 | number of nan iterations:   0 |\n"
                       "Capture range started in the application.\n"
                       " [2025-10-02 22:54:30] iteration       20/      50 | consumed samples:        10240 |\n"
                       "elapsed time per iteration (ms): 14260.3 | learning rate: 2.6E-04 | global batch\n");
  ASSERT_EQ(sink.samples.size(), 2u);
  EXPECT_EQ(sink.samples[0].step, 10);
  EXPECT_EQ(sink.samples[0].line, 1);
  EXPECT_DOUBLE_EQ(*sink.samples[0].step_time_s, 13.2127);
  EXPECT_DOUBLE_EQ(*sink.samples[0].loss, 4.474437);
  EXPECT_EQ(*sink.samples[0].global_batch, 512);
  EXPECT_FALSE(sink.samples[0].skipped_iterations);  // "s kipped": not read rather than misread
  // The log ends inside the second record: it is kept as far as it goes.
  EXPECT_EQ(sink.samples[1].step, 20);
  EXPECT_DOUBLE_EQ(*sink.samples[1].step_time_s, 14.2603);
}

TEST(MegatronParser, MemoryReportMaxOverRanksInGiB) {
  ParseSink sink = run("megatron", kMegatronCurrent);
  const StepSample& s = sink.samples[0];
  // MB are MiB: 20480 MiB = 20 GiB; the max over ranks 0 and 4 is kept.
  EXPECT_FLOAT_EQ(*s.mem_allocated_gib, 20480.0 / 1024.0);
  EXPECT_FLOAT_EQ(*s.mem_max_allocated_gib, 51200.0 / 1024.0);
  EXPECT_FLOAT_EQ(*s.mem_reserved_gib, 45056.0 / 1024.0);
  EXPECT_FLOAT_EQ(*s.mem_max_reserved_gib, 52224.0 / 1024.0);
  EXPECT_NEAR(*sink.peak_mem_allocated_gib, 50.0, kEps);
  EXPECT_NEAR(*sink.peak_mem_reserved_gib, 51.0, kEps);
  EXPECT_FALSE(sink.samples[1].mem_allocated_gib.has_value());
  // The report for iteration 21 came before its iteration line.
  EXPECT_FLOAT_EQ(*sink.samples[2].mem_max_allocated_gib, 4.0);
}

TEST(MegatronParser, MissingLossWithNanIterationsIsNan) {
  ParseSink sink = run("megatron", kMegatronCurrent);
  const StepSample& s = sink.samples[2];
  EXPECT_EQ(s.step, 21);
  EXPECT_TRUE(s.loss_is_nan);
  EXPECT_FALSE(s.loss.has_value());
  EXPECT_EQ(*s.nan_iterations, 2);
  EXPECT_FALSE(s.grad_norm.has_value());
}

TEST(MegatronParser, CheckpointAndEvaluationDisturbances) {
  ParseSink sink = run("megatron", kMegatronCurrent);
  ASSERT_EQ(sink.disturbances.size(), 2u);
  EXPECT_EQ(sink.disturbances[0].kind, Disturbance::Kind::Checkpoint);
  EXPECT_EQ(sink.disturbances[0].line, 7);
  EXPECT_EQ(sink.disturbances[1].kind, Disturbance::Kind::Evaluation);
  EXPECT_NE(sink.disturbances[1].evidence.find("validation loss"), std::string::npos);
}

const char* kMegatronOld =
    " iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration "
    "(ms): 2345.6 | learning rate: 1.500E-04 | global batch size:   512 | lm loss: 7.123456E+00 | "
    "sop loss: 6.9E-01 | loss scale: 262144.0 | grad norm: 1.234 | number of skipped iterations:   "
    "0 | number of nan iterations:   0 |\n"
    "time (ms) | forward-compute: 58.16 | backward-compute: 42.66 | optimizer: 10.01\n"
    "[Rank 0] (after 100 iterations) memory (MB) | allocated: 6245.033203125 | max allocated: "
    "10000.5 | reserved: 12288.0 | max reserved: 12288.0\n"
    " iteration      200/  500000 | consumed samples:       102400 | elapsed time per iteration "
    "(ms): 2300.0 | learning rate: 1.500E-04 | global batch size:   512 | lm loss: nan | "
    "loss scale: 131072.0 | grad norm: nan | number of skipped iterations:   0 | "
    "number of nan iterations:   1 |\n";

TEST(MegatronParser, OldFormatUnroundedMemoryAndLiteralNan) {
  ParseSink sink = run("megatron", kMegatronOld);
  ASSERT_EQ(sink.samples.size(), 2u);  // the timer line is not a sample
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 100);
  EXPECT_NEAR(*s.step_time_s, 2.3456, kEps);
  EXPECT_FALSE(s.tflops_per_gpu.has_value());
  EXPECT_FLOAT_EQ(*s.lr, 1.5e-4);
  EXPECT_NEAR(*s.loss, 7.123456, kEps);
  EXPECT_FLOAT_EQ(*s.mem_allocated_gib, 6245.033203125 / 1024.0);
  const StepSample& n = sink.samples[1];
  EXPECT_EQ(n.steps_in_interval, 100);
  EXPECT_TRUE(n.loss_is_nan);
  EXPECT_FALSE(n.loss.has_value());
  ASSERT_TRUE(n.grad_norm.has_value());
  EXPECT_TRUE(*n.grad_norm != *n.grad_norm);  // grad norm kept as printed: nan
}

const char* kMegatronDeepspeed =
    " iteration      200/    1000 | consumed samples:        12800 | consumed tokens:     26214400 | "
    "elapsed time per iteration (ms): 3000.0 | learning rate: 1.000E-04 | global batch size:    64 | "
    "lm loss: 5.000000E+00 | loss scale: 1.0 | actual seqlen:  2048 | number of skipped iterations:   "
    "0 | number of nan iterations:   0 | samples per second: 21.333 | tokens per gpu per second "
    "(tgs): 2730.667 | TFLOPs: 150.25 |\n";

TEST(MegatronParser, MegatronDeepspeedExtras) {
  for (const char* fw : {"megatron", "deepspeed"}) {
    ParseSink sink = run(fw, kMegatronDeepspeed);
    ASSERT_EQ(sink.samples.size(), 1u) << fw;
    const StepSample& s = sink.samples[0];
    EXPECT_FLOAT_EQ(*s.samples_per_s, 21.333);
    EXPECT_FLOAT_EQ(*s.tokens_per_s_per_gpu, 2730.667);
    EXPECT_FLOAT_EQ(*s.tflops_per_gpu, 150.25);
    EXPECT_NEAR(*s.step_time_s, 3.0, kEps);
  }
}

// ---------------------------------------------------------------- bridge
const char* kBridge =
    "Step Time : 2.47s GPU utilization: 512.3MODEL_TFLOP/s/GPU\n"
    " [2025-08-01 12:00:00] iteration       20/     100 | consumed samples:        10240 | "
    "elapsed time per iteration (ms): 2468.9 | throughput per GPU (TFLOP/s/GPU): 500.1 | "
    "learning rate: 3.000000E-04 | global batch size:   512 | lm loss: 6.543210E+00 | "
    "loss scale: 1.0 | grad norm: 0.876 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n"
    "[Rank 0] (after 20 iterations) memory (GB) | mem-allocated-gigabytes: 30.5 | "
    "mem-active-gigabytes: 30.5 | mem-inactive-gigabytes: 1.2 | mem-reserved-gigabytes: 60.0 | "
    "mem-max-allocated-gigabytes: 55.0 | mem-max-active-gigabytes: 55 | "
    "mem-max-inactive-gigabytes: 3 | mem-max-reserved-gigabytes: 62.0 | mem-alloc-retires: 0 | "
    "mem-allocated-count: 12345\n";

TEST(MegatronTimers, MinMaxAndMaxBlocksAveragedAfterTheFirstReport) {
  const std::string iteration =
      " [2025-03-01 10:00:00] iteration       10/    1000 | consumed samples: 2560 | elapsed time per iteration "
      "(ms): 1000.0 | lm loss: 1.0E+00 |\n";
  std::string log = iteration +
                    "(min, max) time across ranks (ms):\n"
                    "    forward-backward ...............................: (900.00, 950.00)\n"
                    "    all-grads-sync .................................: (30.00, 31.00)\n" +
                    iteration +
                    "(min, max) time across ranks (ms):\n"
                    "    forward-backward ...............................: (800.00, 840.00)\n"
                    "    forward-compute ................................: (300.00, 310.00)\n"
                    "    backward-compute ...............................: (450.00, 460.00)\n"
                    "    all-grads-sync .................................: (20.00, 22.00)\n"
                    "    forward-recv ...................................: (5.00, 6.00)\n"
                    "    backward-send ..................................: (4.00, 4.50)\n"
                    "    batch-generator ................................: (1.00, 1.50)\n"
                    "    optimizer ......................................: (40.00, 41.00)\n" +
                    iteration +
                    "max time across ranks (ms):\n"
                    "    forward-backward ...............................: 860.00\n"
                    "    all-grads-sync .................................: 24.00\n" +
                    iteration;
  ParseSink sink = run("megatron", log);
  EXPECT_EQ(sink.samples.size(), 4u);  // timer lines are not steps
  EXPECT_EQ(sink.timers.reports(), 3);
  auto phases = sink.timers.phases();
  const PhaseTime* fb = phase(phases, "forward-backward");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(fb->reports, 3);
  EXPECT_DOUBLE_EQ(fb->min_ms, (800.0 + 860.0) / 2);  // first report (warm-up) left out
  EXPECT_DOUBLE_EQ(fb->max_ms, (840.0 + 860.0) / 2);
  const PhaseTime* fc = phase(phases, "forward-compute");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->reports, 1);  // only report: its own figure
  EXPECT_DOUBLE_EQ(fc->max_ms, 310.0);
  TimeBreakdown b = sink.timers.breakdown();
  EXPECT_DOUBLE_EQ(*b.total_ms, 850.0);
  EXPECT_DOUBLE_EQ(*b.compute_ms, 310.0 + 460.0);
  EXPECT_DOUBLE_EQ(*b.dp_comm_ms, (22.0 + 24.0) / 2);
  EXPECT_DOUBLE_EQ(*b.pp_comm_ms, 6.0 + 4.5);
  EXPECT_DOUBLE_EQ(*b.data_ms, 1.5);
  EXPECT_DOUBLE_EQ(*b.optimizer_ms, 41.0);
  EXPECT_DOUBLE_EQ(*b.straggler_spread, (850.0 - 830.0) / 850.0);
}

TEST(MegatronTimers, AllRanksLayoutAndOldOneLineForm) {
  ParseSink all = run("megatron",
                      "times across ranks (ms):\n"
                      "  forward-backward:\n"
                      "     rank  0: 510.00\n"
                      "     rank  1: 530.00\n"
                      "  optimizer:\n"
                      "     rank  0: 12.00\n"
                      "     rank  1: 11.00\n"
                      "saving checkpoint at iteration      10 to /ckpt\n");
  auto phases = all.timers.phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_DOUBLE_EQ(phases[0].min_ms, 510.0);
  EXPECT_DOUBLE_EQ(phases[0].max_ms, 530.0);
  EXPECT_DOUBLE_EQ(phases[1].min_ms, 11.0);
  EXPECT_EQ(count(all, Disturbance::Kind::Checkpoint), 1);  // the block ended before it

  ParseSink old = run("megatron", "time (ms) | forward-compute: 58.16 | backward-compute: 42.66 | "
                                  "allreduce: 3.10 | optimizer: 9.50 | batch-generator: 0.40\n");
  TimeBreakdown b = old.timers.breakdown();
  EXPECT_DOUBLE_EQ(*b.compute_ms, 58.16 + 42.66);
  EXPECT_DOUBLE_EQ(*b.optimizer_ms, 9.5);
  EXPECT_DOUBLE_EQ(*b.data_ms, 0.4);
  EXPECT_FALSE(b.total_ms);
}

TEST(DeepspeedTimers, WallClockBreakdownPrefersPerStepFigures) {
  ParseSink sink = run("deepspeed",
                       "[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
                       "[INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd_microstep: 20.00 | "
                       "bwd_microstep: 40.00 | bwd_inner_microstep: 30.00 | bwd_allreduce_microstep: 10.00 | "
                       "step_microstep: 5.00\n"
                       "[INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: 80.00 | bwd: 160.00 | "
                       "bwd_inner: 120.00 | bwd_allreduce: 40.00 | step: 20.00\n");
  EXPECT_EQ(sink.samples.size(), 1u);
  TimeBreakdown b = sink.timers.breakdown();
  EXPECT_DOUBLE_EQ(*b.compute_ms, 80.0 + 120.0);
  EXPECT_DOUBLE_EQ(*b.dp_comm_ms, 40.0);  // the gradient reduction overlap did not hide
  EXPECT_DOUBLE_EQ(*b.optimizer_ms, 20.0);

  ParseSink old = run("deepspeed", "time (ms) | forward_microstep: 21.5 | backward_microstep: 44.0 | "
                                   "backward_inner_microstep: 33.0 | backward_allreduce_microstep: 11.0 | "
                                   "step_microstep: 6.0\n");
  TimeBreakdown ob = old.timers.breakdown();
  EXPECT_DOUBLE_EQ(*ob.compute_ms, 21.5 + 33.0);
  EXPECT_DOUBLE_EQ(*ob.dp_comm_ms, 11.0);
}

TEST(BridgeParser, StepTimeLineAndGigabyteMemory) {
  ParseSink sink = run("bridge", kBridge);
  ASSERT_EQ(sink.samples.size(), 1u);
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 20);
  EXPECT_FLOAT_EQ(*s.tflops_per_gpu, 512.3);  // Bridge's exact interval figure wins
  EXPECT_NEAR(*s.step_time_s, 2.4689, kEps);    // the more precise elapsed ms stays
  EXPECT_FLOAT_EQ(*s.mem_allocated_gib, 30.5e9 / kGiB);  // GB = 1e9 bytes
  EXPECT_FLOAT_EQ(*s.mem_max_reserved_gib, 62.0e9 / kGiB);
  EXPECT_NEAR(*sink.peak_mem_allocated_gib, 55.0e9 / kGiB, kEps);
}

// ---------------------------------------------------------------- nemo
const char* kNemo2 =
    "Training epoch 0, iteration 119/999 | lr: 3e-05 | consumed_samples: 121 | global_batch_size: 8 "
    "| global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | "
    "TFLOPS_per_GPU: 123.4\n"
    "Training epoch 0, iteration 129/999 | lr: 3e-05 | consumed_samples: 201 | global_batch_size: 8 "
    "| global_step: 130 | reduced_train_loss: nan | train_step_timing in s: 0.0315\n"
    "Validation: iteration 1/10\n"
    "Validation: iteration 2/10\n"
    "[NeMo I 2025-01-01 00:00:00 nemo_logging:393] Step 131: train_step_timing in s=0.345\n";

TEST(NemoParser, ProgressPrinterAndDeltaTiming) {
  ParseSink sink = run("nemo", kNemo2);
  ASSERT_EQ(sink.samples.size(), 3u);
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 120);  // "iteration 119/999" is the 120th step, printed 0-based
  EXPECT_NEAR(*s.step_time_s, 0.03146, kEps);
  EXPECT_NEAR(*s.loss, 1.233, kEps);
  EXPECT_FLOAT_EQ(*s.lr, 3e-5);
  EXPECT_EQ(*s.global_batch, 8);
  EXPECT_FLOAT_EQ(*s.tflops_per_gpu, 123.4);
  EXPECT_EQ(sink.samples[1].steps_in_interval, 10);
  EXPECT_TRUE(sink.samples[1].loss_is_nan);
  EXPECT_EQ(sink.samples[2].step, 131);
  EXPECT_NEAR(*sink.samples[2].step_time_s, 0.345, kEps);
  EXPECT_EQ(count(sink, Disturbance::Kind::Evaluation), 1);  // one validation run
}

// ProgressPrinter prints "iteration {n-1}/{total-1}" after the n-th step (logs.md §3).
TEST(NemoParser, ProgressPrinterIterationsAreReportedOneBased) {
  ParseSink sink = run("nemo",
                       "Training epoch 0, iteration 0/2 | lr: 3e-05 | consumed_samples: 8 | global_batch_size: 8 | "
                       "global_step: 0 | reduced_train_loss: 2.5 | train_step_timing in s: 9.5\n"
                       "Training epoch 0, iteration 1/2 | lr: 3e-05 | consumed_samples: 16 | global_batch_size: 8 | "
                       "global_step: 1 | reduced_train_loss: 2.4 | train_step_timing in s: 1.5\n"
                       "Training epoch 0, iteration 2/2 | lr: 3e-05 | consumed_samples: 24 | global_batch_size: 8 | "
                       "global_step: 2 | reduced_train_loss: 2.3 | train_step_timing in s: 1.5\n");
  ASSERT_EQ(sink.samples.size(), 3u);
  EXPECT_EQ(sink.samples[0].step, 1);
  EXPECT_EQ(sink.samples[2].step, 3);  // the last of 3 steps
  EXPECT_EQ(sink.samples[2].steps_in_interval, 1);
}

const char* kNemo1 =
    "Epoch 0:   6%|██        | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, "
    "reduced_train_loss=2.590, global_step=3.2e+4, consumed_samples=2.56e+7, "
    "train_step_timing in s=0.73]\n"
    "Epoch 0:   6%|██        | 32041/500150 [6:28:44<94:39:17, 41.36s/it, loss=2.6, "
    "reduced_train_loss=2.580]\n"
    "Validation DataLoader 0:  50%|█████     | 5/10 [00:01<00:01,  4.00it/s]\n"
    "Validation DataLoader 0: 100%|██████████| 10/10 [00:02<00:00,  4.00it/s]\n"
    "Epoch 0, global step 32041: 'val_loss' reached 2.50000 (best 2.50000), saving model to "
    "'/ckpt/x.ckpt' as top 1\n"
    "Epoch 0:  10%|█         | 10/100 [00:30<04:30,  3.00s/it, Loss/train=2.5, Norms/grad_norm=1.1, "
    "LR/learning_rate=1e-05, Step Time=2.95, TFLOPS/GPU=410.0, Samples/Second=86.8]\n";

TEST(NemoParser, LightningProgressBars) {
  ParseSink sink = run("nemo", kNemo1);
  ASSERT_EQ(sink.samples.size(), 3u);
  EXPECT_EQ(sink.samples[0].step, 32040);
  EXPECT_NEAR(*sink.samples[0].loss, 2.590, kEps);  // reduced_train_loss over the smoothed loss
  EXPECT_NEAR(*sink.samples[0].step_time_s, 0.73, kEps);
  EXPECT_NEAR(*sink.samples[1].step_time_s, 41.36, kEps);  // tqdm rate fallback
  const StepSample& hp = sink.samples[2];  // HyperPod v1 keys
  EXPECT_NEAR(*hp.step_time_s, 2.95, kEps);
  EXPECT_FLOAT_EQ(*hp.tflops_per_gpu, 410.0);
  EXPECT_FLOAT_EQ(*hp.samples_per_s, 86.8);
  EXPECT_FLOAT_EQ(*hp.grad_norm, 1.1);
  EXPECT_FLOAT_EQ(*hp.lr, 1e-5);
  EXPECT_EQ(count(sink, Disturbance::Kind::Evaluation), 1);
  EXPECT_EQ(count(sink, Disturbance::Kind::Checkpoint), 1);
}

// ---------------------------------------------------------------- automodel
const char* kAutomodel =
    "2026-08-10 15:48:59 | INFO | root | step 13 | epoch 0 | loss 1.2345 | grad_norm 0.5000 | "
    "lr 1.00e-05 | mem 45.67 GiB | tps 123456.78(15432.10/gpu) | num_label_tokens 4096\n"
    "2026-08-10 15:49:01 | INFO | root | step 14 | epoch 0 | loss nan | grad_norm nan | "
    "lr 1.00e-05 | mem 47.00 GiB | tps 120000.00(15000.00/gpu) | num_label_tokens 4000\n"
    "2026-08-10 15:49:02 | INFO | root | Saving checkpoint to /ckpt/epoch_0_step_14\n";

TEST(AutomodelParser, KeyValueStepLines) {
  ParseSink sink = run("automodel",
                       "2026-07-26 19:37:11 | INFO | nemo_automodel.recipes.llm.train_eagle1 | epoch=0 step=1070 "
                       "loss=2.5004 acc=0.3245 lr=2.61109e-05 grad_norm=0.123 hidden_loss=1.805\n"
                       "2026-07-26 19:37:31 | INFO | nemo_automodel.recipes.llm.train_eagle1 | epoch=0 step=1080 "
                       "loss=2.4976 acc=0.3294 lr=2.6027e-05 grad_norm=0.1562 hidden_loss=1.803\n");
  ASSERT_EQ(sink.samples.size(), 2u);
  EXPECT_EQ(sink.samples[1].step, 1080);
  EXPECT_DOUBLE_EQ(*sink.samples[1].loss, 2.4976);  // not hidden_loss
  EXPECT_FLOAT_EQ(*sink.samples[1].grad_norm, 0.1562f);
  EXPECT_FALSE(sink.samples[1].step_time_s);
}

// train_ft.py's validation line carries the step it ran after: an
// evaluation, not a training step (nor its loss).
TEST(AutomodelParser, AValidationLineIsNotAStep) {
  ParseSink sink = run("automodel",
                       "2026-08-10 15:48:59 | INFO | root | step 9 | epoch 0 | loss 1.2345 | grad_norm 0.5000 | "
                       "lr 1.00e-05 | mem 45.67 GiB | tps 123456.78(15432.10/gpu) | num_label_tokens 4096\n"
                       "2026-08-10 15:49:00 | INFO | root | [val] name \"default\" | step 9 | epoch 0 | loss 1.9000 | "
                       "lr 1.00e-05 | num_label_tokens 2048\n");
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_NEAR(*sink.samples[0].loss, 1.2345, kEps);
  EXPECT_EQ(count(sink, Disturbance::Kind::Evaluation), 1);
}

TEST(AutomodelParser, StepLines) {
  ParseSink sink = run("automodel", kAutomodel);
  ASSERT_EQ(sink.samples.size(), 2u);
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 13);
  EXPECT_NEAR(*s.loss, 1.2345, kEps);
  EXPECT_FLOAT_EQ(*s.grad_norm, 0.5);
  EXPECT_FLOAT_EQ(*s.lr, 1e-5);
  EXPECT_FLOAT_EQ(*s.mem_max_allocated_gib, 45.67);
  EXPECT_FLOAT_EQ(*s.tokens_per_s, 123456.78);
  EXPECT_FLOAT_EQ(*s.tokens_per_s_per_gpu, 15432.10);  // "/gpu", per DP·CP replica: the diagnosis prefers tps / world
  EXPECT_TRUE(sink.samples[1].loss_is_nan);
  EXPECT_NEAR(*sink.peak_mem_allocated_gib, 47.0, kEps);
  EXPECT_EQ(count(sink, Disturbance::Kind::Checkpoint), 1);
}

// ---------------------------------------------------------------- torchtitan
const char* kTitan =
    "[titan] 2025-06-16 22:30:50,322 - root - INFO - step:  1  loss: 12.2500  grad_norm:  5.1234  "
    "memory: 49.66GiB(52.28%)  tps: 1,234  tflops: 71.47  mfu: 7.23%\n"
    "[titan] 2025-06-16 22:31:50,322 - root - INFO - step: 10  loss:  8.1234  grad_norm:  1.2345  "
    "memory: 50.00GiB(52.64%)  tps: 12,345  tflops: 1,234.56  mfu: 42.10%\n"
    "[titan] 2025-06-16 22:31:51,000 - root - INFO - [GC] Performing periodical GC collection 0.05 "
    "seconds\n"
    "[titan] 2025-06-16 22:31:52,000 - root - INFO - Dumping profiler traces at step 20\n"
    "[titan] 2025-06-16 22:31:53,000 - root - INFO - validate step: 20  loss: 7.0000\n"
    "[titan] 2025-06-16 22:32:50,322 - root - INFO - step: 20  loss:      nan  grad_norm:     nan  "
    "memory: 50.00GiB(52.64%)  tps: 12,000  tflops: 700.00  mfu: N/A\n";

TEST(TorchtitanParser, StepLinesAndDisturbances) {
  ParseSink sink = run("torchtitan", kTitan);
  ASSERT_EQ(sink.samples.size(), 3u);  // the validate line is not a training step
  const StepSample& s = sink.samples[1];
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(s.steps_in_interval, 9);
  EXPECT_NEAR(*s.loss, 8.1234, kEps);
  EXPECT_FLOAT_EQ(*s.tokens_per_s_per_gpu, 12345.0);
  EXPECT_FLOAT_EQ(*s.tflops_per_gpu, 1234.56);
  EXPECT_FLOAT_EQ(*s.mfu, 0.421);
  EXPECT_FLOAT_EQ(*s.mem_max_reserved_gib, 50.0);
  EXPECT_NEAR(*sink.mem_capacity_gib, 50.0 / 0.5264, 1e-9);
  const StepSample& n = sink.samples[2];
  EXPECT_TRUE(n.loss_is_nan);
  EXPECT_FALSE(n.mfu.has_value());
  EXPECT_EQ(count(sink, Disturbance::Kind::GarbageCollection), 1);
  EXPECT_EQ(count(sink, Disturbance::Kind::Profiler), 1);
  EXPECT_EQ(count(sink, Disturbance::Kind::Evaluation), 1);
}

// Every rank prints each step line (no rank prefix without torchrun's
// --tee): a step number already read is another rank's copy, in any order.
TEST(TorchtitanParser, EveryRanksCopyOfAStepIsOneStep) {
  const std::string line1 = "[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  1  loss: 10.9  memory: 40.00GiB(50.00%)  tps: 1,000  tflops: 100.00  mfu: 10.00%\n";
  const std::string line10 = "[titan] 2026-02-24 19:46:27,508 - root - INFO - step: 10  loss: 9.9  memory: 40.00GiB(50.00%)  tps: 2,000  tflops: 200.00  mfu: 20.00%\n";
  const ParseSink sink = run("torchtitan", line1 + line1 + line10 + line1 + line10 + line10);
  ASSERT_EQ(sink.samples.size(), 2u);
  EXPECT_EQ(sink.samples[0].step, 1);
  EXPECT_EQ(sink.samples[1].step, 10);
  EXPECT_EQ(sink.samples[1].steps_in_interval, 9);
}

// ---------------------------------------------------------------- deepspeed
const char* kDeepspeed =
    "[2025-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=1, "
    "lr=[0.0001, 0.0001], mom=[(0.9, 0.999)]\n"
    "[2025-01-01 00:00:00,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/global_step=10, "
    "RunningAvgSamplesPerSec=12.3, CurrSamplesPerSec=12.5, MemAllocated=3.45GB, "
    "MaxMemAllocated=5.67GB\n"
    "[2025-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=3, "
    "lr=[0.0002], mom=[(0.9, 0.999)]\n"
    "[INFO] [timer.py:181:stop] 0/30, RunningAvgSamplesPerSec=10.5, CurrSamplesPerSec=11.0, "
    "MemAllocated=1.0GB, MaxMemAllocated=2.0GB\n"
    "[INFO] [timer.py:181:stop] 0/40, SamplesPerSec=9.5\n"
    "Engine before step\n"
    "MA 1.23 GB         Max_MA 7.5 GB         CA 3.45 GB         Max_CA 9 GB \n"
    "time (ms) | fwd_microstep: 10.00 | bwd_microstep: 20.00 | step_microstep: 5.00\n"
    "[2025-01-01 00:01:00,000] [INFO] [engine.py:3000:_save_checkpoint] [Torch] Checkpoint "
    "global_step40 is about to be saved!\n";

TEST(DeepspeedParser, ProgressThroughputAndMemory) {
  ParseSink sink = run("deepspeed", kDeepspeed);
  ASSERT_EQ(sink.samples.size(), 4u);  // steps 10 (two lines merged), 20, 30, 40
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 10);
  EXPECT_EQ(*s.skipped_iterations, 1);
  EXPECT_FLOAT_EQ(*s.lr, 1e-4);
  EXPECT_FLOAT_EQ(*s.samples_per_s, 12.5);  // this step, not the running average
  EXPECT_FLOAT_EQ(*s.mem_allocated_gib, 3.45);
  EXPECT_FLOAT_EQ(*s.mem_max_allocated_gib, 5.67);
  EXPECT_EQ(*sink.samples[1].skipped_iterations, 2);  // cumulative 3 - 1
  EXPECT_EQ(sink.samples[2].step, 30);
  EXPECT_FLOAT_EQ(*sink.samples[2].samples_per_s, 11.0);
  EXPECT_EQ(sink.samples[3].step, 40);
  EXPECT_FLOAT_EQ(*sink.samples[3].samples_per_s, 9.5);
  EXPECT_NEAR(*sink.peak_mem_allocated_gib, 7.5, kEps);
  EXPECT_NEAR(*sink.peak_mem_reserved_gib, 9.0, kEps);
  EXPECT_EQ(count(sink, Disturbance::Kind::Checkpoint), 1);
}

// Megatron-DeepSpeed: the engine prints its progress and throughput lines every
// steps_per_print steps just before the iteration line of the same step.
std::string megatron_deepspeed_iteration(long it) {
  return " iteration " + std::to_string(it) +
         "/     100 | consumed samples:        12800 | consumed tokens:     26214400 | "
         "elapsed time per iteration (ms): 3000.0 | learning rate: 1.000E-04 | global batch size:    64 | "
         "lm loss: 5.000000E+00 | loss scale: 1.0 | actual seqlen:  2048 | number of skipped iterations:   "
         "0 | number of nan iterations:   0 | samples per second: 21.333 | tokens per gpu per second "
         "(tgs): 2730.667 | TFLOPs: 150.25 |\n";
}

std::string deepspeed_engine(long step) {
  const std::string n = std::to_string(step);
  return "[2025-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=" + n +
         ", skipped=0, lr=[0.0001, 0.0001], mom=[(0.9, 0.95), (0.9, 0.95)]\n"
         "[2025-01-01 00:00:00,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=" + n + "/global_step=" + n +
         ", RunningAvgSamplesPerSec=21.0, CurrSamplesPerSec=21.5, MemAllocated=3.45GB, MaxMemAllocated=5.67GB\n";
}

TEST(DeepspeedParser, EngineLinesMergeIntoMegatronDeepspeedIterations) {
  std::string log;
  for (long it = 1; it <= 20; ++it) {
    if (it % 10 == 0 && it != 20) log += deepspeed_engine(it);  // before the iteration line, as printed
    log += megatron_deepspeed_iteration(it);
    if (it == 20) log += deepspeed_engine(it);  // the other order merges too
  }
  ParseSink sink = run("deepspeed", log);
  ASSERT_EQ(sink.samples.size(), 20u);  // one sample per iteration, no extra engine samples
  for (std::size_t i = 0; i < sink.samples.size(); ++i) EXPECT_EQ(sink.samples[i].step, static_cast<long>(i) + 1);
  for (std::size_t i : {9u, 19u}) {
    const StepSample& s = sink.samples[i];
    EXPECT_NEAR(*s.step_time_s, 3.0, kEps);
    EXPECT_FLOAT_EQ(*s.samples_per_s, 21.333);  // the iteration line's own figure stays
    EXPECT_FLOAT_EQ(*s.mem_allocated_gib, 3.45);  // the engine's, merged in
    EXPECT_FLOAT_EQ(*s.mem_max_allocated_gib, 5.67);
    EXPECT_EQ(*s.skipped_iterations, 0);
  }
  EXPECT_FALSE(sink.samples[10].mem_allocated_gib.has_value());
}

// ---------------------------------------------------------------- hf
const char* kHf =
    "  5%|▌         | 50/1000 [00:30<09:30,  1.67it/s]\n"
    "{'loss': 1.5214, 'grad_norm': 82.939, 'learning_rate': 1.43e-06, 'epoch': 0.01}\n"
    "{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.02}              \n"
    "***** Running Evaluation *****\n"
    " 50%|█████     | 5/10 [00:01<00:01,  4.00it/s]\n"
    "{'eval_loss': 1.2, 'eval_runtime': 3.4, 'epoch': 0.02}\n"
    "Saving model checkpoint to out/checkpoint-20\n"
    "[2026-01-01 00:00:00] [INFO] [axolotl.core.trainers.base.log:776] [PID:1] [RANK:0] "
    "{'loss': 1.1, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'memory/max_active (GiB)': 30.1, "
    "'memory/max_allocated (GiB)': 29.5, 'memory/device_reserved (GiB)': 35.2, "
    "'tokens/train_per_sec_per_gpu': 2500.5, 'epoch': 0.1}\n"
    "{'train_runtime': 1234.5678, 'train_samples_per_second': 51.84, 'train_steps_per_second': "
    "0.81, 'train_tokens_per_second': 4321.0, 'train_loss': 1.4, 'epoch': 1.0}\n"
    "***** train metrics *****\n"
    "  train_samples_per_second =      51.84\n";

TEST(HfParser, DictsBarSummaryAndDisturbances) {
  ParseSink sink = run("hf", kHf);
  ASSERT_EQ(sink.samples.size(), 4u);
  const StepSample& s = sink.samples[0];
  EXPECT_EQ(s.step, 50);  // from the training bar
  EXPECT_NEAR(*s.step_time_s, 1.0 / 1.67, kEps);
  EXPECT_NEAR(*s.loss, 1.5214, kEps);
  EXPECT_FLOAT_EQ(*s.grad_norm, 82.939);
  EXPECT_FLOAT_EQ(*s.lr, 1.43e-6);
  const StepSample& n = sink.samples[1];
  EXPECT_EQ(n.step, 51);  // no newer bar: numbered on
  EXPECT_TRUE(n.loss_is_nan);
  EXPECT_FALSE(n.loss.has_value());
  const StepSample& ax = sink.samples[2];
  EXPECT_FLOAT_EQ(*ax.mem_max_allocated_gib, 29.5);
  EXPECT_FLOAT_EQ(*ax.mem_reserved_gib, 35.2);
  EXPECT_FLOAT_EQ(*ax.tokens_per_s_per_gpu, 2500.5);
  const StepSample& sum = sink.samples[3];
  EXPECT_NEAR(*sum.step_time_s, 1234.5678 / 1000, kEps);  // runtime over the bar's total, not 1 / 0.81
  EXPECT_EQ(sum.steps_in_interval, 1000);
  EXPECT_FLOAT_EQ(*sum.samples_per_s, 51.84);
  EXPECT_FLOAT_EQ(*sum.tokens_per_s_per_gpu, 4321.0);
  EXPECT_NEAR(*sum.loss, 1.4, kEps);
  EXPECT_EQ(count(sink, Disturbance::Kind::Evaluation), 1);  // banner + dict = one run
  EXPECT_EQ(count(sink, Disturbance::Kind::Checkpoint), 1);
}

// Axolotl prints data-preparation bars before training: the training bar is
// the one in view when the first loss dict comes, not the first bar seen.
TEST(HfParser, ABarBeforeTrainingWithAnotherTotalIsNotTheTrainingBar) {
  ParseSink sink = run("hf",
                       " 67%|######6   | 2/3 [00:01<00:00,  1.68it/s]\n"
                       " 32%|###2      | 283/873 [25:44<47:06,  4.79s/it]\n"
                       "{'loss': 0.8635, 'learning_rate': 0.000137, 'epoch': 0.97}\n"
                       " 50%|#####     | 5/10 [00:01<00:01,  4.00it/s]\n");
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_EQ(sink.samples[0].step, 283);
  EXPECT_NEAR(*sink.samples[0].step_time_s, 4.79, kEps);
}

TEST(HfParser, BarPositionsAreTimedStepsAndTheDictCompletesItsOwn) {
  // Bars before the first dict wait for it to show which bar trains (the 2/3 one is data packing).
  ParseSink sink = run("hf",
                       " 67%|######6   | 2/3 [00:01<00:00,  1.68it/s]\n"
                       " 32%|###2      | 281/873 [25:36<52:46,  5.35s/it]\n"
                       " 32%|###2      | 282/873 [25:40<49:29,  5.02s/it]\n"
                       "{'loss': 0.8635, 'learning_rate': 0.0001, 'epoch': 0.97}\n"
                       " 33%|###3      | 283/873 [25:49<45:20,  4.62s/it]\n");
  ASSERT_EQ(sink.samples.size(), 3u);
  EXPECT_EQ(sink.samples[0].step, 281);
  EXPECT_DOUBLE_EQ(*sink.samples[0].step_time_s, 5.35);
  EXPECT_FALSE(sink.samples[0].loss);
  EXPECT_EQ(sink.samples[1].step, 282);
  EXPECT_DOUBLE_EQ(*sink.samples[1].loss, 0.8635);
  EXPECT_DOUBLE_EQ(*sink.samples[1].step_time_s, 5.02);
  EXPECT_EQ(sink.samples[2].step, 283);
  EXPECT_TRUE(sink.samples[2].rate_smoothed);
}

TEST(HfParser, DictsWithoutABarHaveNoStepNumber) {
  ParseSink sink = run("hf",
                       "{'loss': 0.0923, 'grad_norm': 2.38, 'learning_rate': 9.6e-05, 'epoch': 0.38}\n"
                       "{'loss': 0.0981, 'grad_norm': 2.01, 'learning_rate': 9.6e-05, 'epoch': 0.4}\n");
  ASSERT_EQ(sink.samples.size(), 2u);
  EXPECT_TRUE(sink.samples[0].step_counted);
  EXPECT_TRUE(sink.samples[1].step_counted);
  EXPECT_FALSE(sink.samples[1].step_time_s);
}

// transformers 5 prints each float of a log dict as a '.4g' string.
TEST(HfParser, QuotedFiguresAreNumbers) {
  ParseSink sink = run("hf",
                       "  3%|3         | 1/30 [00:03<01:37,  3.36s/it]\n"
                       "{'loss': '10.98', 'grad_norm': '8.936', 'learning_rate': '6.667e-06', "
                       "'tokens/train_per_sec_per_gpu': '2.432e+04', 'tokens/total': 65536, 'epoch': '0.01'}\n");
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_EQ(sink.samples[0].step, 1);
  EXPECT_DOUBLE_EQ(*sink.samples[0].loss, 10.98);
  EXPECT_FLOAT_EQ(*sink.samples[0].grad_norm, 8.936);
  EXPECT_FLOAT_EQ(*sink.samples[0].lr, 6.667e-06);
  EXPECT_FLOAT_EQ(*sink.samples[0].tokens_per_s_per_gpu, 24320);
  EXPECT_DOUBLE_EQ(*sink.samples[0].step_time_s, 3.36);
}

TEST(HfParser, TrainMetricsBlockWithoutDict) {
  ParseSink sink = run("hf",
                       "***** train metrics *****\n"
                       "  epoch                    =        3.0\n"
                       "  train_loss               =     1.2345\n"
                       "  train_runtime            = 0:10:00.00\n"
                       "  train_samples_per_second =     12.345\n"
                       "  train_steps_per_second   =        0.5\n");
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_EQ(sink.samples[0].steps_in_interval, 300);  // 600 s * 0.5 steps/s
  EXPECT_NEAR(*sink.samples[0].step_time_s, 2.0, kEps);
  EXPECT_FLOAT_EQ(*sink.samples[0].samples_per_s, 12.345);
}

// train_steps_per_second is rounded to 3 decimals: a slow run's rounds to 0.0,
// and the step time comes from train_runtime over the training bar's total.
TEST(HfParser, SummaryStepTimeIsRuntimeOverSteps) {
  ParseSink sink = run("hf",
                       " 86%|████████▌ | 6/7 [4:45:00<47:30, 2850.00s/it]\n"
                       "{'loss': 1.25, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.86}\n"
                       "100%|██████████| 7/7 [5:33:20<00:00, 2860.00s/it]\n"
                       "{'loss': 1.2, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 1.0}\n"
                       "{'train_runtime': 20000.0, 'train_samples_per_second': 0.022, 'train_steps_per_second': 0.0, "
                       "'train_loss': 1.3, 'epoch': 1.0}\n");
  ASSERT_EQ(sink.samples.size(), 3u);
  const StepSample& sum = sink.samples[2];
  EXPECT_EQ(sum.steps_in_interval, 7);
  ASSERT_TRUE(sum.step_time_s.has_value());
  EXPECT_NEAR(*sum.step_time_s, 20000.0 / 7, 1e-9);
}

// ---------------------------------------------------------------- epochs
TEST(DataEpoch, NewEpochIsADisturbance) {
  ParseSink nemo = run("nemo",
                       "Epoch 0: 100%|██████████| 10/10 [00:10<00:00,  1.00it/s, reduced_train_loss=2.0]\n"
                       "Epoch 1:  10%|█         | 1/10 [00:01<00:09,  1.00it/s, reduced_train_loss=1.9]\n");
  ASSERT_EQ(nemo.disturbances.size(), 1u);
  EXPECT_EQ(nemo.disturbances[0].kind, Disturbance::Kind::DataEpoch);
  EXPECT_EQ(nemo.disturbances[0].line, 2);

  ParseSink am = run("automodel",
                     "step 9 | epoch 0 | loss 1.0 | tps 10.0(1.0/gpu)\n"
                     "step 10 | epoch 1 | loss 0.9 | tps 10.0(1.0/gpu)\n");
  EXPECT_EQ(count(am, Disturbance::Kind::DataEpoch), 1);

  ParseSink hf = run("hf",
                     "{'loss': 1.0, 'learning_rate': 1e-05, 'epoch': 0.95}\n"
                     "{'loss': 0.9, 'learning_rate': 1e-05, 'epoch': 1.05}\n"
                     "{'loss': 0.8, 'learning_rate': 1e-05, 'epoch': 1.15}\n");
  EXPECT_EQ(count(hf, Disturbance::Kind::DataEpoch), 1);
  EXPECT_EQ(hf.samples.size(), 3u);
  EXPECT_EQ(hf.samples[2].step, 3);  // no bar: dicts numbered one by one
}

// ---------------------------------------------------------------- factory, detection
TEST(LogParserFactory, NamesAndUnknown) {
  auto names = parser_names();
  EXPECT_EQ(names.size(), 7u);
  for (const auto& n : names) {
    auto p = make_parser(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(p->framework(), n);
  }
  EXPECT_EQ(make_parser("unknown"), nullptr);
}

TEST(DetectFramework, PicksTheRightParserForEachSnippet) {
  struct Case {
    const char* text;
    const char* framework;
  };
  const Case cases[] = {
      {kMegatronCurrent, "megatron"}, {kMegatronOld, "megatron"},
      {kMegatronDeepspeed, "deepspeed"}, {kBridge, "bridge"},
      {kNemo2, "nemo"}, {kNemo1, "nemo"},
      {kAutomodel, "automodel"}, {kTitan, "torchtitan"},
      {kDeepspeed, "deepspeed"}, {kHf, "hf"},
  };
  for (const Case& c : cases) EXPECT_EQ(detect_framework(split_lines(c.text)), c.framework) << c.text;
  EXPECT_EQ(detect_framework({"hello", "world"}), "");
}

TEST(DetectFramework, LooksAtNoMoreThan2000Lines) {
  std::vector<std::string> lines(2000, "plain text");
  lines.push_back("{'loss': 1.0, 'learning_rate': 1e-05}");
  EXPECT_EQ(detect_framework(lines), "");
}

}  // namespace
}  // namespace attune::diagnose
