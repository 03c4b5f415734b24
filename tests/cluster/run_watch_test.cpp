#include "attune/cluster/run_watch.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/cluster/local/local_cluster.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "cluster_test_launch.h"
#include "process_probe.h"

namespace attune::cluster {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Megatron-LM's training_log line, as src/sim/run_log.cpp writes it.
std::string megatron_line(long n, long total, double step_ms = 1234.5) {
  return fmt::format(
      " [2026-11-30 10:00:{:02d}] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration "
      "(ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): 400.1 | learning rate: 3.000000E-04 | global batch size: "
      "  128 | lm loss: {:.6E} | loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of "
      "nan iterations:   0 |",
      n % 60, n, total, n * 128, step_ms, 10.5 - 0.01 * static_cast<double>(n));
}

// A log as torchrun prints it: rank prefixes, start-up chatter, memory reports.
std::string megatron_log(long steps, long total) {
  std::string log = "[rank0]: > building GPT model ...\n[rank0]: > compiling dataset index builder ...\n";
  for (long n = 1; n <= steps; ++n) {
    log += "[rank7]: " + megatron_line(n, total) + "\n";
    if (n <= 2)
      log += fmt::format(
          "[rank0]: [Rank 0] (after {} iterations) memory (MB) | allocated: 20480.00 | max allocated: 40960.00 | "
          "reserved: 51200.00 | max reserved: 51200.00\n",
          n);
  }
  return log;
}

// What the diagnoser itself counts in `text`.
long diagnoser_steps(const std::string& text) {
  diagnose::LogPass pass("");
  diagnose::LogReader::read_text(text, [&](const diagnose::LogLine& l) { pass.feed(l); });
  pass.finish();
  return static_cast<long>(pass.sink().samples.size());
}

// ---------------------------------------------------------------- StepCounter

TEST(StepCounterTest, ChunkedFeedingCountsWhatTheDiagnoserCounts) {
  std::string log = megatron_log(40, 100);
  log += "\x1b[32m[rank7]: " + megatron_line(41, 100) + "\x1b[0m\r\n";  // colour, CRLF
  log += "[rank7]: " + megatron_line(42, 100);                          // no newline yet
  const long expected = diagnoser_steps(log);
  ASSERT_EQ(expected, 42);

  StepCounter whole;
  EXPECT_EQ(whole.feed(log), 41);  // the last line has no newline: not yet a line
  EXPECT_EQ(whole.finish(), expected);
  EXPECT_EQ(whole.framework(), "megatron");
  EXPECT_EQ(whole.last_step(), 42);

  std::mt19937 rng(7);
  for (const std::size_t max_chunk : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{200}}) {
    StepCounter c;
    std::size_t at = 0;
    long before = 0;
    while (at < log.size()) {
      const std::size_t n = std::min(log.size() - at, 1 + rng() % max_chunk);
      const long now = c.feed(std::string_view(log).substr(at, n));
      EXPECT_GE(now, before);  // never goes back
      before = now;
      at += n;
    }
    EXPECT_EQ(c.steps(), 41) << "chunks up to " << max_chunk;
    EXPECT_EQ(c.finish(), expected) << "chunks up to " << max_chunk;
    EXPECT_EQ(c.feed("[rank7]: " + megatron_line(43, 100) + "\n"), expected);  // finished: ignored
  }
}

TEST(StepCounterTest, NoFrameworkYetMeansNoSteps) {
  StepCounter c;
  EXPECT_EQ(c.feed("starting up\nloading data\n"), 0);
  EXPECT_EQ(c.framework(), "");
  EXPECT_EQ(c.last_step(), 0);
  EXPECT_EQ(c.feed(megatron_line(1, 10) + "\n" + megatron_line(2, 10) + "\n"), 2);
  EXPECT_EQ(c.framework(), "megatron");
  c.reset();
  EXPECT_EQ(c.steps(), 0);
  EXPECT_EQ(c.framework(), "");
  EXPECT_EQ(c.feed(megatron_line(5, 10) + "\n"), 5);  // a fresh run's fifth iteration: five done
  EXPECT_EQ(c.last_step(), 5);
}

