#include "attune/cluster/run_watch.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "attune/diagnose/log_line.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "attune/util/clock.h"

namespace attune::cluster {

// ------------------------------------------------------------ StepCounter

StepCounter::StepCounter() { reset(); }

StepCounter::~StepCounter() = default;

void StepCounter::reset() {
  reader_.reset();  // its callback names the pass it feeds
  pass_ = std::make_unique<diagnose::LogPass>("");
  reader_ = std::make_unique<diagnose::LogReader>([this](const diagnose::LogLine& l) { pass_->feed(l); });
  finished_ = false;
}

long StepCounter::feed(std::string_view text) {
  if (finished_ || text.empty()) return steps();
  reader_->feed(text);
  pass_->provisional();
  return steps();
}

long StepCounter::finish() {
  if (finished_) return steps();
  reader_->finish();
  pass_->finish();
  finished_ = true;
  return steps();
}

// Iterations, not lines: the iteration numbers the log prints (a line that
// averages over the log interval stands for all of its iterations; another
// rank's copy of a step is dropped by the parsers), so measure.steps means
// iterations whatever the log interval. The first line covers from the
// run's start: its own number when the run counts from 1 (a fresh run; the
// interval the later lines show, at most), one more when it counts from 0.
// A log that numbers no step counts its lines.
long StepCounter::steps() const {
  const diagnose::StepSeries& samples = pass_->samples_so_far();
  if (samples.empty()) return 0;
  const long first = samples.front().step, last = samples.back().step;
  if (first < 0 || last < first || (first == 0 && last == 0)) return static_cast<long>(samples.size());
  const long interval = samples.size() > 1 ? std::max(1, samples[1].steps_in_interval) : first;
  return last - first + (first == 0 ? 1 : std::min(interval, first));
}

long StepCounter::last_step() const {
  const diagnose::StepSeries& samples = pass_->samples_so_far();
  return samples.empty() ? 0 : samples.back().step;
}

std::string StepCounter::framework() const { return pass_->framework_so_far(); }

// ------------------------------------------------------------ watch_run

namespace {

constexpr int kRetries = 3;                // a failing poll/log is retried this often, then rethrown
constexpr double kMinWait_s = 0.001;       // never spin
constexpr std::size_t kLogPrefix = 4096;   // bytes kept to notice a replaced log

// "0.52", "12.3", "1234": seconds for a message.
std::string seconds_text(double s) {
  if (!std::isfinite(s)) return fmt::format("{}", s);
  if (std::fabs(s) >= 100) return fmt::format("{:.0f}", s);
  return fmt::format("{:.3g}", s);
}

double positive_or(double v, double fallback) { return std::isfinite(v) && v > 0 ? v : fallback; }

class Watch {
 public:
  Watch(Cluster& cluster, const RunId& id, const RunSpec& spec, const WatchOptions& o)
      : cluster_(cluster), id_(id), spec_(spec), o_(o), clock_(o.clock ? *o.clock : steady_clock()), t0_(clock_.now_s()) {
    scale_ = positive_or(o.time_scale, 1.0);
    poll_min_ = positive_or(o.poll_min_s, 0.5);
    poll_max_ = std::max(poll_min_, positive_or(o.poll_max_s, poll_min_));
    backoff_ = std::isfinite(o.backoff) ? std::max(1.0, o.backoff) : 1.0;
    const double limit_s = spec.time_limit_s > 0 && std::isfinite(spec.time_limit_s) ? spec.time_limit_s : 0;
    bound_span_s_ = limit_s / scale_ + std::max(0.0, o.grace_s);
    bound_at_ = bound_span_s_;
    const double expected = spec.expected_step_s > 0 && std::isfinite(spec.expected_step_s) ? spec.expected_step_s : 0;
    quiet_limit_s_ = std::max(std::max(0.0, o.min_hang_s), std::max(0.0, o.hang_factor) * expected) / scale_;
    startup_s_ = std::max(0.0, o.startup_allowance_s) / scale_;
    if (o.sleep) {
      sleep_ = o.sleep;
    } else {
      sleep_ = [this](double seconds) { clock_.sleep_s(seconds, o_.interrupted); };
    }
  }

