// `attune replay` (campaign/replay.h) on real campaign directories made by
// the built attune binary (`attune tune` on a scenario, four trials on the
// simulator, about 0.3 s each): a fresh campaign replays with no
// difference; an edited journal or log is reported naming the trial; a copy
// on "another machine" (the original gone, the inputs' recipe missing)
// replays; damaged input is reported, not fatal; nothing in the directory
// changes; --what-if answers from the record or predicts. Integration: it
// runs the binary, so it lives in its own executable.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "attune/campaign/replay.h"
#include "attune/cli/commands.h"
#include "attune/util/error.h"

namespace attune::cli {
void add_replay_command(CLI::App& app);
}

namespace {

namespace fs = std::filesystem;
using attune::campaign::ReplayDifference;
using attune::campaign::ReplayRequest;
using attune::campaign::ReplayResult;
using attune::campaign::replay_campaign;

const std::string kScenario = std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/llama3-8b-axolotl-nd-parallel-tp2";

std::string scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attune_replay_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// The journal's records, edited by `edit`, written back one per line.
template <typename Edit>
void edit_journal(const std::string& dir, Edit edit) {
  std::istringstream in(read(fs::path(dir) / "journal.jsonl"));
  std::string out, line;
  while (std::getline(in, line)) {
    nlohmann::json e = nlohmann::json::parse(line);
    edit(e);
    out += e.dump() + "\n";
  }
  write(fs::path(dir) / "journal.jsonl", out);
}

fs::path trial_dir(const std::string& dir, int trial) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%04d-", trial);
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "trials"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path();
  return {};
}

bool names_trial(const ReplayResult& r, const std::string& kind, int trial) {
  return std::any_of(r.differences.begin(), r.differences.end(),
                     [&](const ReplayDifference& d) { return d.kind == kind && d.trial == trial; });
}

ReplayResult replay(const std::string& dir, const std::string& what_if = "") {
  ReplayRequest q;
  q.dir = dir;
  q.what_if_policy = what_if;
  return replay_campaign(q);
}

std::string listing(const ReplayResult& r) { return attune::campaign::to_json(r).dump(2); }

// The CLI's exit status and output, in process.
struct CliRun {
  int status = 0;
  std::string out;
};
CliRun replay_cli(std::vector<std::string> args) {
  CLI::App app;
  attune::cli::add_replay_command(app);
  args.insert(args.begin(), "replay");
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector in reverse order
  attune::cli::command_status() = 0;
  testing::internal::CaptureStdout();
  app.parse(args);
  CliRun r;
  r.out = testing::internal::GetCapturedStdout();
  r.status = attune::cli::command_status();
  return r;
}

class ReplayTest : public testing::Test {
 protected:
  // A four-trial campaign made by the binary, once per test process.
  static void SetUpTestSuite() {
    campaign_ = scratch("campaign");
    const std::string cmd = std::string(ATTUNE_BINARY) + " tune " + kScenario + " --out " + campaign_ +
                            " --seed 3 --no-lessons --max-trials 4 --json >/dev/null 2>&1";
    const int s = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(s) && WEXITSTATUS(s) == 0) << cmd;
  }
  static void TearDownTestSuite() { fs::remove_all(campaign_); }

  // A copy of the campaign to edit.
  std::string copy(const std::string& name) {
    const std::string to = scratch(name);
    fs::copy(campaign_, to, fs::copy_options::recursive);
    made_.push_back(to);
    return to;
  }
  void TearDown() override {
    for (const auto& d : made_) fs::remove_all(d);
  }

  static std::string campaign_;
  std::vector<std::string> made_;
};

std::string ReplayTest::campaign_;

TEST_F(ReplayTest, FreshCampaignReplaysWithNoDifference) {
  const ReplayResult r = replay(campaign_);
  EXPECT_TRUE(r.differences.empty()) << listing(r);
  EXPECT_TRUE(r.damaged.empty()) << listing(r);
  EXPECT_EQ(r.trials, 4);
  EXPECT_EQ(r.runs, 8);
  EXPECT_GE(r.verdicts, 4);
  const CliRun cli = replay_cli({campaign_, "--json"});
  EXPECT_EQ(cli.status, 0) << cli.out;
  EXPECT_FALSE(nlohmann::json::parse(cli.out).at("differs").get<bool>());
}