// measure.steps counts iterations: a line every 10 iterations stands for 10,
// and every rank's copy of a torchtitan step counts once.
TEST(StepCounterTest, IterationsNotLines) {
  StepCounter megatron;
  std::string log;
  for (long n = 10; n <= 50; n += 10) log += "[rank7]: " + megatron_line(n, 100) + "\n";
  EXPECT_EQ(megatron.feed(log), 50);

  StepCounter titan;
  std::string ranks;
  for (int step = 1; step <= 6; ++step) {
    for (int rank = 0; rank < 8; ++rank)
      ranks += fmt::format("[rank{}]:[titan] 2026-12-03 10:00:0{},000 - root - INFO - step: {}  loss:  9.1000  memory: "
                           "40.00GiB(50.00%)  tps: 5,000  tflops: 300.00  mfu: 30.00%\n",
                           rank, step, step);
  }
  EXPECT_EQ(titan.feed(ranks), 6);
  EXPECT_EQ(titan.framework(), "torchtitan");

  StepCounter automodel_like;  // counts from 0: steps 0..4 are five
  std::string zero;
  for (int step = 0; step <= 4; ++step) zero += megatron_line(step, 100) + "\n";
  EXPECT_EQ(automodel_like.feed(zero), 5);
}

TEST(StepCounterTest, PastTheDetectionWindowCountsLikeTheDiagnoser) {
  std::string log;
  for (int i = 0; i < 2100; ++i) log += fmt::format("warmup line {}\n", i);  // no evidence in the window
  for (long n = 1; n <= 30; ++n) log += megatron_line(n, 30) + "\n";
  StepCounter c;
  for (std::size_t at = 0; at < log.size(); at += 4096) c.feed(std::string_view(log).substr(at, 4096));
  EXPECT_EQ(c.framework(), "megatron");  // the diagnoser's fallback
  EXPECT_EQ(c.finish(), diagnoser_steps(log));
  EXPECT_EQ(c.steps(), 30);

  std::string busy;  // a long Megatron log: the window closes on evidence
  for (long n = 1; n <= 2500; ++n) busy += "[rank3]: " + megatron_line(n, 2500) + "\n";
  StepCounter d;
  for (std::size_t at = 0; at < busy.size(); at += 65536) d.feed(std::string_view(busy).substr(at, 65536));
  EXPECT_EQ(d.finish(), 2500);
  EXPECT_EQ(d.finish(), diagnoser_steps(busy));
}

// ---------------------------------------------------------------- watch_run on a real LocalCluster

class RunWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_run_watch_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    options_.poll_min_s = 0.02;
    options_.poll_max_s = 0.1;
    options_.min_hang_s = 0.5;
    options_.startup_allowance_s = 0.5;
    options_.grace_s = 5;
    options_.on_progress = [this](const WatchProgress& p) { progress_.push_back(p); };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A run of `command` prepared for the local cluster from an approved recipe
  // (a 10 s time limit unless `t` says).
  Launch launch(const std::string& name, std::vector<std::string> command, TestRun t = {}) {
    t.command = std::move(command);
    return test_launch(dir_, name, test_cluster("local", "local"), t);
  }
  // The spec the scripted cluster's runs are watched with (nothing is launched).
  RunSpec spec(const std::string& name, std::vector<std::string> command) {
    RunSpec s;
    s.name = name;
    s.gpus_per_node = 1;
    s.time_limit_s = 10;
    s.log_path = (dir_ / (name + ".log")).string();
    s.command = std::move(command);
    return s;
  }

  // A command printing `steps` Megatron iteration lines, `pause` seconds
  // apart, then running `then` (a shell command).
  std::vector<std::string> printer(long steps, double pause, const std::string& then) {
    const auto lines = dir_ / fmt::format("lines_{}.txt", ++scripts_);
    std::ofstream out(lines);
    out << "> initializing torch distributed ...\n";
    for (long n = 1; n <= steps; ++n) out << megatron_line(n, 100) << "\n";
    out.close();
    return {"/bin/sh", "-c",
            fmt::format("while IFS= read -r l; do printf '%s\\n' \"$l\"; sleep {}; done < '{}'; {}", pause,
                        lines.string(), then)};
  }

  long last_steps() const { return progress_.empty() ? -1 : progress_.back().steps; }

  std::filesystem::path dir_;
  int scripts_ = 0;
  LocalCluster cluster_{LocalClusterOptions{.kill_grace_s = 0.2, .kill_wait_s = 1.0}};
  WatchOptions options_;
  std::vector<WatchProgress> progress_;
};

TEST_F(RunWatchTest, CompletedRunReportsItsStepsAsTheyCome) {
  const Launch l = launch("ok", printer(5, 0.08, "exit 0"));
  const RunSpec& s = l.spec();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back().state, RunState::Completed);
  EXPECT_EQ(last_steps(), 5);
  // The callback saw the count grow, never shrink, and was called only on changes.
  std::vector<long> counts;
  for (std::size_t i = 0; i < progress_.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(progress_[i].steps, progress_[i - 1].steps);
      EXPECT_TRUE(progress_[i].steps != progress_[i - 1].steps || progress_[i].state != progress_[i - 1].state);
    }
    if (counts.empty() || counts.back() != progress_[i].steps) counts.push_back(progress_[i].steps);
  }
  EXPECT_GE(counts.size(), 3u) << "steps seen: " << fmt::format("{}", fmt::join(counts, ","));
}

