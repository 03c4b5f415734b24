#include "attune/diagnose/failure_classifier.h"

#include <gtest/gtest.h>

#include <string>

#include "attune/diagnose/log_reader.h"

namespace attune::diagnose {
namespace {

// Runs the reader and the classifier like the diagnoser does; a Megatron
// iteration line stands for "a step parser recognised this line".
std::optional<Failure> classify(std::string_view text, bool ended_early = true) {
  FailureClassifier c;
  LogReader::read_text(text, [&](const LogLine& l) {
    if (l.text.find("elapsed time per iteration") != std::string_view::npos) c.note_step(l.line);
    c.feed(l);
  });
  return c.result(ended_early);
}

std::string steps(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) {
    out += " [2024-05-01 12:00:00] iteration " + std::to_string(i) +
           "/1000 | consumed samples: 1024 | elapsed time per iteration (ms): 850.2 | "
           "lm loss: 2.345678E+00 | grad norm: 1.234 | number of nan iterations:   0 |\n";
  }
  return out;
}

std::string filler(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "some unrelated output " + std::to_string(i) + "\n";
  return out;
}

const char* kNcclAbort =
    "[rank1]:[E1130 12:00:00.000000 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) "
    "Rank 1] Process group watchdog thread terminated with exception: NCCL error: remote process "
    "exited or there was a network error, NCCL version 2.21.5\n"
    "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process "
    "exiting prematurely.\n";

const char* kWatchdog =
    "[rank0]:[E1130 12:10:00.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n";

void expect_kind(const std::optional<Failure>& f, FailureKind kind) {
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(to_string(f->kind), to_string(kind)) << f->evidence;
}

TEST(FailureClassifier, TaskExitWithoutCauseIsUnknown) {
  auto f = classify(steps(1, 5) + "srun: error: gpu-node-07: task 3: Exited with exit code 1\n");
  expect_kind(f, FailureKind::Unknown);
  EXPECT_EQ(f->line, 6);
  // A cause anywhere wins over the launcher's note.
  expect_kind(classify(steps(1, 5) + "srun: error: gpu-node-07: task 3: Exited with exit code 1\n" +
                       "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"),
              FailureKind::Oom);
  // A finished run that logged a task exit (a helper process) did not fail.
  EXPECT_FALSE(classify(steps(1, 5) + "srun: error: gpu-node-07: task 3: Exited with exit code 1\n", false));
}

TEST(FailureClassifier, CleanLogHasNoFailure) {
  EXPECT_FALSE(classify(steps(1, 20)).has_value());
  EXPECT_FALSE(classify(steps(1, 20), false).has_value());
  EXPECT_FALSE(classify("").has_value());
}

TEST(FailureClassifier, OomCurrentWording) {
  auto f = classify(steps(1, 3) +
                    "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                    "GPU 2 has a total capacity of 79.10 GiB of which 1.21 GiB is free. Including "
                    "non-PyTorch memory, this process has 77.88 GiB memory in use.\n");
  expect_kind(f, FailureKind::Oom);
  EXPECT_EQ(f->line, 4);
  EXPECT_EQ(f->rank, 2);
  EXPECT_EQ(f->evidence.rfind("torch.OutOfMemoryError: CUDA out of memory.", 0), 0u);
}

TEST(FailureClassifier, OomIntermediateAndLegacyWording) {
  auto mid = classify(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
      "total capacty of 79.15 GiB of which 3.25 MiB is free.\n");
  expect_kind(mid, FailureKind::Oom);
  auto legacy = classify(
      "Traceback (most recent call last):\n"
      "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
      "capacity; 14.21 GiB already allocated; 5.19 MiB free; 14.50 GiB reserved in total by "
      "PyTorch)\n");
  expect_kind(legacy, FailureKind::Oom);
  EXPECT_EQ(legacy->line, 2);
}

TEST(FailureClassifier, OomBeforeOrAmongNcclAbortsIsTheRootCause) {
  const std::string oom = "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB.\n";
  auto before = classify(steps(1, 2) + oom + kNcclAbort + kWatchdog);
  expect_kind(before, FailureKind::Oom);
  EXPECT_EQ(before->line, 3);
  auto among = classify(steps(1, 2) + kNcclAbort + oom + kWatchdog);
  expect_kind(among, FailureKind::Oom);
  EXPECT_EQ(among->rank, 3);
}

TEST(FailureClassifier, WatchdogTimeoutRightAfterStepsIsNcclTimeout) {
  auto f = classify(steps(1, 5) + filler(3) + kWatchdog);
  expect_kind(f, FailureKind::NcclTimeout);
  EXPECT_EQ(f->line, 9);
  EXPECT_EQ(f->rank, 0);
}

TEST(FailureClassifier, TimeoutThatRanForManyStepTimesIsHang) {
  FailureClassifier c;
  LogReader::read_text(steps(1, 5) + filler(3) + kWatchdog, [&](const LogLine& l) {
    if (l.text.find("elapsed time per iteration") != std::string_view::npos) c.note_step(l.line);
    c.feed(l);
  });
  // 600021 ms is 705 steps of 0.8502 s: stuck, not slow.
  auto hang = c.result(true, 0.8502);
  expect_kind(hang, FailureKind::Hang);
  EXPECT_EQ(hang->line, 9);
  // With 60 s steps, 600 s is only 10 step times (threshold 20): a plain timeout.
  expect_kind(c.result(true, 60.0), FailureKind::NcclTimeout);
  expect_kind(c.result(true), FailureKind::NcclTimeout);
}

TEST(FailureClassifier, WatchdogTimeoutAfterLongSilenceIsHang) {
  auto f = classify(steps(1, 5) + filler(60) + kWatchdog);
  expect_kind(f, FailureKind::Hang);
  EXPECT_EQ(f->line, 66);
}

TEST(FailureClassifier, WatchdogTimeoutWithoutAnyStepIsNcclTimeout) {
  expect_kind(classify(filler(100) + kWatchdog), FailureKind::NcclTimeout);
}

TEST(FailureClassifier, NcclSystemError) {
  auto f = classify(steps(1, 2) +
                    "[rank5]: torch.distributed.DistBackendError: NCCL error in: "
                    "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system "
                    "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
                    "[rank5]: ncclSystemError: System call (e.g. socket, malloc) or external library "
                    "call failed or device error.\n" +
                    kWatchdog);
  expect_kind(f, FailureKind::NcclError);
  EXPECT_EQ(f->line, 3);
  EXPECT_EQ(f->rank, 5);
}

TEST(FailureClassifier, OldNcclErrorAndRemoteErrorAlone) {
  expect_kind(classify("RuntimeError: NCCL error in: /opt/NCCLUtils.hpp:82, invalid argument, "
                       "NCCL version 2.4.8\n"),
              FailureKind::NcclError);
  expect_kind(classify(kNcclAbort), FailureKind::NcclError);
}

TEST(FailureClassifier, RemoteErrorWithConnectionResetIsNodeFailure) {
  auto f = classify(steps(1, 2) +
                    "[rank9]: NET/IB : Got completion with error 12, opcode 0, len 0, "
                    "Connection reset by peer (host node17)\n" +
                    kNcclAbort);
  expect_kind(f, FailureKind::NodeFailure);
  EXPECT_EQ(f->line, 3);
}

TEST(FailureClassifier, HeartbeatConnectionResetIsNotNodeFailure) {
  auto f = classify(std::string(kNcclAbort) +
                    "[rank0]:[W1130 ProcessGroupNCCL.cpp:1283] Failed to get exception dump flag "
                    "from the global store.Connection reset by peer\n");
  expect_kind(f, FailureKind::NcclError);
}

TEST(FailureClassifier, IllegalMemoryAccessInWatchdogBeatsNcclErrors) {
  auto f = classify(steps(1, 2) + kNcclAbort +
                    "[rank4]:[E1130 12:00:01.000000 ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) "
                    "Rank 4] Process group watchdog thread terminated with exception: CUDA error: an "
                    "illegal memory access was encountered\n"
                    "CUDA kernel errors might be asynchronously reported at some other API call, so "
                    "the stacktrace below might be incorrect.\n" +
                    kWatchdog);
  expect_kind(f, FailureKind::IllegalMemoryAccess);
  EXPECT_EQ(f->line, 5);
  EXPECT_EQ(f->rank, 4);
}

TEST(FailureClassifier, MegatronNanSignatures) {
  expect_kind(classify(steps(1, 2) +
                       "[rank0]: RuntimeError: Rank 0, node gpu01, device 0, iteration 3: Unexpected "
                       "result nan (message='found NaN in local grad norm for bucket #0 in backward "
                       "pass before data-parallel communication collective')\n"),
              FailureKind::Nan);
  expect_kind(classify("AssertionError: Rank 1: Found NaN in local grad norm in backward pass before "
                       "data-parallel communication collective. Device: 1, node: gpu01\n"),
              FailureKind::Nan);
  auto grad = classify(steps(1, 2) +
                       " [2024-05-01 12:00:00] iteration 3/1000 | elapsed time per iteration (ms): "
                       "850.0 | loss scale: 1.0 | grad norm: nan | number of skipped iterations:   0 |\n");
  expect_kind(grad, FailureKind::Nan);
  EXPECT_EQ(grad->line, 3);
  expect_kind(classify(" iteration 3/1000 | elapsed time per iteration (ms): 850.0 | loss scale: "
                       "1.0 | number of skipped iterations:   0 | number of nan iterations:   4 |\n"),
              FailureKind::Nan);
}

TEST(FailureClassifier, HuggingFaceTorchtitanNan) {
  expect_kind(classify("{'loss': 1.52, 'grad_norm': 82.9, 'learning_rate': 1e-05, 'epoch': 0.01}\n"
                       "{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.02}\n"),
              FailureKind::Nan);
  auto titan = classify("[titan] 2024-05-01 12:00:00,000 - root - INFO - step:  1  loss: 12.2310  "
                        "memory: 49.66GiB(52.28%)  tps: 1,234\n"
                        "[titan] 2024-05-01 12:00:10,000 - root - INFO - step: 10  loss:      nan  "
                        "memory: 49.66GiB(52.28%)  tps: 1,234\n");
  expect_kind(titan, FailureKind::Nan);
  EXPECT_EQ(titan->line, 2);
  EXPECT_FALSE(classify("{'loss': 0.9, 'grad_norm': 1.5, 'nanosecond_field': 3}\n").has_value());
}

std::string overflows(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < 4; ++r) {
      out += "[2024-05-01 12:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
             "OVERFLOW! Rank " + std::to_string(r) + " Skipping step. Attempted loss scale: " +
             std::to_string(65536 >> i) + ", reducing to " + std::to_string(65536 >> (i + 1)) + "\n";
    }
  }
  return out;
}

