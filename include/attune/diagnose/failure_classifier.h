// FailureClassifier: decides why a run failed from its normalised log lines.
// It matches the exact failure texts of PyTorch, NCCL, Slurm, torchrun,
// Megatron, Hugging Face, torchtitan and DeepSpeed and
// picks the root cause rather than the noise it causes:
//   - an OOM or an illegal memory access anywhere beats the NCCL aborts and
//     watchdog timeouts that follow it on the other ranks;
//   - Slurm node failure / time limit beat the NCCL noise they cause;
//   - within one tier the earliest line wins (the first failing rank);
//   - a watchdog timeout after a long silence (no step line in the 50 lines
//     before it, but steps earlier), or whose collective "ran for" many step
//     times, is a hang, otherwise an nccl_timeout.
// Feed every logical line in order, step lines through feed_step() (or feed()
// and note_step()), so that hangs can be told from plain timeouts.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_map>

#include "attune/diagnose/failure.h"
#include "attune/diagnose/log_line.h"
#include "attune/diagnose/step_sample.h"

namespace attune::diagnose {

class FailureClassifier {
 public:
  void feed(const LogLine& line);
  void note_step(long line);
  // A line the step parser read as a step sample: a step line carries no
  // failure text, only NaN values, so the sample's fields decide and the text
  // scan of feed() is skipped (most lines of a log are step lines).
  void feed_step(const LogLine& line, const StepSample& sample);

  // The root cause, or nullopt when the log holds no failure signature — also
  // when the run ended early: an Unknown failure without evidence is the
  // caller's to report. When the run did not end early, Python tracebacks and
  // import errors are ignored (a finished run only logged and survived them).
  // With the run's step time known, a watchdog timeout whose collective ran
  // for more than kHangStepTimes step times is a hang too: nothing moved for
  // that long.
  std::optional<Failure> result(bool run_ended_early, std::optional<double> step_time_s = std::nullopt) const;
  static constexpr double kHangStepTimes = 20;

 private:
  static constexpr std::size_t kKinds = static_cast<std::size_t>(FailureKind::Unknown) + 1;

  void record(FailureKind kind, const LogLine& line);
  bool match_cuda(const LogLine& line);
  bool match_nccl(const LogLine& line);
  bool match_cluster(const LogLine& line);
  bool match_nan(const LogLine& line);
  void match_python(const LogLine& line);
  FailureKind classify_exception(std::string_view name, std::string_view text, int rank) const;

  std::array<std::optional<Failure>, kKinds> first_{};  // earliest line of each kind
  std::optional<Failure> conn_reset_;     // "Connection reset by peer": node failure with ncclRemoteError
  std::optional<Failure> remote_error_;   // first ncclRemoteError line
  std::optional<Failure> stuck_;          // the heartbeat monitor's "watchdog got stuck": a hang, unless a collective timed out
  std::optional<Failure> child_failed_;   // torchrun wrapper: python_error only as a last resort
  std::optional<Failure> task_exit_;      // srun/torchrun "a task exited": unknown, the very last resort
  std::optional<Failure> killed_;         // a bare "Killed": the host OOM killer, a last resort
  std::optional<Failure> pending_assert_; // an `assert` in argument validation with no AssertionError after it
  std::optional<Failure> first_overflow_; // DeepSpeed fp16 overflow, NaN once it keeps repeating
  long timeout_ran_for_ms_ = -1;          // "ran for M milliseconds" of the first NCCL timeout
  int overflow_count_ = 0;
  int overflow_rank_ = -1;  // DeepSpeed's "Rank r": count one rank, not every rank's copy
  long last_step_line_ = 0;
  long last_frame_line_ = 0;  // line of the last `File "..."` frame
  bool seen_traceback_ = false;
  std::unordered_map<int, std::string> last_frame_;  // per rank: last `File "..."` line
};

}  // namespace attune::diagnose