TEST_F(RunWatchTest, StepsThatStopAreAHangAndTheRunIsKilled) {
  TestRun t;
  t.expected_step_s = 0.01;  // x hang_factor 10 = 0.1 s: min_hang_s (0.5 s) wins
  const Launch l = launch("stuck", printer(3, 0.02, "exec sleep 60"), t);
  const RunSpec& s = l.spec();
  const auto start = Clock::now();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  const double took = seconds_since(start);
  EXPECT_EQ(st.state, RunState::Hang) << st.reason;
  EXPECT_EQ(st.reason.rfind("no new step for 0.", 0), 0u) << st.reason;
  EXPECT_NE(st.reason.find("(expected step time 0.01 s)"), std::string::npos) << st.reason;
  EXPECT_GT(took, 0.5);
  EXPECT_LT(took, 2.0);
  EXPECT_GT(st.elapsed_s, 0.5);  // the cancelled run's own elapsed time
  EXPECT_LT(st.elapsed_s, 2.0);
  EXPECT_EQ(last_steps(), 3);
  EXPECT_EQ(progress_.back().state, RunState::Hang);
  EXPECT_FALSE(running(std::stoi(id.id)));
  EXPECT_EQ(cluster_.poll(id).state, RunState::Cancelled);
}

// A measurement needs only so many steps: past them the run is stopped and
// counts as completed, however long the recipe would train.
TEST_F(RunWatchTest, AMeasurementStopsTheRunAfterItsSteps) {
  const Launch l = launch("measure", printer(40, 0.03, "exec sleep 60"));
  const RunSpec& s = l.spec();
  options_.stop_after_steps = 4;
  const auto start = Clock::now();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_EQ(st.reason.rfind("stopped after ", 0), 0u) << st.reason;
  EXPECT_GE(last_steps(), 4);
  EXPECT_LT(last_steps(), 40);
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_FALSE(running(std::stoi(id.id)));
  EXPECT_EQ(cluster_.poll(id).state, RunState::Cancelled);  // the cluster's own word: cancelled
}

TEST_F(RunWatchTest, ExpectedStepTimeSetsTheHangLimit) {
  TestRun t;
  t.expected_step_s = 0.1;  // x 10 = 1 s, above min_hang_s
  const Launch l = launch("slow", printer(2, 0.02, "exec sleep 60"), t);
  const RunSpec& s = l.spec();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  EXPECT_EQ(st.state, RunState::Hang) << st.reason;
  EXPECT_EQ(st.reason.rfind("no new step for 1", 0), 0u) << st.reason;
  EXPECT_GT(st.elapsed_s, 1.0);
  EXPECT_LT(st.elapsed_s, 2.5);
  EXPECT_GE(progress_.back().since_last_step_s, 1.0);
}

TEST_F(RunWatchTest, ARunThatNeverPrintsHangsAfterTheStartUpAllowance) {
  const Launch l = launch("silent", {"/bin/sh", "-c", "exec sleep 60"});
  const RunSpec& s = l.spec();
  const auto start = Clock::now();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  const double took = seconds_since(start);
  EXPECT_EQ(st.state, RunState::Hang) << st.reason;
  EXPECT_NE(st.reason.find("expected step time unknown"), std::string::npos) << st.reason;
  EXPECT_NE(st.reason.find("none since the run started"), std::string::npos) << st.reason;
  EXPECT_GT(took, 1.0);  // start-up allowance 0.5 s + min_hang_s 0.5 s
  EXPECT_LT(took, 2.0);
  EXPECT_EQ(last_steps(), 0);
  EXPECT_FALSE(running(std::stoi(id.id)));
}

TEST_F(RunWatchTest, TimeScaleDividesTheAllowances) {
  const Launch l = launch("scaled", {"/bin/sh", "-c", "exec sleep 60"});
  const RunSpec& s = l.spec();
  options_.time_scale = 10;
  options_.min_hang_s = 5;            // 0.5 s real
  options_.startup_allowance_s = 5;   // 0.5 s real
  const auto start = Clock::now();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  const double took = seconds_since(start);
  EXPECT_EQ(st.state, RunState::Hang) << st.reason;
  EXPECT_GT(took, 1.0);
  EXPECT_LT(took, 2.0);
  // The reason speaks the cluster's (simulated) seconds: about 10.
  const std::string prefix = "no new step for ";
  ASSERT_EQ(st.reason.rfind(prefix, 0), 0u) << st.reason;
  const double quiet = std::stod(st.reason.substr(prefix.size()));
  EXPECT_GE(quiet, 9.9) << st.reason;
  EXPECT_LT(quiet, 20) << st.reason;
}