TEST(FailureClassifier, DeepSpeedOverflowOnlyWhenRepeated) {
  EXPECT_FALSE(classify(overflows(5)).has_value());  // 20 lines, but only 5 per rank: calibration
  auto f = classify(filler(2) + overflows(16));
  expect_kind(f, FailureKind::Nan);
  EXPECT_EQ(f->line, 3);  // evidence is the first overflow
}

TEST(FailureClassifier, SlurmNodeFailureAndSigkill) {
  auto slurm = classify(std::string(kNcclAbort) +
                        "slurmstepd: error: *** STEP 4242.0 ON gpu017 CANCELLED AT "
                        "2024-05-01T12:00:00 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n");
  expect_kind(slurm, FailureKind::NodeFailure);
  EXPECT_EQ(slurm->line, 3);
  // SIGKILL names no sender (OOM killer, scheduler, user): a failure of unknown cause.
  expect_kind(classify("  exitcode  : -9 (pid: 12345)\n"), FailureKind::Unknown);
  expect_kind(classify("  traceback : Signal 9 (SIGKILL) received by PID 12345\n"),
              FailureKind::Unknown);
  EXPECT_FALSE(classify("  exitcode  : -91 (pid: 12345)\n").has_value());
}

TEST(FailureClassifier, SlurmTimeLimitBeatsNcclNoise) {
  auto f = classify(steps(1, 3) + "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
                    "slurmstepd: error: *** JOB 123456 ON node001 CANCELLED AT 2024-05-01T12:00:00 DUE "
                    "TO TIME LIMIT ***\n" +
                    kNcclAbort + kWatchdog);
  expect_kind(f, FailureKind::TimeLimit);
  EXPECT_EQ(f->line, 5);
  expect_kind(classify("slurmstepd: error: *** STEP 77.0 CANCELLED AT 2019-01-01T00:00:00 DUE TO "
                       "TIME LIMIT ***\n"),
              FailureKind::TimeLimit);
}