TEST_F(ReplayTest, FlippedVerdictIsReportedNamingTheTrial) {
  const std::string dir = copy("verdict");
  edit_journal(dir, [](nlohmann::json& e) {
    if (e["event"] == "verdict" && e["trial"] == 2) e["verdict"]["decision"] = "accept";
  });
  const ReplayResult r = replay(dir);
  EXPECT_TRUE(names_trial(r, "decision", 2)) << listing(r);
  const CliRun cli = replay_cli({dir});
  EXPECT_EQ(cli.status, 1);
  EXPECT_NE(cli.out.find("trial 2 run 1 decision: recorded accept, today reject"), std::string::npos) << cli.out;
}

TEST_F(ReplayTest, ChangedFailureClassIsReportedNamingTheTrial) {
  const std::string dir = copy("failure");
  edit_journal(dir, [](nlohmann::json& e) {
    if (e["event"] == "run_finished" && e["trial"] == 3) e["measurement"]["failure"] = "oom";
  });
  const ReplayResult r = replay(dir);
  ASSERT_TRUE(names_trial(r, "diagnosis", 3)) << listing(r);
  const auto d = std::find_if(r.differences.begin(), r.differences.end(), [](const ReplayDifference& x) { return x.trial == 3; });
  EXPECT_EQ(d->recorded, "oom");
  EXPECT_EQ(d->today, "none");
  EXPECT_TRUE(r.differs());
}

