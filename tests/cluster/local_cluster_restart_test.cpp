// The local backend across a restart of attune: every run's monitor records
// how it ended, so a run that ended while no attune watched reports its exit
// status to the attune that attaches later; and a pid is only trusted while
// it carries the run's ATTUNE_RUN marker, so a reused pid is never signalled.
#include "attune/cluster/local/local_cluster.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_test_launch.h"
#include "process_probe.h"

namespace attune::cluster {
namespace {

using Clock = std::chrono::steady_clock;

// A process outside the test's children (its parent exits at once), leading
// its own session, running `sleep 30` with exactly `env` as its environment.
// Its pid.
pid_t foreign_sleeper(const std::vector<std::string>& env) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::vector<std::string> strings = env;
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::close(fds[0]);
    const pid_t sleeper = ::fork();
    if (sleeper == 0) {
      ::close(fds[1]);
      ::setsid();
      char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
      ::execve("/bin/sleep", argv, envp.data());
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
  // Wait (bounded) until it is sleep, not the fork before the exec.
  for (int i = 0; i < 400; ++i) {
    std::ifstream comm("/proc/" + std::to_string(sleeper) + "/comm");
    std::string name;
    if (comm >> name && name == "sleep") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return sleeper;
}

class LocalClusterRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_local_restart_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (const pid_t pid : sleepers_) ::kill(pid, SIGKILL);
    std::filesystem::remove_all(dir_);
  }

  Launch launch(const std::string& name, std::vector<std::string> command) {
    TestRun t;
    t.command = std::move(command);
    return test_launch(dir_, name, test_cluster("local", "local"), t);
  }

  // Submits `l` from a child process that exits right after: an attune
  // killed while its run goes on. The run's id.
  RunId submit_and_die(const Launch& l) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t attune = ::fork();
    if (attune == 0) {
      ::close(fds[0]);
      int pid = -1;
      try {
        LocalCluster c;
        pid = std::stoi(c.submit(l).id);
      } catch (...) {
      }
      [[maybe_unused]] const ssize_t n = ::write(fds[1], &pid, sizeof pid);
      ::_exit(0);
    }
    ::close(fds[1]);
    int pid = -1;
    if (::read(fds[0], &pid, sizeof pid) != sizeof pid) pid = -1;
    ::close(fds[0]);
    ::waitpid(attune, nullptr, 0);
    return RunId{"local", std::to_string(pid)};
  }

  // Waits (bounded) for the run's exit record.
  bool recorded_within(const RunSpec& spec, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (!std::filesystem::exists(LocalCluster::exit_file(spec))) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  RunStatus wait_final(LocalCluster& c, const RunId& id, double seconds = 3) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    RunStatus s = c.poll(id);
    while (!is_final(s.state) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = c.poll(id);
    }
    return s;
  }

  RunSpec attach_spec(const std::string& name) {
    RunSpec s;
    s.name = name;
    s.gpus_per_node = 1;
    s.log_path = (dir_ / name / "run.log").string();
    return s;
  }

  pid_t sleeper(const std::vector<std::string>& env) {
    const pid_t pid = foreign_sleeper(env);
    if (pid > 0) sleepers_.push_back(pid);
    return pid;
  }

  std::filesystem::path dir_;
  std::vector<pid_t> sleepers_;
};

TEST_F(LocalClusterRestartTest, ExitRecordLiesBesideTheLog) {
  const Launch l = launch("where", {"/bin/true"});
  EXPECT_EQ(LocalCluster::exit_file(l.spec()), l.spec().log_path + ".exit");
  LocalCluster c;
  const RunId id = c.submit(l);
  EXPECT_EQ(wait_final(c, id).state, RunState::Completed);
  std::ifstream in(LocalCluster::exit_file(l.spec()));
  long pid = 0;
  int status = -1;
  long long elapsed_ms = -1;
  std::string name;
  in >> pid >> status >> elapsed_ms >> name;
  EXPECT_EQ(std::to_string(pid), id.id);
  EXPECT_EQ(status, 0);
  EXPECT_GE(elapsed_ms, 0);
  EXPECT_EQ(name, "where");
}

TEST_F(LocalClusterRestartTest, ARunThatEndedWhileNoAttuneWatchedReportsItsExitStatus) {
  const Launch three = launch("three", {"/bin/sh", "-c", "echo bye; exit 3"});
  const Launch zero = launch("zero", {"/bin/sh", "-c", "exit 0"});
  const Launch killed = launch("killed", {"/bin/sh", "-c", "kill -9 $$"});
  const RunId id3 = submit_and_die(three), id0 = submit_and_die(zero), id9 = submit_and_die(killed);
  ASSERT_TRUE(recorded_within(three.spec(), 3));
  ASSERT_TRUE(recorded_within(zero.spec(), 3));
  ASSERT_TRUE(recorded_within(killed.spec(), 3));

  LocalCluster restarted;
  restarted.attach(id3, three.spec());
  RunStatus st = restarted.poll(id3);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 3");
  EXPECT_LT(st.elapsed_s, 3.0);
  EXPECT_EQ(restarted.log(id3), "bye\n");
  restarted.attach(id0, zero.spec());
  st = restarted.poll(id0);
  EXPECT_EQ(st.state, RunState::Completed);
  EXPECT_EQ(st.reason, "exit status 0");
  restarted.attach(id9, killed.spec());
  EXPECT_EQ(restarted.poll(id9).reason, "killed by signal 9");

  // A restart that never learnt the id finds the ended run by its name.
  LocalCluster another;
  const auto found = another.find_run(three.spec());
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, id3.id);
}

