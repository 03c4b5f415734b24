// `attune tune` on the mock Slurm cluster (label slurm): a campaign of five
// trials completes in under three minutes, and `attune replay` finds nothing
// that differs in it (nor in a copy of it); one killed while a job is in
// flight, resumed, re-attaches to that job instead of submitting it again;
// with --parallel the candidates' jobs run at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "mock_slurm.h"

namespace {

namespace fs = std::filesystem;

const std::string kScenario = std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/llama3-8b-axolotl-nd-parallel-tp2";

class TuneSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ATTUNE_NEED_MOCK_SLURM();
    std::string pattern = "/tmp/attune-tune-slurm-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern + "/campaign";
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(fs::path(dir_).parent_path());
  }
  // Runs attune with these arguments; returns its exit status.
  static int attune(const std::vector<std::string>& args, pid_t* started = nullptr) {
    const pid_t pid = fork();
    if (pid == 0) {
      std::vector<char*> argv = {const_cast<char*>(ATTUNE_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execv(ATTUNE_BINARY, argv.data());
      _exit(127);
    }
    if (started) {
      *started = pid;
      return 0;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::vector<std::string> tune_args(int max_trials = 5) const {
    return {"tune", kScenario, "--cluster", "mock", "--out", dir_, "--seed", "3", "--no-lessons",
            "--max-trials", std::to_string(max_trials)};
  }
  static int count(const std::string& file, const std::string& text) {
    std::ifstream in(file);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
    return n;
  }
  std::string dir_;
};

TEST_F(TuneSlurmTest, FiveTrialsOnTheMockClusterInUnderThreeMinutes) {
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(attune(tune_args()), 0);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream in(dir_ + "/summary.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_GE(j["trials"].get<int>(), 5);
  EXPECT_GT(j["gain"].get<double>(), 0);
  EXPECT_EQ(j["cluster"], "mock");
  EXPECT_LT(s, 180) << "the campaign took " << s << " s";
  // Replayed with today's code, in place and as a copy moved elsewhere: the
  // job logs, specs and recipe files the Slurm runs left say what the journal says.
  EXPECT_EQ(attune({"replay", dir_}), 0) << "replay found a difference or damaged input in " << dir_;
  const std::string copy = fs::path(dir_).parent_path() / "copied";
  fs::copy(dir_, copy, fs::copy_options::recursive);
  EXPECT_EQ(attune({"replay", copy, "--what-if", "planner"}), 0);
  EXPECT_EQ(attune({"export", copy, "--out", copy + "/export.json"}), 0);
}

TEST_F(TuneSlurmTest, KilledWithAJobInFlightTheResumeReattachesToIt) {
  pid_t pid = 0;
  // Two trials: the baseline, whose second run is the one in flight, and one
  // more that the resumed campaign decides after re-attaching.
  attune(tune_args(2), &pid);
  // Wait until the second baseline run's job is submitted, then kill attune.
  // Up to 3 minutes: under ASan, beside the other slurm tests, the first run
  // alone can take a minute.
  const std::string run_journal = dir_ + "/trials/0000-baseline/run-2/journal.jsonl";
  for (int i = 0; i < 1800 && count(run_journal, "\"launched\"") == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(count(run_journal, "\"launched\""), 1) << "the job was never submitted";
  ::kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(attune({"tune", "--resume", dir_}), 0);
  // Submitted once, finished once: the resumed campaign adopted the job.
  EXPECT_EQ(count(run_journal, "\"launching\""), 1);
  EXPECT_EQ(count(run_journal, "\"finished\""), 1);
  std::ifstream in(dir_ + "/summary.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["trials"].get<int>(), 2);
}

// --parallel 3: the three screening jobs of the first round are in the
// queue together (each launched before any of them finished).
TEST_F(TuneSlurmTest, ParallelCandidatesRunAsJobsAtOnce) {
  std::vector<std::string> args = {"tune", kScenario, "--cluster", "mock", "--out", dir_, "--seed", "3",
                                   "--no-lessons", "--max-trials", "3", "--parallel", "3"};
  ASSERT_EQ(attune(args), 0);
  std::string last_launched, first_finished = "~";
  int screens = 0;
  for (const auto& trial : fs::directory_iterator(dir_ + "/trials")) {
    if (trial.path().filename().string().rfind("0000", 0) == 0) continue;
    std::ifstream in(trial.path() / "run-1" / "journal.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto e = nlohmann::json::parse(line);
      if (e["event"] == "launched") last_launched = std::max(last_launched, e["at"].get<std::string>()), ++screens;
      if (e["event"] == "finished") first_finished = std::min(first_finished, e["at"].get<std::string>());
    }
  }
  ASSERT_EQ(screens, 3);
  EXPECT_LT(last_launched, first_finished) << "the screening jobs ran one after another";
  std::ifstream in(dir_ + "/summary.json");
  EXPECT_EQ(nlohmann::json::parse(in)["trials"].get<int>(), 3);
}

}  // namespace