  RunStatus run() {
    double interval = poll_min_;
    while (true) {
      if (o_.interrupted && o_.interrupted()) return stop(RunState::Cancelled, "interrupted");
      const RunStatus st = retrying([&] { return cluster_.poll(id_); });
      last_ = st;
      const double t = now();
      if (!anchored_ && st.state != RunState::Pending) {
        // The bound counts from the run's start, which its elapsed time tells.
        anchored_ = true;
        const double elapsed = std::isfinite(st.elapsed_s) ? std::max(0.0, st.elapsed_s) : 0.0;
        bound_at_ = t - elapsed / scale_ + bound_span_s_;
      }
      if (is_final(st.state)) {
        read_log(true);
        if (st.state == RunState::Completed && steps_ == 0) {
          // Exit status 0 without a measured step is no measurement: a
          // framework that logs its config error and exits 0, a recipe
          // resumed past its last step, a log attune cannot read.
          RunStatus failed = st;
          failed.state = RunState::Failed;
          failed.reason = "exited before its first step (exit status 0, no step in its log)";
          report(failed.state, failed.elapsed_s, t);
          return failed;
        }
        report(st.state, st.elapsed_s, t);
        return st;
      }
      const bool grew = read_log(false);
      // (Re)starts: first seen Running, Running again after a requeue, or a
      // log begun anew. The start-up allowance applies again until a step.
      if (st.state == RunState::Running && (!seen_running_ || previous_state_ != RunState::Running || restarted_)) {
        seen_running_ = true;
        running_since_ = t;
        any_step_ = false;
      }
      restarted_ = false;
      previous_state_ = st.state;
      if (steps_ > steps_before_) {
        last_step_at_ = t;
        any_step_ = true;
      }
      steps_before_ = steps_;
      report(st.state, st.elapsed_s, t);

      if (o_.stop_after_steps > 0 && steps_ >= o_.stop_after_steps) {
        measured_bytes_ = offset_;  // what the measurement covers; the rest is the stop's
        return stop(RunState::Completed, fmt::format("stopped after {} steps: enough to measure", steps_));
      }
      if (t >= bound_at_) return stop(RunState::Timeout, timeout_reason(t));
      double next = bound_at_;
      if (st.state == RunState::Running) {
        const double hang_at =
            any_step_ ? last_step_at_ + quiet_limit_s_ : running_since_ + startup_s_ + quiet_limit_s_;
        if (t >= hang_at) return stop(RunState::Hang, hang_reason(t));
        next = std::min(next, hang_at);
      }
      if (grew) interval = poll_min_;
      sleep_(std::max(kMinWait_s, std::min(interval, next - t)));
      interval = std::min(poll_max_, interval * backoff_);
    }
  }

 private:
  double now() const { return clock_.now_s() - t0_; }

  // Calls f, retrying a ClusterError up to kRetries times with a growing pause.
  template <class F>
  std::invoke_result_t<F&> retrying(F&& f) {
    double pause = poll_min_;
    for (int attempt = 0;; ++attempt) {
      try {
        return f();
      } catch (const ClusterError&) {
        if (attempt >= kRetries) throw;
      }
      sleep_(pause);
      pause = std::min(poll_max_, pause * std::max(backoff_, 1.5));
    }
  }

  // Reads the log and counts what is new; true when it grew. `final`: the
  // run has ended, so a last line without a newline counts too.
  bool read_log(bool final) {
    std::string text;
    try {
      text = retrying([&] { return cluster_.log(id_); });
    } catch (const ClusterError&) {
      if (final) return false;  // the run's end is known: its step count is a detail
      throw;
    }
    if (text.size() < offset_ || text.compare(0, prefix_.size(), prefix_) != 0) {
      counter_.reset();  // truncated or replaced: count again from the start
      offset_ = 0;
      prefix_.clear();
      steps_before_ = 0;
      restarted_ = true;
    }
    const bool grew = text.size() > offset_;
    if (grew) counter_.feed(std::string_view(text).substr(offset_));
    offset_ = text.size();
    if (prefix_.size() < kLogPrefix) prefix_ = text.substr(0, std::min(kLogPrefix, text.size()));
    steps_ = final ? counter_.finish() : counter_.steps();
    return grew;
  }