TEST(FailureClassifier, InvalidArgumentSignatures) {
  expect_kind(classify("usage: pretrain_gpt.py [-h] [--num-layers NUM_LAYERS]\n"
                       "pretrain_gpt.py: error: unrecognized arguments: --bogus-flag\n"),
              FailureKind::InvalidArgument);
  expect_kind(classify("pretrain_gpt.py: error: argument --num-layers: invalid int value: 'x'\n"),
              FailureKind::InvalidArgument);
  auto div = classify("0: Traceback (most recent call last):\n"
                      "0:   File \"/workspace/megatron/training/arguments.py\", line 998, in validate_args\n"
                      "0: AssertionError: Number of layers should be divisible by the "
                      "pipeline-model-parallel size\n");
  expect_kind(div, FailureKind::InvalidArgument);
  EXPECT_EQ(div->line, 3);
  EXPECT_EQ(div->rank, 0);
  expect_kind(classify("Traceback (most recent call last):\n"
                       "  File \"/usr/lib/python3/transformers/training_args.py\", line 1500, in "
                       "__post_init__\n"
                       "ValueError: --load_best_model_at_end requires the save and eval strategy to "
                       "match\n"),
              FailureKind::InvalidArgument);
}

TEST(FailureClassifier, ImportErrors) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/workspace/pretrain_gpt.py\", line 8, in <module>\n"
      "    import transformer_engine\n"
      "ModuleNotFoundError: No module named 'transformer_engine'\n";
  auto f = classify(log);
  expect_kind(f, FailureKind::ImportError);
  EXPECT_EQ(f->line, 4);
  expect_kind(classify("Traceback (most recent call last):\nImportError: cannot import name "
                       "'get_batch' from 'megatron.training' (/w/megatron/training/__init__.py)\n"),
              FailureKind::ImportError);
  // A run that finished only logged the import problem and survived it.
  EXPECT_FALSE(classify(log, false).has_value());
  // An exception line without a traceback is ordinary text.
  EXPECT_FALSE(classify("ModuleNotFoundError: No module named 'apex'\n").has_value());
}