TEST_F(ReplayTest, AlteredLogLineChangesTheDiagnosis) {
  const std::string dir = copy("log");
  const fs::path log = trial_dir(dir, 4) / "run-1" / "run.log";
  write(log, read(log) + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
  const ReplayResult r = replay(dir);
  ASSERT_TRUE(names_trial(r, "diagnosis", 4)) << listing(r);
  const auto d = std::find_if(r.differences.begin(), r.differences.end(), [](const ReplayDifference& x) { return x.trial == 4; });
  EXPECT_EQ(d->today, "oom");
  EXPECT_NE(d->what.find("trials/0004-workers/run-1/run.log"), std::string::npos) << d->what;
}

TEST_F(ReplayTest, ProposalTheGateNowRefusesIsReported) {
  const std::string dir = copy("gate");
  edit_journal(dir, [](nlohmann::json& e) {
    if (e["event"] == "proposal" && e["trial"] == 4)
      e["proposal"]["changes"][0]["settings"] = nlohmann::json::array({{{"lever", "learning_rate"}, {"value", "0.001"}}});
  });
  const ReplayResult r = replay(dir);
  ASSERT_TRUE(names_trial(r, "gate", 4)) << listing(r);
  EXPECT_TRUE(names_trial(r, "edit", 4)) << listing(r);  // and the file differs from the one launched
}

TEST_F(ReplayTest, RecordedRefusalTheGateNowApprovesIsReported) {
  const std::string dir = copy("refusal");
  edit_journal(dir, [](nlohmann::json& e) {
    if (e["event"] == "trial" && e["trial"] == 3) e["outcome"] = "refused";
  });
  const ReplayResult r = replay(dir);
  ASSERT_TRUE(names_trial(r, "gate", 3)) << listing(r);
}

TEST_F(ReplayTest, CopyOnAnotherMachineReplays) {
  // Another machine: the campaign's own directory and its inputs' recipe are not there.
  const std::string dir = copy("elsewhere");
  const std::string moved = scratch("original_moved");
  fs::rename(campaign_, moved);
  edit_journal(dir, [](nlohmann::json& e) {
    if (e["event"] == "campaign") e["inputs"]["file"] = "/nonexistent/scenarios/llama3-8b-axolotl-nd-parallel-tp2";
  });
  const ReplayResult r = replay(dir);
  fs::rename(moved, campaign_);
  EXPECT_TRUE(r.differences.empty()) << listing(r);
  EXPECT_TRUE(r.damaged.empty()) << listing(r);
  EXPECT_EQ(r.runs, 8);
  EXPECT_EQ(r.original.rfind("trials/0000-baseline/run-", 0), 0u) << r.original;
}

TEST_F(ReplayTest, DamagedInputIsReportedAndSkipped) {
  const std::string dir = copy("damaged");
  const fs::path journal = fs::path(dir) / "journal.jsonl";
  std::string text = read(journal);
  text.resize(text.size() - 40);  // the last record torn
  write(journal, text);
  const fs::path log = trial_dir(dir, 2) / "run-1" / "run.log";
  ASSERT_EQ(std::system(("gzip " + log.string()).c_str()), 0);
  fs::remove_all(trial_dir(dir, 3));
  fs::remove(trial_dir(dir, 4) / "run-1" / "run.log");
  const std::string moved = scratch("original_moved2");
  fs::rename(campaign_, moved);  // the journal's recorded paths lead nowhere
  const ReplayResult r = replay(dir);
  const CliRun cli = replay_cli({dir});
  fs::rename(moved, campaign_);
  const std::string all = listing(r);
  EXPECT_TRUE(r.differences.empty()) << all;  // the gzipped log reads the same, the rest stands as recorded
  EXPECT_NE(all.find("journal.jsonl:"), std::string::npos) << all;
  EXPECT_NE(all.find("trial 3 run 1: its directory is gone"), std::string::npos) << all;
  EXPECT_NE(all.find("trial 4 run 1: no run.log"), std::string::npos) << all;
  EXPECT_NE(all.find("gzipped log trials/0002-compile/run-1/run.log.gz"), std::string::npos) << all;
  EXPECT_EQ(cli.status, 1) << cli.out;
}

TEST_F(ReplayTest, MiddleLineDamageIsSkipped) {
  const std::string dir = copy("middle");
  const fs::path journal = fs::path(dir) / "journal.jsonl";
  std::string text = read(journal);
  const std::size_t at = text.find("\"event\":\"verdict\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "{{garbage ");
  write(journal, text);
  const ReplayResult r = replay(dir);
  ASSERT_EQ(r.damaged.size(), 1u) << listing(r);
  EXPECT_EQ(r.damaged[0].where.rfind("journal.jsonl:", 0), 0u);
}

// Every file under `dir`: its bytes and modification time.
std::map<std::string, std::pair<std::string, fs::file_time_type>> snapshot(const std::string& dir) {
  std::map<std::string, std::pair<std::string, fs::file_time_type>> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out[e.path().string()] = {e.is_regular_file() ? read(e.path()) : "<dir>", fs::last_write_time(e.path())};
  }
  return out;
}

TEST_F(ReplayTest, NothingInTheDirectoryChanges) {
  const std::string dir = copy("readonly");
  fs::remove(fs::path(dir) / ".lock");
  const fs::path log = trial_dir(dir, 4) / "run-1" / "run.log";
  write(log, read(log) + "torch.OutOfMemoryError: CUDA out of memory.\n");
  const auto before = snapshot(dir);
  replay(dir);
  replay(dir, "random");
  replay_cli({dir, "--what-if", "planner", "--json"});
  EXPECT_EQ(snapshot(dir), before);
}

TEST_F(ReplayTest, WhatIfRandomAndPlannerPredictWhatWasNotMeasured) {
  for (const std::string policy : {"random", "planner"}) {
    const ReplayResult r = replay(campaign_, policy);
    ASSERT_TRUE(r.what_if) << policy;
    const auto& w = *r.what_if;
    EXPECT_EQ(w.trials.size(), 4u) << policy;
    EXPECT_GT(w.predicted, 0) << policy;
    EXPECT_TRUE(std::any_of(w.trials.begin(), w.trials.end(), [](const auto& t) { return t.source == "predicted" && t.tokens; }))
        << policy;
    EXPECT_EQ(w.recorded.trial, 1) << policy;
    EXPECT_EQ(w.trials[0].recorded_outcome, "accepted") << policy;
    const CliRun cli = replay_cli({campaign_, "--what-if", policy});
    EXPECT_EQ(cli.status, 0);
    EXPECT_NE(cli.out.find("predicted"), std::string::npos) << cli.out;
    EXPECT_NE(cli.out.find("what-if   best:"), std::string::npos) << cli.out;
  }
}

TEST_F(ReplayTest, WhatIfTheRecordedPolicyFollowsTheRecord) {
  // The campaign's own policy asks for exactly what was measured: every answer is the record's.
  const ReplayResult r = replay(campaign_, "rules");
  ASSERT_TRUE(r.what_if);
  EXPECT_EQ(r.what_if->predicted, 0);
  EXPECT_EQ(r.what_if->measured, 4);
  for (const auto& t : r.what_if->trials) {
    EXPECT_EQ(t.label, t.recorded_label);
    EXPECT_EQ(t.outcome, t.recorded_outcome);
  }
  EXPECT_EQ(r.what_if->what_if.trial, r.what_if->recorded.trial);
  EXPECT_EQ(r.what_if->what_if.tokens, r.what_if->recorded.tokens);
}

TEST_F(ReplayTest, NoCampaignOrUnknownPolicyIsInputError) {
  const std::string empty = scratch("empty");
  fs::create_directories(empty);
  made_.push_back(empty);
  EXPECT_THROW(replay(empty), attune::InputError);
  EXPECT_THROW(replay(campaign_, "no-such-policy"), attune::InputError);
  EXPECT_FALSE(fs::exists(fs::path(empty) / "journal.jsonl"));
}

}  // namespace
