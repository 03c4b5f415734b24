// `attune tune` end to end on the simulator (label tune): a campaign on a
// scenario, its directory and summary; SIGKILL after each journal event and
// --resume giving exactly the campaign that was never interrupted; a second
// tune on a locked directory refused.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fixtures/run_command.h"

namespace {

namespace fs = std::filesystem;

const std::string kScenario = std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/llama3-8b-axolotl-nd-parallel-tp2";

using attune::test::Ran;

Ran run(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + ATTUNE_BINARY + " " + args + " 2>/dev/null";
  return attune::test::run_command(cmd);
}

std::string scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attune_tune_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

nlohmann::json summary(const std::string& dir) {
  std::ifstream in(dir + "/summary.json");
  return nlohmann::json::parse(in);
}

std::string tune_args(const std::string& dir) {
  return "tune " + kScenario + " --out " + dir + " --seed 3 --no-lessons --max-trials 4 --json";
}

std::vector<nlohmann::json> journal(const std::string& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream j(dir + "/journal.jsonl");
  for (std::string line; std::getline(j, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// The journal as a campaign's history: every record without the time it
// was written, and the summary without what the machine's speed decides.
// The campaign's own directory is spelled DIR.
std::vector<nlohmann::json> history(const std::string& dir) {
  std::vector<nlohmann::json> out = journal(dir);
  for (auto& e : out) {
    e.erase("at");
    if (e.contains("summary")) e["summary"].erase("attune_seconds_per_trial");
    std::string text = e.dump();
    for (std::size_t at = text.find(dir); at != std::string::npos; at = text.find(dir, at)) text.replace(at, dir.size(), "DIR");
    e = nlohmann::json::parse(text);
  }
  return out;
}

// Resumes the campaign killed in `dir` after event k and checks it ended as
// the one never killed: the same journal, event for event (nothing written
// twice), the same trials, launches, GPU-hours and best; replay finds
// nothing that differs.
void expect_resumed_as(const std::string& dir, const std::string& whole, const nlohmann::json& expected, std::size_t k) {
  const Ran resumed = run("tune --resume " + dir + " --json");
  ASSERT_EQ(resumed.status, 0) << "after event " << k << ": " << resumed.out;
  const auto got = summary(dir);
  EXPECT_EQ(got["trials"], expected["trials"]) << "after event " << k;
  EXPECT_EQ(got["launches"], expected["launches"]) << "after event " << k;
  EXPECT_NEAR(got["gpu_hours"].get<double>(), expected["gpu_hours"].get<double>(), 1e-6) << "after event " << k;
  EXPECT_NEAR(got["best"]["tokens_per_s_per_gpu"].get<double>(), expected["best"]["tokens_per_s_per_gpu"].get<double>(), 1e-6)
      << "after event " << k;
  EXPECT_EQ(got["best"]["edits"], expected["best"]["edits"]) << "after event " << k;
  const auto resumed_history = history(dir), whole_history = history(whole);
  EXPECT_EQ(resumed_history.size(), whole_history.size()) << "after event " << k;
  for (std::size_t i = 0; i < std::min(resumed_history.size(), whole_history.size()); ++i) {
    if (resumed_history[i] != whole_history[i]) {
      ADD_FAILURE() << "after event " << k << ", record " << i + 1 << " differs:\n  " << resumed_history[i].dump()
                    << "\nnever killed:\n  " << whole_history[i].dump();
      break;
    }
  }
  const Ran replay = run("replay " + dir);
  EXPECT_EQ(replay.status, 0) << "after event " << k << ": " << replay.out;
}

TEST(TuneCampaign, ASimulatedCampaignFindsAGainAndHandsBackTheTunedRecipe) {
  const std::string dir = scratch("plain");
  const Ran r = run(tune_args(dir));
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["gain"].get<double>(), 0.05);
  EXPECT_GT(j["best"]["tokens_per_s_per_gpu"].get<double>(), j["baseline"]["tokens_per_s_per_gpu"].get<double>());
  EXPECT_FALSE(j["best"]["edits"].empty());
  // Each edit as the recipe spells it: a key of the file, its value before and after.
  for (const auto& e : j["best"]["edits"]) {
    EXPECT_FALSE(e["key"].get<std::string>().empty()) << e.dump();
    EXPECT_NE(e["from"], e["to"]) << e.dump();
  }
  // The campaign never sees the scenario's truth; the tuned file it hands
  // back is what a benchmark scores.
  EXPECT_FALSE(j["best"].contains("true_score")) << j["best"].dump();
  const Ran scored = run("sim score " + kScenario + " " + j["best"]["wrapper"].get<std::string>() + " --json");
  ASSERT_EQ(scored.status, 0) << scored.out;
  EXPECT_GT(nlohmann::json::parse(scored.out)["score"].get<double>(), 0) << scored.out;
  EXPECT_LE(j["trials"].get<int>(), 40);
  EXPECT_GT(j["gpu_hours"].get<double>(), 0);
  EXPECT_LE(j["gpu_hours"].get<double>(), j["budget_gpu_hours"].get<double>());
  EXPECT_FALSE(j["stop_reason"].get<std::string>().empty());
  // best/: the tuned file in the original's format, and a diff of it.
  const std::string recipe = j["best"]["recipe"], diff = j["best"]["diff"];
  ASSERT_TRUE(fs::exists(recipe));
  std::ifstream d(diff);
  const std::string text((std::istreambuf_iterator<char>(d)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("--- a/", 0), 0u) << text;
  EXPECT_NE(text.find("\n+"), std::string::npos);
  // The directory is the record: inputs, journal, trials, summary.
  for (const char* f : {"campaign.json", "journal.jsonl", "summary.json", "campaign.log", "trials/0000-baseline/run-1/run.log"})
    EXPECT_TRUE(fs::exists(fs::path(dir) / f)) << f;
  fs::remove_all(dir);
}

TEST(TuneCampaign, KilledAfterAnyJournalEventAndResumedItEndsAsIfNeverKilled) {
  const std::string whole = scratch("whole");
  ASSERT_EQ(run(tune_args(whole)).status, 0);
  const auto expected = summary(whole);
  int events = 0;
  {
    std::ifstream j(whole + "/journal.jsonl");
    for (std::string line; std::getline(j, line);) ++events;
  }
  ASSERT_GT(events, 10);
  std::set<std::string> kinds;
  for (int k = 1; k < events; k += 3) {
    const std::string dir = scratch("kill" + std::to_string(k));
    const Ran killed = run(tune_args(dir), "ATTUNE_TEST_KILL_AFTER_EVENTS=" + std::to_string(k));
    ASSERT_EQ(killed.status, 128 + SIGKILL) << "after event " << k;
    {
      std::ifstream j(dir + "/journal.jsonl");
      std::string line, last;
      while (std::getline(j, line)) last = line;
      kinds.insert(nlohmann::json::parse(last)["event"].get<std::string>());
    }
    expect_resumed_as(dir, whole, expected, k);
    fs::remove_all(dir);
  }
  // The kill points covered every kind of event the campaign writes.
  for (const char* kind : {"campaign", "proposal", "run_launching", "run_finished", "verdict", "trial"})
    EXPECT_TRUE(kinds.count(kind)) << kind;
  fs::remove_all(whole);
}

// Resumed after it finished, a campaign adds nothing to its journal, and
// its summary and best recipe stay what they were.
TEST(TuneCampaign, ResumedAfterItFinishedItWritesNothingNew) {
  const std::string dir = scratch("finished");
  ASSERT_EQ(run(tune_args(dir)).status, 0);
  const auto before = journal(dir);
  const auto expected = summary(dir);
  for (int again = 0; again < 2; ++again) {
    const Ran resumed = run("tune --resume " + dir + " --json");
    ASSERT_EQ(resumed.status, 0) << resumed.out;
    EXPECT_EQ(journal(dir), before) << "resume " << again + 1;
    EXPECT_EQ(summary(dir)["best"], expected["best"]);
  }
  const Ran replay = run("replay " + dir);
  EXPECT_EQ(replay.status, 0) << replay.out;
  fs::remove_all(dir);
}

// --parallel 3: up to three screening runs in flight at once, each charged;
// killed anywhere and resumed, the same campaign.
TEST(TuneCampaign, ParallelCandidatesAreInFlightTogetherAndResumeAsIfNeverKilled) {
  const std::string whole = scratch("parallel");
  const std::string args = " --parallel 3";
  const Ran r = run(tune_args(whole) + args);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto events = journal(whole);
  int in_flight = 0, most = 0;
  double charged = 0;
  for (const auto& e : events) {
    if (e["event"] == "run_launching") most = std::max(most, ++in_flight);
    if (e["event"] == "run_finished") {
      --in_flight;
      charged += e["gpu_hours"].get<double>();
    }
  }
  EXPECT_GE(most, 2);
  EXPECT_LE(most, 3);
  const auto expected = summary(whole);
  EXPECT_NEAR(expected["gpu_hours"].get<double>(), charged, 1e-6);
  EXPECT_EQ(expected["trials"].get<int>(), 4);  // --max-trials 4: a round of three, then one
  for (std::size_t k = 2; k < events.size(); k += 5) {
    const std::string dir = scratch("parallel-kill" + std::to_string(k));
    ASSERT_EQ(run(tune_args(dir) + args, "ATTUNE_TEST_KILL_AFTER_EVENTS=" + std::to_string(k)).status, 128 + SIGKILL);
    expect_resumed_as(dir, whole, expected, k);
    fs::remove_all(dir);
  }
  fs::remove_all(whole);
}

TEST(TuneCampaign, BadInputIsRefusedWithTheFlagNamed) {
  const std::string dir = scratch("bad");
  Ran r = run("tune " + kScenario + " --out " + dir + " --budget lots 2>&1");
  EXPECT_EQ(r.status, 2);
  r = run("tune " + kScenario + " --out " + dir + " --policy oracle");
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(run(tune_args(dir)).status, 0);
  // A used directory is not a new campaign.
  EXPECT_EQ(run(tune_args(dir)).status, 2);
  fs::remove_all(dir);
}

TEST(TuneCampaign, ASecondTuneOnALockedDirectoryIsRefusedNamingTheFirst) {
  const std::string dir = scratch("locked");
  ASSERT_EQ(run(tune_args(dir)).status, 0);
  // Another process holds the campaign's lock, its pid written in it as a tune writes it.
  const std::string holder = "python3 -c 'import fcntl,os,sys,time; f=open(sys.argv[1],\"r+\"); "
                             "fcntl.flock(f,fcntl.LOCK_EX); f.seek(0); f.truncate(); f.write(str(os.getpid())); f.flush(); "
                             "print(os.getpid(), flush=True); time.sleep(20)' " + dir + "/.lock";
  FILE* p = popen(holder.c_str(), "r");
  char pid[32] = {0};
  ASSERT_NE(fgets(pid, sizeof pid, p), nullptr);
  const Ran r = run("tune --resume " + dir + " 2>&1 >/dev/null; true", "");
  const std::string& text = r.out;
  std::string own(pid);
  own.erase(own.find_last_not_of("\n") + 1);
  EXPECT_NE(text.find("pid " + own), std::string::npos) << text;
  std::system(("kill " + own).c_str());
  pclose(p);
  fs::remove_all(dir);
}

}  // namespace