TEST(FailureClassifier, OtherPythonError) {
  auto f = classify(steps(1, 2) +
                    "[rank0]: Traceback (most recent call last):\n"
                    "[rank0]:   File \"/workspace/train.py\", line 10, in <module>\n"
                    "[rank0]: KeyError: 'input_ids'\n");
  expect_kind(f, FailureKind::PythonError);
  EXPECT_EQ(f->evidence, "KeyError: 'input_ids'");
  EXPECT_EQ(f->line, 5);
}

TEST(FailureClassifier, InterleavedTracebacksPickTheEarliest) {
  auto f = classify(
      "0: Traceback (most recent call last):\n"
      "1: Traceback (most recent call last):\n"
      "1:   File \"/workspace/megatron/core/model.py\", line 5, in build\n"
      "0:   File \"/workspace/megatron/core/model.py\", line 5, in build\n"
      "1: RuntimeError: shape mismatch on rank one\n"
      "0: RuntimeError: shape mismatch on rank zero\n");
  expect_kind(f, FailureKind::PythonError);
  EXPECT_EQ(f->line, 5);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->evidence, "RuntimeError: shape mismatch on rank one");
}

TEST(FailureClassifier, ChildFailedErrorIsOnlyALastResort) {
  const std::string wrapper =
      "Traceback (most recent call last):\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n";
  // On its own it says a child died, not why: unknown, at its line.
  auto alone = classify(wrapper);
  expect_kind(alone, FailureKind::Unknown);
  EXPECT_EQ(alone->line, 2);
  auto bare = classify("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n");
  expect_kind(bare, FailureKind::Unknown);
  EXPECT_EQ(bare->line, 1);
  auto behind = classify("Traceback (most recent call last):\nKeyError: 'x'\n" + wrapper);
  EXPECT_EQ(behind->line, 2);
  EXPECT_EQ(behind->evidence, "KeyError: 'x'");
}