TEST_F(RunWatchTest, InterruptCancelsTheRunPromptly) {
  const Launch l = launch("interrupted", {"/bin/sh", "-c", "exec sleep 60"});
  const RunSpec& s = l.spec();
  options_.poll_min_s = options_.poll_max_s = 5;  // the default sleep still sees the flag
  options_.startup_allowance_s = 100;
  const auto start = Clock::now();
  options_.interrupted = [&] { return seconds_since(start) > 0.3; };
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  const double took = seconds_since(start);
  EXPECT_EQ(st.state, RunState::Cancelled);
  EXPECT_EQ(st.reason, "interrupted");
  EXPECT_GT(took, 0.3);
  EXPECT_LT(took, 1.0);
  EXPECT_FALSE(running(std::stoi(id.id)));
  EXPECT_EQ(progress_.back().state, RunState::Cancelled);
}

TEST_F(RunWatchTest, ARunPastItsBoundIsCancelledAsTimeout) {
  const Launch l = launch("long", {"/bin/sh", "-c", "exec sleep 60"});  // the cluster's own limit: 10 s real
  const RunSpec& s = l.spec();
  ASSERT_DOUBLE_EQ(s.time_limit_s, 10);
  options_.time_scale = 100;  // the watch's: 0.1 s real ...
  options_.grace_s = 0.3;     // ... plus 0.3 s
  options_.min_hang_s = options_.startup_allowance_s = 100;  // 1 s real each: no hang first
  const auto start = Clock::now();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  const double took = seconds_since(start);
  EXPECT_EQ(st.state, RunState::Timeout) << st.reason;
  EXPECT_NE(st.reason.find("time limit of 10 s (at time scale 100) plus a grace of 0.3 s"), std::string::npos)
      << st.reason;
  EXPECT_GT(took, 0.4);
  EXPECT_LT(took, 1.5);
  EXPECT_FALSE(running(std::stoi(id.id)));
}

TEST_F(RunWatchTest, TheClusterFinalStateIsReturnedAsItIs) {
  const Launch l = launch("fails", printer(2, 0.01, "echo 'CUDA out of memory' >&2; exit 3"));
  const RunSpec& s = l.spec();
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, s, options_);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 3");
  EXPECT_EQ(last_steps(), 2);
}

// Exit status 0 with no step in the log measured nothing: a framework that
// logs its config error and exits 0 (HyperPod's adapter), a run resumed past
// its last step. It is a failure, never a completed run.
TEST_F(RunWatchTest, ExitZeroBeforeTheFirstStepIsAFailure) {
  const Launch l = launch("empty", {"/bin/sh", "-c", "echo 'pydantic: 1 validation error for ConfigWithSMPForbid'; exit 0"});
  const RunId id = cluster_.submit(l);
  const RunStatus st = watch_run(cluster_, id, l.spec(), options_);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exited before its first step (exit status 0, no step in its log)");
  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back().state, RunState::Failed);
  EXPECT_EQ(last_steps(), 0);
}

TEST_F(RunWatchTest, SimClusterRunsAreWatchedToo) {
  SimCluster sim;
  TestRun t;
  t.gpus_per_node = 8;
  t.tp = 2;
  t.steps = 20;
  t.time_limit_s = 3600;
  const Launch l = test_launch(dir_, "sim", test_cluster("sim", "sim"), t);
  const RunSpec& s = l.spec();
  const RunId id = sim.submit(l);
  const RunStatus st = watch_run(sim, id, s, options_);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_EQ(last_steps(), diagnoser_steps(sim.log(id)));
  EXPECT_GT(last_steps(), 0);
}

// ---------------------------------------------------------------- a scripted cluster

// Plays back states and logs; poll may throw.
class ScriptedCluster : public Cluster {
 public:
  std::vector<RunState> states;
  std::vector<std::string> logs;
  int poll_failures = 0;  // the next this many polls throw
  int polls = 0, log_reads = 0, cancels = 0;

