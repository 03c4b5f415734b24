// Run watching: waiting for a launched run to end, on any backend, without
// ever waiting forever. watch_run() polls the run with a growing interval,
// counts its training steps by reading its log through the diagnoser's own
// parsers (StepCounter), and cancels a run that stopped making steps (a hang:
// a stuck collective, a dead data loader) or that outlived its time limit by
// more than a grace period. A Ctrl-C flag is honoured within a fraction of a
// second. The watchdog needs nothing from the backend but poll, log and
// cancel, so a Slurm job, a local child process and a mock cluster are all
// watched the same way.
//
// Not thread-safe: one thread drives a watch (the cluster is not shared).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "attune/cluster/cluster.h"
#include "attune/cluster/run.h"
#include "attune/util/clock.h"

namespace attune::diagnose {
class LogPass;
class LogReader;
}  // namespace attune::diagnose

namespace attune::cluster {

// Counts the step samples in a training log that arrives in pieces (a log
// re-read while the run writes it): feed() the appended bytes in any split —
// mid-line included — and the count is the same as for one feed of the whole
// text; after finish() it is the count the diagnoser finds in the log. It is
// the diagnoser's own reading, not a copy of it: the bytes go through a
// LogReader (rank prefixes, ANSI colours, CR progress updates, 80-column hard
// wraps; a line still without its newline is held until it gets one, or
// finish()) into a LogPass, whose provisional parse gives the count while the
// framework is still being detected (re-detected as lines arrive, up to the
// 2000-line window; 0 until some parser finds evidence) and whose decided
// parse gives it after (past the window with no evidence: Megatron, the
// diagnoser's fallback). What it counts is iterations, read from the
// iteration numbers the log prints, not lines (steps()). The parsed samples
// are kept (the parsers update the latest ones): about 100 bytes a step.
class StepCounter {
 public:
  StepCounter();
  ~StepCounter();
  StepCounter(const StepCounter&) = delete;
  StepCounter& operator=(const StepCounter&) = delete;

  // Feeds appended log text; returns the step count so far.
  long feed(std::string_view text);
  // The log is complete: a last line without a newline is counted too.
  // Further feed() calls are ignored until reset().
  long finish();
  // Forgets everything (a log that was truncated or replaced).
  void reset();

  // Iterations the log covers so far: a line that averages over N iterations
  // (Megatron's log_interval, torchtitan's log_freq) counts N; another
  // rank's copy of a step counts nothing.
  long steps() const;
  // The iteration number of the latest sample as the log prints it (0: none).
  long last_step() const;
  // The framework the steps are parsed as ("" until detected).
  std::string framework() const;

 private:
  std::unique_ptr<diagnose::LogPass> pass_;
  std::unique_ptr<diagnose::LogReader> reader_;  // feeds pass_
  bool finished_ = false;
};

struct WatchProgress {
  RunState state = RunState::Pending;
  long steps = 0;                 // step samples in the log so far (StepCounter)
  double elapsed_s = 0;           // the run's elapsed time as the cluster reports it
  double since_last_step_s = 0;   // since the last new step (before the first: since first seen
                                  // Running), in the cluster's seconds (real seconds x time_scale)
};

struct WatchOptions {
  // Poll interval: starts at poll_min_s, grows by `backoff` each wake-up up
  // to poll_max_s, and drops back to poll_min_s whenever the log grows.
  double poll_min_s = 0.5, poll_max_s = 15, backoff = 1.5;
  // A Running run is a hang when no new step arrived for
  // max(min_hang_s, hang_factor x spec.expected_step_s) (min_hang_s alone
  // when the step time is unknown, 0), plus startup_allowance_s before the
  // first step (framework start-up, compilation, data loading). The
  // start-up allowance counts from when the watch first sees the run Running,
  // and again after a requeue (Running after Pending) or a log begun anew.
  double hang_factor = 10;
  double startup_allowance_s = 900;
  double min_hang_s = 120;
  // A mock cluster's simulated seconds per real second: expected_step_s,
  // time_limit_s and the allowances above are simulated time, divided by this
  // for the real-time watchdog (<= 0 is taken as 1).
  double time_scale = 1;
  // The wait is bounded: time_limit_s/time_scale + grace_s of real time past
  // the run's start (a run with no time limit, <= 0: grace_s alone), then the
  // run is cancelled and reported Timeout. The start is when the watch first
  // sees it past Pending, less its elapsed_s then (also divided by
  // time_scale); a run still Pending is bounded the same from the watch's start.
  double grace_s = 600;
  // > 0: a measurement. Once the log shows this many steps the run has
  // measured enough: it is cancelled and reported Completed ("stopped after
  // N steps ..."), so a recipe's long training run is not paid for in full.
  long stop_after_steps = 0;
  // Polled at each wake-up (e.g. a Ctrl-C flag): true cancels the run, which
  // is reported Cancelled with reason "interrupted".
  std::function<bool()> interrupted;
  // Called when the step count or the state changes (the last call carries
  // the final state and the final count).
  std::function<void(const WatchProgress&)> on_progress;
  // The watch's time and its waits (nullptr: the real clock). A fake
  // clock runs a watch of hours in no time.
  Clock* clock = nullptr;
  // Sleeps this many seconds instead of the clock (tests that count the
  // pauses). Default: the clock's sleep, which returns early once
  // `interrupted` says true.
  std::function<void(double)> sleep;
};

// Waits until the run ends and returns its final status: the cluster's own
// as soon as a poll reports a final state (but Completed with no step in the
// log is Failed, "exited before its first step"); Hang (reason "no new step for N s
// (expected step time X s)", N in the cluster's seconds) or Timeout (past the
// bound) after cancelling it; Cancelled "interrupted" after cancelling it on
// `interrupted`; Completed "stopped after N steps: enough to measure" after
// cancelling it at stop_after_steps, with the bytes of the log read by then
// (RunStatus::measured_log_bytes). A run that ended by itself while being cancelled reports how
// it ended. elapsed_s is the cluster's, from a poll after the cancel.
// ClusterError from poll or log is retried up to 3 times with backoff, then
// rethrown.
RunStatus watch_run(Cluster& cluster, const RunId& id, const RunSpec& spec, const WatchOptions& o);

}  // namespace attune::cluster
