#include "attune/cluster/local/local_cluster.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "attune/util/error.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "cluster_test_launch.h"
#include "process_probe.h"

namespace attune::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// Waits (bounded) until pid has exited.
bool gone_within(pid_t pid, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (running(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A process outside the test's children: forked by a child that exits at
// once, so init (or a subreaper) inherits it. It carries run `run`'s marker
// (ATTUNE_RUN), as every local run does. Its pid, once it runs `sleep 30`.
pid_t foreign_sleeper(const std::string& run) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::string marker = "ATTUNE_RUN=" + run;
  char* envp[] = {marker.data(), nullptr};
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::close(fds[0]);
    const pid_t sleeper = ::fork();
    if (sleeper == 0) {
      ::close(fds[1]);
      ::execle("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr), envp);
      ::_exit(127);
    }
    [[maybe_unused]] const ssize_t n = ::write(fds[1], &sleeper, sizeof sleeper);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t sleeper = -1;
  if (::read(fds[0], &sleeper, sizeof sleeper) != sizeof sleeper) sleeper = -1;
  ::close(fds[0]);
  ::waitpid(middle, nullptr, 0);
  // Until it has exec'd, its environment is the test's, without the marker.
  for (int i = 0; i < 400 && sleeper > 0; ++i) {
    std::ifstream comm("/proc/" + std::to_string(sleeper) + "/comm");
    std::string name;
    if (comm >> name && name == "sleep") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return sleeper;
}

class LocalClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_local_cluster_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A run of `command` prepared for this cluster from an approved recipe
  // (its log: <dir>/<name>/run.log; a 10 s time limit unless `t` says).
  Launch launch(const std::string& name, std::vector<std::string> command, TestRun t = {}) {
    t.command = std::move(command);
    return test_launch(dir_, name, test_cluster("local", "local"), t);
  }
  // The spec of a run launched elsewhere, for attach (which launches nothing).
  RunSpec spec(const std::string& name, std::vector<std::string> command) {
    RunSpec s;
    s.name = name;
    s.gpus_per_node = 1;
    s.time_limit_s = 10;
    s.log_path = (dir_ / "logs" / (name + ".log")).string();
    s.command = std::move(command);
    return s;
  }
  RunStatus wait_final(const RunId& id, double seconds = 2) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    RunStatus s = cluster_.poll(id);
    while (!is_final(s.state) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = cluster_.poll(id);
    }
    return s;
  }
  // The pid a test command wrote to `file` (waits for it, bounded).
  pid_t pid_from(const std::filesystem::path& file) {
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < deadline) {
      std::ifstream in(file);
      pid_t pid = 0;
      if (in >> pid && pid > 0) return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

  std::filesystem::path dir_;
  LocalCluster cluster_{LocalClusterOptions{.kill_grace_s = 0.2, .kill_wait_s = 1.0}};
};

TEST_F(LocalClusterTest, StdoutAndStderrBothReachTheLog) {
  const Launch l = launch("print", {"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2"});
  const RunId id = cluster_.submit(l);
  EXPECT_EQ(id.cluster, "local");
  EXPECT_EQ(id.id, std::to_string(std::stoi(id.id)));
  const RunStatus st = wait_final(id);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_EQ(st.reason, "exit status 0");
  EXPECT_GE(st.elapsed_s, 0.0);
  EXPECT_LT(st.elapsed_s, 2.0);
  // elapsed_s is frozen once the run ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(cluster_.poll(id).elapsed_s, st.elapsed_s);
  const std::string log = cluster_.log(id);
  EXPECT_NE(log.find("to-stdout\n"), std::string::npos) << log;
  EXPECT_NE(log.find("to-stderr\n"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::exists(l.spec().log_path));
  EXPECT_EQ(l.spec().log_path, (dir_ / "print" / "run.log").string());
  // The run was reaped: no zombie is left.
  EXPECT_FALSE(running(std::stoi(id.id)));
}

// What the framework runs before training (Axolotl's `axolotl preprocess`
// for a recipe with datasets) runs first, in the same log; when it fails the
// launch never starts and the run fails with its status. Variables the
// contract unsets never reach the child.
TEST_F(LocalClusterTest, PreparationRunsFirstAndItsFailureIsTheRuns) {
  const std::filesystem::path bin = dir_ / "bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "axolotl") << "#!/bin/sh\necho \"axolotl $1 $(basename $2)\"\nexit ${AXOLOTL_FAKE_STATUS:-0}\n";
  std::filesystem::permissions(bin / "axolotl", std::filesystem::perms::owner_all);
  std::filesystem::create_directories(dir_ / "src");
  std::ofstream(dir_ / "src" / "ax.yaml") << "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\n"
                                            "gradient_accumulation_steps: 1\nsequence_len: 2048\n"
                                            "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n";
  const auto prepare = [&](const std::string& name, const std::string& status) {
    std::ofstream(dir_ / "src" / (name + ".attune.yaml"))
        << "framework: axolotl\nconfig: ax.yaml\nmodel: llama3-8b\nhardware: {gpu: h100, nodes: 1, gpus_per_node: 1}\n"
        << "launch:\n  command: [/bin/sh, -c, \"echo trained; echo unset=[${SLURM_NTASKS:-}]\"]\n"
        << "  env: {PATH: \"" << bin.string() << ":/usr/bin:/bin\", AXOLOTL_FAKE_STATUS: \"" << status << "\"}\n";
    const recipe::Recipe r = recipe::Recipe::load((dir_ / "src" / (name + ".attune.yaml")).string());
    LaunchRequest q;
    q.run_name = name;
    q.run_dir = (dir_ / name).string();
    return prepare_launch(gate::CorrectnessGate{}.approve(r, r), test_cluster("local", "local"), q);
  };
  const Launch ok = prepare("prep-ok", "0");
  ASSERT_EQ(ok.spec().prepare.size(), 1u);
  const RunId id = cluster_.submit(ok);
  EXPECT_EQ(wait_final(id).state, RunState::Completed);
  const std::string log = cluster_.log(id);
  EXPECT_NE(log.find("axolotl preprocess ax.yaml\ntrained\n"), std::string::npos) << log;
  const RunId bad = cluster_.submit(prepare("prep-bad", "4"));
  const RunStatus st = wait_final(bad);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 4");
  EXPECT_EQ(cluster_.log(bad).find("trained"), std::string::npos);
}

TEST_F(LocalClusterTest, LogIsAppendedNotTruncated) {
  const Launch l = launch("append", {"/bin/sh", "-c", "echo second"});
  std::ofstream(l.spec().log_path) << "first\n";
  const RunId id = cluster_.submit(l);
  EXPECT_EQ(wait_final(id).state, RunState::Completed);
  EXPECT_EQ(cluster_.log(id), "first\nsecond\n");
}

TEST_F(LocalClusterTest, EnvironmentValuesReachTheChild) {
  TestRun t;
  t.env["ATTUNE_LOCAL_TEST"] = "a value; with $(spaces)";
  const RunId id = cluster_.submit(
      launch("env", {"/bin/sh", "-c", "echo \"v=[$ATTUNE_LOCAL_TEST]\"; echo \"home=[${HOME:+set}]\""}, t));
  ASSERT_EQ(wait_final(id).state, RunState::Completed);
  const std::string log = cluster_.log(id);
  EXPECT_NE(log.find("v=[a value; with $(spaces)]"), std::string::npos) << log;
  if (std::getenv("HOME") != nullptr) {
    EXPECT_NE(log.find("home=[set]"), std::string::npos) << log;
  }
}

TEST_F(LocalClusterTest, SpecPathIsSearchedForTheProgram) {
  const std::filesystem::path bin = dir_ / "bin";
  std::filesystem::create_directories(bin);
  const std::filesystem::path tool = bin / "attune-local-test-tool";
  std::ofstream(tool) << "#!/bin/sh\necho tool ran\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  TestRun t;
  t.env["PATH"] = bin.string() + ":/usr/bin:/bin";
  const RunId id = cluster_.submit(launch("path", {"attune-local-test-tool"}, t));
  ASSERT_EQ(wait_final(id).state, RunState::Completed);
  EXPECT_EQ(cluster_.log(id), "tool ran\n");
}

TEST_F(LocalClusterTest, NonZeroExitAndSignalsFail) {
  const RunId three = cluster_.submit(launch("three", {"/bin/sh", "-c", "exit 3"}));
  const RunId killed = cluster_.submit(launch("killed", {"/bin/sh", "-c", "kill -9 $$"}));
  RunStatus st = wait_final(three);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 3");
  st = wait_final(killed);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "killed by signal 9");
}

TEST_F(LocalClusterTest, RefusesWhatCannotRunAtSubmit) {
  const auto message = [&](const Launch& l) -> std::string {
    try {
      cluster_.submit(l);
    } catch (const ClusterError& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string m = message(launch("missing", {"attune-no-such-program", "--flag"}));
  EXPECT_NE(m.find("attune-no-such-program"), std::string::npos) << m;
  EXPECT_NE(m.find("missing"), std::string::npos) << m;

  // A path is exec'd as is: the child reports the failed exec before submit returns.
  const std::string absent = (dir_ / "no-such-dir" / "prog").string();
  m = message(launch("absent", {absent}));
  EXPECT_NE(m.find(absent), std::string::npos) << m;
  EXPECT_NE(m.find("No such file"), std::string::npos) << m;
  const std::filesystem::path plain = dir_ / "not-executable";
  std::ofstream(plain) << "echo hi\n";
  m = message(launch("noexec", {plain.string()}));
  EXPECT_NE(m.find(plain.string()), std::string::npos) << m;
  EXPECT_NE(m.find("ermission denied"), std::string::npos) << m;

  // The run directory became a file after the launch was prepared: no log.
  const Launch bad_log = launch("bad-log", {"/bin/true"});
  std::filesystem::remove_all(dir_ / "bad-log");
  std::ofstream(dir_ / "bad-log") << "x";
  m = message(bad_log);
  EXPECT_NE(m.find(bad_log.spec().log_path), std::string::npos) << m;

  // A launch prepared for another kind of cluster is refused, not half run.
  m = message(test_launch(dir_, "elsewhere", test_cluster("sim", "sim")));
  EXPECT_NE(m.find("run 'elsewhere' was prepared for cluster 'sim'"), std::string::npos) << m;

  // An environment name the child could not be given never reaches submit:
  // the recipe's wrapper refuses it.
  TestRun bad_env;
  bad_env.env["A=B"] = "x";
  EXPECT_THROW(launch("bad-env", {"/bin/true"}, bad_env), InputError);
}

TEST_F(LocalClusterTest, TimeLimitKillsTheWholeGroup) {
  const std::filesystem::path pidfile = dir_ / "grandchild.pid";
  TestRun t;
  t.time_limit_s = 0.3;
  const Launch l = launch("slow", {"/bin/sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pidfile.string()}, t);
  EXPECT_DOUBLE_EQ(l.spec().time_limit_s, 0.3);
  const auto t0 = Clock::now();
  const RunId id = cluster_.submit(l);
  const pid_t grandchild = pid_from(pidfile);
  ASSERT_GT(grandchild, 0);
  const pid_t pgid = std::stoi(id.id);
  EXPECT_EQ(::getpgid(grandchild), pgid);  // the run leads its own group
  EXPECT_EQ(cluster_.poll(id).state, RunState::Running);
  const RunStatus st = wait_final(id, 6);
  EXPECT_EQ(st.state, RunState::Timeout) << st.reason;
  EXPECT_NE(st.reason.find("time limit"), std::string::npos) << st.reason;
  EXPECT_GE(st.elapsed_s, 0.3);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 6.0);
  EXPECT_TRUE(gone_within(grandchild, 1.0));
  EXPECT_FALSE(running(pgid));
  EXPECT_EQ(cluster_.poll(id).state, RunState::Timeout);
}

TEST_F(LocalClusterTest, CancelKillsTheGroupEvenWhenItIgnoresSigterm) {
  const std::filesystem::path pidfile = dir_ / "grandchild.pid";
  const RunId id = cluster_.submit(
      launch("stubborn", {"/bin/sh", "-c", "trap '' TERM; sleep 30 & echo $! > \"$1\"; wait", "sh", pidfile.string()}));
  const pid_t grandchild = pid_from(pidfile);
  ASSERT_GT(grandchild, 0);
  cluster_.cancel(id);  // SIGTERM is ignored: SIGKILL after the 0.2 s grace
  const RunStatus st = cluster_.poll(id);
  EXPECT_EQ(st.state, RunState::Cancelled);
  EXPECT_TRUE(gone_within(grandchild, 1.0));
  EXPECT_FALSE(running(std::stoi(id.id)));
  // Cancelling again, or a finished run, changes nothing.
  cluster_.cancel(id);
  EXPECT_EQ(cluster_.poll(id).state, RunState::Cancelled);
  const RunId done = cluster_.submit(launch("done", {"/bin/true"}));
  ASSERT_EQ(wait_final(done).state, RunState::Completed);
  cluster_.cancel(done);
  EXPECT_EQ(cluster_.poll(done).state, RunState::Completed);
}

TEST_F(LocalClusterTest, CancelEndsARunThatHonoursSigterm) {
  const std::filesystem::path pidfile = dir_ / "grandchild.pid";
  const RunId id =
      cluster_.submit(launch("polite", {"/bin/sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pidfile.string()}));
  const pid_t grandchild = pid_from(pidfile);
  ASSERT_GT(grandchild, 0);
  const auto t0 = Clock::now();
  cluster_.cancel(id);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 0.2);  // no need for the grace
  EXPECT_EQ(cluster_.poll(id).state, RunState::Cancelled);
  EXPECT_EQ(cluster_.poll(id).reason, "cancelled");
  EXPECT_TRUE(gone_within(grandchild, 1.0));
}

TEST_F(LocalClusterTest, ArgumentsArePassedLiterallyNeverThroughAShell) {
  const std::string marker = (dir_ / "X").string();
  const std::vector<std::string> args = {
      "$(touch " + marker + ")",
      "`touch " + marker + "`",
      "a; touch " + marker,
      "line one\nline two",
      "'single' \"double\" \\back",
      "* ? ~ | & > " + marker,
  };
  std::vector<std::string> command = {"printf", "[%s]\\n"};
  command.insert(command.end(), args.begin(), args.end());
  const RunId id = cluster_.submit(launch("literal", command));
  ASSERT_EQ(wait_final(id).state, RunState::Completed);
  std::string expected;
  for (const auto& a : args) expected += "[" + a + "]\n";
  EXPECT_EQ(cluster_.log(id), expected);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(LocalClusterTest, AttachesToAForeignProcessAndEnforcesItsTimeLimit) {
  const pid_t sleeper = foreign_sleeper("adopted");
  ASSERT_GT(sleeper, 0);
  const RunId id{"local", std::to_string(sleeper)};
  RunSpec s = spec("adopted", {"sleep", "30"});
  s.time_limit_s = 0.25;
  cluster_.attach(id, s);
  RunStatus st = cluster_.poll(id);
  EXPECT_EQ(st.state, RunState::Running);
  EXPECT_LT(st.elapsed_s, 0.25);
  // It does not lead its own group (it shares the test's): only it is signalled.
  st = wait_final(id, 2);
  EXPECT_EQ(st.state, RunState::Timeout) << st.reason;
  EXPECT_TRUE(gone_within(sleeper, 1.0));
}

// No monitor recorded its end (it was not launched by a LocalCluster).
TEST_F(LocalClusterTest, AForeignProcessThatDiesHasAnUnknownExit) {
  const pid_t sleeper = foreign_sleeper("adopted");
  ASSERT_GT(sleeper, 0);
  const RunId id{"local", std::to_string(sleeper)};
  cluster_.attach(id, spec("adopted", {"sleep", "30"}));
  EXPECT_EQ(cluster_.poll(id).state, RunState::Running);
  ::kill(sleeper, SIGKILL);
  const RunStatus st = wait_final(id, 2);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status unknown (attached)");
}

TEST_F(LocalClusterTest, AttachToAGoneOrUnknownRunFails) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const RunId id{"local", std::to_string(child)};
  try {
    cluster_.attach(id, spec("gone", {"true"}));
    ADD_FAILURE() << "attached to a dead pid";
  } catch (const ClusterError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("run local:" + std::to_string(child) + " is gone", 0), 0u) << m;
    EXPECT_NE(m.find(LocalCluster::exit_file(spec("gone", {"true"}))), std::string::npos) << m;  // where it looked
  }
  EXPECT_THROW(cluster_.poll(id), ClusterError);
  EXPECT_THROW(cluster_.attach(RunId{"slurm", "123"}, spec("x", {"true"})), ClusterError);
  EXPECT_THROW(cluster_.attach(RunId{"local", "1"}, spec("x", {"true"})), ClusterError);
  EXPECT_THROW(cluster_.attach(RunId{"local", "-1"}, spec("x", {"true"})), ClusterError);
  EXPECT_THROW(cluster_.attach(RunId{"local", "12x"}, spec("x", {"true"})), ClusterError);
  EXPECT_THROW(cluster_.log(RunId{"local", "99999999"}), ClusterError);
  EXPECT_EQ(cluster_.name(), "local");
}

}  // namespace
}  // namespace attune::cluster