  std::string name() const override { return "scripted"; }
  RunId submit(const Launch&) override { return {"scripted", "1"}; }
  RunStatus poll(const RunId&) override {
    ++polls;
    if (poll_failures > 0) {
      --poll_failures;
      throw ClusterError("scheduler busy");
    }
    RunStatus s;
    s.state = states[std::min(step_, states.size() - 1)];
    s.elapsed_s = static_cast<double>(step_);
    ++step_;
    return s;
  }
  void cancel(const RunId&) override { ++cancels; }
  std::string log(const RunId&) override {
    ++log_reads;
    return logs[std::min(step_ == 0 ? 0 : step_ - 1, logs.size() - 1)];
  }
  void attach(const RunId&, const RunSpec&) override {}
  std::optional<RunId> find_run(const RunSpec&) override { return std::nullopt; }

 private:
  std::size_t step_ = 0;
};

TEST_F(RunWatchTest, TransientPollFailuresAreRetried) {
  ScriptedCluster c;
  c.states = {RunState::Running, RunState::Completed};
  c.logs = {megatron_log(2, 5), megatron_log(5, 5)};
  c.poll_failures = 3;
  std::vector<double> pauses;
  options_.sleep = [&](double s) { pauses.push_back(s); };
  const RunSpec s = spec("flaky", {"x"});
  const RunStatus st = watch_run(c, {"scripted", "1"}, s, options_);
  EXPECT_EQ(st.state, RunState::Completed);
  EXPECT_EQ(last_steps(), 5);
  ASSERT_GE(pauses.size(), 3u);
  EXPECT_LT(pauses[0], pauses[1]);  // backoff
  EXPECT_LT(pauses[1], pauses[2]);
}

TEST_F(RunWatchTest, PersistentPollFailuresAreRethrown) {
  ScriptedCluster c;
  c.states = {RunState::Running};
  c.logs = {""};
  c.poll_failures = 100;
  options_.sleep = [](double) {};
  const RunSpec s = spec("down", {"x"});
  EXPECT_THROW(watch_run(c, {"scripted", "1"}, s, options_), ClusterError);
  EXPECT_EQ(c.polls, 4);  // the first try and 3 retries
}

TEST_F(RunWatchTest, ALogThatShrinksIsCountedAgain) {
  ScriptedCluster c;
  c.states = {RunState::Running, RunState::Running, RunState::Running, RunState::Completed};
  c.logs = {megatron_log(4, 9), megatron_log(1, 9), megatron_log(3, 9), megatron_log(3, 9)};
  options_.sleep = [](double) {};
  const RunSpec s = spec("requeued", {"x"});
  const RunStatus st = watch_run(c, {"scripted", "1"}, s, options_);
  EXPECT_EQ(st.state, RunState::Completed);
  std::vector<long> counts;
  for (const auto& p : progress_) counts.push_back(p.steps);
  EXPECT_EQ(counts, (std::vector<long>{4, 1, 3, 3})) << fmt::format("{}", fmt::join(counts, ","));
  EXPECT_EQ(progress_.back().state, RunState::Completed);
}

TEST_F(RunWatchTest, ARequeuedRunGetsTheStartUpAllowanceAgain) {
  ScriptedCluster c;
  c.states = {RunState::Running, RunState::Pending, RunState::Pending, RunState::Running, RunState::Running,
              RunState::Completed};
  c.logs = {megatron_log(3, 9)};  // no new step after the requeue
  options_.poll_min_s = options_.poll_max_s = 0.05;
  options_.min_hang_s = 0.1;          // would be a hang by the second Running poll ...
  options_.startup_allowance_s = 1;   // ... without a new start-up allowance
  options_.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  const RunSpec s = spec("requeued", {"x"});
  const RunStatus st = watch_run(c, {"scripted", "1"}, s, options_);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_EQ(c.cancels, 0);
}

TEST_F(RunWatchTest, PollIntervalGrowsAndResetsWhenTheLogGrows) {
  ScriptedCluster c;
  c.states = {RunState::Running, RunState::Running, RunState::Running, RunState::Running, RunState::Running,
              RunState::Completed};
  const std::string grown = "a\n" + megatron_line(1, 10) + "\n";
  c.logs = {"a\n", "a\n", "a\n", grown, grown, grown};
  std::vector<double> pauses;
  options_.poll_min_s = 1;
  options_.poll_max_s = 3;
  options_.backoff = 2;
  options_.min_hang_s = options_.startup_allowance_s = 1000;
  options_.grace_s = 1000;
  options_.sleep = [&](double s) { pauses.push_back(s); };
  const RunSpec s = spec("backoff", {"x"});
  EXPECT_EQ(watch_run(c, {"scripted", "1"}, s, options_).state, RunState::Completed);
  EXPECT_EQ(pauses, (std::vector<double>{1, 2, 3, 1, 2}));
}

}  // namespace
}  // namespace attune::cluster