  void report(RunState state, double elapsed_s, double t) {
    if (reported_ && state == reported_state_ && steps_ == reported_steps_) return;
    reported_ = true;
    reported_state_ = state;
    reported_steps_ = steps_;
    if (!o_.on_progress) return;
    WatchProgress p;
    p.state = state;
    p.steps = steps_;
    p.elapsed_s = elapsed_s;
    if (seen_running_) p.since_last_step_s = (t - (any_step_ ? last_step_at_ : running_since_)) * scale_;
    o_.on_progress(p);
  }

  std::string hang_reason(double t) const {
    const double quiet = (t - (any_step_ ? last_step_at_ : running_since_)) * scale_;
    const std::string expected =
        spec_.expected_step_s > 0 ? seconds_text(spec_.expected_step_s) + " s" : std::string("unknown");
    return fmt::format("no new step for {} s (expected step time {}){}", seconds_text(quiet), expected,
                       any_step_ ? "" : ", none since the run started");
  }

  std::string timeout_reason(double t) const {
    const std::string scale = scale_ == 1 ? "" : fmt::format(" (at time scale {})", seconds_text(scale_));
    const std::string limit = spec_.time_limit_s > 0
                                  ? fmt::format("its time limit of {} s{} plus a grace of {} s",
                                                seconds_text(spec_.time_limit_s), scale, seconds_text(o_.grace_s))
                                  : fmt::format("a grace of {} s (no time limit)", seconds_text(o_.grace_s));
    if (!anchored_) return fmt::format("still pending after {} s, past {}", seconds_text(t), limit);
    return fmt::format("not finished within {}", limit);
  }

  // Cancels the run and reports `state`, unless the run ended by itself first.
  RunStatus stop(RunState state, std::string reason) {
    retrying([&] {
      cluster_.cancel(id_);
      return 0;
    });
    RunStatus after = last_;
    try {
      after = retrying([&] { return cluster_.poll(id_); });
    } catch (const ClusterError&) {
      after.state = RunState::Cancelled;  // cancelled; its elapsed time stays the last one seen
    }
    RunStatus out;
    if (is_final(after.state) && after.state != RunState::Cancelled) {
      out = after;  // it ended by itself
    } else {
      out.state = state;
      out.reason = std::move(reason);
      out.elapsed_s = after.elapsed_s;
      if (state == RunState::Completed) out.measured_log_bytes = measured_bytes_;
    }
    read_log(true);
    report(out.state, out.elapsed_s, now());
    return out;
  }

  Cluster& cluster_;
  const RunId& id_;
  const RunSpec& spec_;
  const WatchOptions& o_;
  Clock& clock_;
  const double t0_;
  std::function<void(double)> sleep_;

  double scale_ = 1, poll_min_ = 0.5, poll_max_ = 15, backoff_ = 1.5;
  double bound_span_s_ = 0;   // real seconds from the run's start to the bound
  double bound_at_ = 0;       // watch time of the bound
  double quiet_limit_s_ = 0;  // real seconds without a new step that make a hang
  double startup_s_ = 0;      // real seconds allowed before the first step, on top

  RunStatus last_;
  bool anchored_ = false;
  bool seen_running_ = false;
  bool restarted_ = false;    // the log began anew since the last wake-up
  RunState previous_state_ = RunState::Pending;
  double running_since_ = 0;
  double last_step_at_ = 0;
  bool any_step_ = false;

  StepCounter counter_;
  std::size_t offset_ = 0;
  std::size_t measured_bytes_ = 0;
  std::string prefix_;
  long steps_ = 0;
  long steps_before_ = 0;

  bool reported_ = false;
  RunState reported_state_ = RunState::Pending;
  long reported_steps_ = 0;
};

}  // namespace

RunStatus watch_run(Cluster& cluster, const RunId& id, const RunSpec& spec, const WatchOptions& o) {
  return Watch(cluster, id, spec, o).run();
}

}  // namespace attune::cluster