TEST_F(LocalClusterRestartTest, ARunAttachedWhileRunningReportsItsExitStatusWhenItEnds) {
  const Launch l = launch("later", {"/bin/sh", "-c", "sleep 0.3; exit 4"});
  const RunId id = submit_and_die(l);
  LocalCluster restarted;
  restarted.attach(id, l.spec());
  EXPECT_EQ(restarted.poll(id).state, RunState::Running);
  const RunStatus st = wait_final(restarted, id);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 4");  // not "unknown": the monitor recorded it
}

TEST_F(LocalClusterRestartTest, AnEarlierRunsExitRecordIsNotThisRunsOnTheSameLog) {
  const Launch first = launch("same", {"/bin/sh", "-c", "exit 5"});
  LocalCluster c;
  ASSERT_EQ(wait_final(c, c.submit(first)).reason, "exit status 5");
  const Launch again = launch("same", {"/bin/sh", "-c", "sleep 0.3"});  // same run directory and log
  const RunId id = c.submit(again);
  EXPECT_FALSE(std::filesystem::exists(LocalCluster::exit_file(again.spec())));  // removed at submit
  EXPECT_EQ(wait_final(c, id).reason, "exit status 0");
}

TEST_F(LocalClusterRestartTest, TheMonitorKeepsNoneOfAttunesDescriptors) {
  // A close-on-exec pipe, as attune's lock or a reader's stdout would be: the
  // run's exec closes its copy, the monitor must close its own.
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  LocalCluster c;
  const RunId id = c.submit(launch("fds", {"/bin/sh", "-c", "sleep 5"}));
  ::close(fds[1]);
  pollfd pfd{fds[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 2000), 1);  // EOF at once, not when the run ends
  char byte;
  EXPECT_EQ(::read(fds[0], &byte, 1), 0);
  ::close(fds[0]);
  c.cancel(id);
  EXPECT_EQ(c.poll(id).state, RunState::Cancelled);
}

TEST_F(LocalClusterRestartTest, APidWithoutTheRunsMarkerIsNeverAdoptedNorSignalled) {
  // The run's pid now belongs to an unrelated process that leads its own group.
  const pid_t unrelated = sleeper({"PATH=/usr/bin:/bin"});
  ASSERT_GT(unrelated, 0);
  const RunId id{"local", std::to_string(unrelated)};
  LocalCluster c;
  try {
    c.attach(id, attach_spec("mine"));
    ADD_FAILURE() << "attached to a process without ATTUNE_RUN=mine";
  } catch (const ClusterError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("run local:" + id.id + " is gone"), std::string::npos) << m;
    EXPECT_NE(m.find("another process"), std::string::npos) << m;
  }
  EXPECT_THROW(c.cancel(id), ClusterError);  // not tracked: nothing to cancel
  // Another run's marker is not this run's either.
  const pid_t other = sleeper({"ATTUNE_RUN=someone-else"});
  ASSERT_GT(other, 0);
  EXPECT_THROW(c.attach(RunId{"local", std::to_string(other)}, attach_spec("mine")), ClusterError);
  EXPECT_TRUE(running(unrelated));
  EXPECT_TRUE(running(other));
}

TEST_F(LocalClusterRestartTest, AReusedPidWithTheRunsExitRecordIsTheEndedRunAndIsLeftAlone) {
  const pid_t unrelated = sleeper({"PATH=/usr/bin:/bin"});
  ASSERT_GT(unrelated, 0);
  const RunSpec s = attach_spec("ended");
  std::filesystem::create_directories(dir_ / "ended");
  std::ofstream(LocalCluster::exit_file(s)) << unrelated << " " << (7 << 8) << " 1500 ended\n";  // exit status 7
  const RunId id{"local", std::to_string(unrelated)};
  LocalCluster c;
  c.attach(id, s);
  RunStatus st = c.poll(id);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_EQ(st.reason, "exit status 7");
  EXPECT_NEAR(st.elapsed_s, 1.5, 0.1);
  c.cancel(id);  // a Ctrl-C now: the run has ended, and the pid is not its
  EXPECT_EQ(c.poll(id).state, RunState::Failed);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(running(unrelated));
  // A record of another pid or another run is no record of this one.
  std::ofstream(LocalCluster::exit_file(s)) << unrelated << " 0 10 another-run\n";
  LocalCluster fresh;
  EXPECT_THROW(fresh.attach(id, s), ClusterError);
}

TEST_F(LocalClusterRestartTest, AMarkedLiveProcessIsAdoptedAndItsGroupCancelled) {
  const pid_t run = sleeper({"ATTUNE_RUN=adopt-me", "PATH=/usr/bin:/bin"});
  ASSERT_GT(run, 0);
  const RunId id{"local", std::to_string(run)};
  LocalCluster c{LocalClusterOptions{.kill_grace_s = 0.2, .kill_wait_s = 1.0}};
  c.attach(id, attach_spec("adopt-me"));
  EXPECT_EQ(c.poll(id).state, RunState::Running);
  c.cancel(id);
  EXPECT_EQ(c.poll(id).state, RunState::Cancelled);
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (running(run) && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(running(run));
}

}  // namespace
}  // namespace attune::cluster