TEST(FailureClassifier, CommandNotFound) {
  auto sh = classify("Initializing distributed tasks\n/bin/sh: 1: torchrun: not found\n");
  expect_kind(sh, FailureKind::CommandNotFound);
  EXPECT_EQ(sh->line, 2);
  expect_kind(classify("./run.sh: line 14: accelerate: command not found\n"), FailureKind::CommandNotFound);
  // The traceback of the wrapper that ran the missing command is its consequence.
  auto behind = classify("sh: 1: /env/bin/torchrun: not found\nTraceback (most recent call last):\n"
                         "  File \"run.py\", line 3, in <module>\nRuntimeError: command failed\n");
  expect_kind(behind, FailureKind::CommandNotFound);
  EXPECT_EQ(behind->line, 1);
}

TEST(FailureClassifier, HostOomKillerAndCrashes) {
  expect_kind(classify("[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:1kB\n"),
              FailureKind::Oom);
  expect_kind(classify("x:1:2 [0] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n"),
              FailureKind::Oom);
  expect_kind(classify("Loading checkpoint shards:  38%|###   | 3/8 [00:02<00:03,  1.28it/s]\nKilled\n"),
              FailureKind::Oom);
  // "Killed" after a launcher reported a task exit is the clean-up of the other tasks.
  auto cleanup = classify("srun: error: node1: task 5: Exited with exit code 1\nsrun: error: node1: task 1: Killed\n");
  expect_kind(cleanup, FailureKind::Unknown);
  EXPECT_EQ(cleanup->line, 1);
  expect_kind(classify("  traceback : Signal 11 (SIGSEGV) received by PID 6421\n"), FailureKind::Unknown);
  expect_kind(classify("Segmentation fault (core dumped)\n"), FailureKind::Unknown);
}

TEST(FailureClassifier, TracebackFragments) {
  // An excerpt that starts inside the traceback: its frames are enough.
  auto mid = classify("  File \"/env/accelerate/state.py\", line 193, in __init__\n    raise ImportError(\n"
                      "ImportError: DeepSpeed is not available\n");
  expect_kind(mid, FailureKind::ImportError);
  EXPECT_EQ(mid->line, 3);
  expect_kind(classify("in <module> class TELinear(te.pytorch.Linear):\n"
                       "AttributeError: module 'transformer_engine' has no attribute 'pytorch'\n"),
              FailureKind::ImportError);
  auto flat = classify("Traceback (most recent call last):   File \"a.py\", line 1, in <module>     import x "
                       "ModuleNotFoundError: No module named 'x'\n");
  expect_kind(flat, FailureKind::ImportError);
  // The failing assert of argument validation, when the AssertionError line is cut off.
  auto assert_line = classify("Traceback (most recent call last):\n"
                              "  File \"/w/megatron/arguments.py\", line 213, in parse_args\n"
                              "    assert args.encoder_seq_length is not None\n");
  expect_kind(assert_line, FailureKind::InvalidArgument);
  EXPECT_EQ(assert_line->line, 3);
}

TEST(FailureClassifier, EvidenceIsTruncated) {
  auto f = classify("RuntimeError: CUDA out of memory. " + std::string(1000, 'z') + "\n");
  expect_kind(f, FailureKind::Oom);
  EXPECT_EQ(f->evidence.size(), 300u);
}

TEST(FailureKindNames, AllKindsHaveTheirName) {
  EXPECT_EQ(to_string(FailureKind::Oom), "oom");
  EXPECT_EQ(to_string(FailureKind::NcclTimeout), "nccl_timeout");
  EXPECT_EQ(to_string(FailureKind::NcclError), "nccl_error");
  EXPECT_EQ(to_string(FailureKind::IllegalMemoryAccess), "illegal_memory_access");
  EXPECT_EQ(to_string(FailureKind::Nan), "nan");
  EXPECT_EQ(to_string(FailureKind::Hang), "hang");
  EXPECT_EQ(to_string(FailureKind::NodeFailure), "node_failure");
  EXPECT_EQ(to_string(FailureKind::TimeLimit), "time_limit");
  EXPECT_EQ(to_string(FailureKind::InvalidArgument), "invalid_argument");
  EXPECT_EQ(to_string(FailureKind::ImportError), "import_error");
  EXPECT_EQ(to_string(FailureKind::PythonError), "python_error");
  EXPECT_EQ(to_string(FailureKind::CommandNotFound), "command_not_found");
  EXPECT_EQ(to_string(FailureKind::Unknown), "unknown");
}

}  // namespace
}  // namespace attune::diagnose
