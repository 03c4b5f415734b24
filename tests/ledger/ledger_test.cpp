#include "attune/ledger/ledger.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attune/campaign/bench.h"
#include "attune/report/campaign_data.h"
#include "../report/campaign_fixture.h"

namespace attune::ledger {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scratch() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path p = fs::temp_directory_path() / ("attune_ledger_" + std::to_string(getpid()) + "_" + info->name());
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

json measured(double tokens) { return {{"ok", true}, {"tokens_per_s_per_gpu", tokens}}; }

RunFinished run(int trial, int run, double tokens, double gpu_hours = 1.0) {
  return {trial, run, "screen", 1, json::object(), gpu_hours, measured(tokens)};
}

json accept_verdict() { return {{"decision", "accept"}, {"why", "+10%"}}; }

// A baseline, trial 1 accepted over it, trial 2 accepted over trial 1.
std::vector<json> two_acceptances() {
  return {to_json(CampaignStarted{json::object()}),
          to_json(run(0, 1, 100)),
          to_json(TrialDecided{0, "baseline", "", "", 1, 100.0, 1.0}),
          to_json(ProposalMade{1, 0, json::object(), nullptr}),
          to_json(run(1, 1, 120)),
          to_json(VerdictGiven{1, 0, 1, accept_verdict()}),
          to_json(TrialDecided{1, "accepted", "+20%", "", 1, 120.0, 1.0}),
          to_json(ProposalMade{2, 1, json::object(), nullptr}),
          to_json(run(2, 1, 140)),
          to_json(VerdictGiven{2, 1, 1, accept_verdict()}),
          to_json(TrialDecided{2, "accepted", "+16%", "", 1, 140.0, 1.0})};
}

LedgerState fold(const std::vector<json>& events) {
  LedgerState s;
  for (const json& e : events) ledger::apply(s, e);
  return s;
}

TEST(JournalEvent, EveryKindIsReadBackByItsName) {
  for (EventKind k : {EventKind::Campaign, EventKind::Proposal, EventKind::RunLaunching, EventKind::RunFinished,
                      EventKind::Verdict, EventKind::Trial, EventKind::Demoted, EventKind::Rescreened,
                      EventKind::Verification, EventKind::PolicyNote, EventKind::PolicyStop, EventKind::Lessons,
                      EventKind::Finished}) {
    EXPECT_EQ(kind_of(json{{"event", std::string(event_name(k))}}), k) << event_name(k);
  }
  EXPECT_EQ(kind_of(json{{"event", "from_a_later_version"}}), EventKind::Unknown);
  EXPECT_EQ(kind_of(json::array()), EventKind::Unknown);
}

TEST(JournalEvent, RecordsReadBackAsWritten) {
  const RunFinished r = run_finished(to_json(RunFinished{3, 2, "confirm", 2, {{"state", "completed"}}, 0.5, measured(90)}));
  EXPECT_EQ(r.trial, 3);
  EXPECT_EQ(r.run, 2);
  EXPECT_EQ(r.purpose, "confirm");
  EXPECT_EQ(r.steps_factor, 2);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 0.5);
  EXPECT_EQ(measurement_tokens(r.measurement), 90.0);
  const TrialDecided t = trial_decided(to_json(TrialDecided{4, "failed", "OOM", "oom", 1, std::nullopt, 0.25}));
  EXPECT_EQ(t.outcome, "failed");
  EXPECT_EQ(t.failure, "oom");
  EXPECT_FALSE(t.tokens_per_s_per_gpu);
  const EventIdentity id = identity_of(to_json(RunLaunching{5, 1, "screen", "d", 1}));
  EXPECT_EQ(id.kind, EventKind::RunLaunching);
  EXPECT_EQ(id.trial, 5);
  EXPECT_EQ(id.run, 1);
}

// What an older version wrote, a field missing or of another type, reads as
// its default instead of throwing.
TEST(JournalEvent, AnOldOrDamagedRecordReadsWithDefaults) {
  const RunFinished r = run_finished(json{{"event", "run_finished"}, {"trial", 1}, {"gpu_hours", "lots"}});
  EXPECT_EQ(r.steps_factor, 1);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 0);
  EXPECT_FALSE(measurement_ok(r.measurement));
  EXPECT_EQ(verdict_given(json{{"event", "verdict"}, {"trial", 2}}).against, -1);
}

TEST(LedgerState, AVerdictThatAcceptsMakesTheIncumbentOverTheOneItWasJudgedAgainst) {
  const LedgerState s = fold(two_acceptances());
  EXPECT_EQ(s.incumbent, 2);
  EXPECT_EQ(s.trial(2)->parent, 1);
  EXPECT_EQ(s.trial(1)->parent, 0);
  EXPECT_DOUBLE_EQ(s.spent_gpu_hours, 3.0);
  EXPECT_EQ(s.finished_runs, 3);
  EXPECT_EQ(s.incumbent_tokens_per_s_per_gpu(), 140.0);
}

TEST(LedgerState, ASuspectWinnerGoesBackToTheTrialItWasAcceptedOver) {
  std::vector<json> events = two_acceptances();
  events.push_back(to_json(RunFinished{2, 2, "verify", 1, json::object(), 1.0, measured(139)}));
  LedgerState s = fold(events);
  EXPECT_TRUE(ledger::apply(s, to_json(Verified{2, {{"suspect", true}, {"steps", 50}}})));
  EXPECT_EQ(s.incumbent, 1);
  EXPECT_EQ(s.trial(2)->outcome, "suspect");
  // Then the parent is verified too, and found suspect: back to the baseline.
  EXPECT_TRUE(ledger::apply(s, to_json(Verified{1, {{"suspect", true}, {"steps", 50}}})));
  EXPECT_EQ(s.incumbent, 0);
}

TEST(LedgerState, AVerificationThatPassesOrIsOfAnotherTrialChangesNothing) {
  LedgerState s = fold(two_acceptances());
  EXPECT_FALSE(ledger::apply(s, to_json(Verified{2, {{"suspect", false}, {"steps", 50}}})));
  EXPECT_FALSE(ledger::apply(s, to_json(Verified{1, {{"suspect", true}, {"steps", 50}}})));
  EXPECT_EQ(s.incumbent, 2);
}

TEST(LedgerState, ADemotionTakesTheIncumbentBack) {
  LedgerState s = fold(two_acceptances());
  EXPECT_TRUE(ledger::apply(s, to_json(Demoted{2, 1, {{"decision", "reject"}}})));
  EXPECT_EQ(s.incumbent, 1);
  EXPECT_EQ(s.trial(2)->outcome, "demoted");
}

TEST(LedgerState, AJournalWithoutVerdictsSaysItWithTheTrialRecord) {
  std::vector<json> events;
  for (const json& e : two_acceptances()) {
    if (kind_of(e) != EventKind::Verdict) events.push_back(e);
  }
  const LedgerState s = fold(events);
  EXPECT_EQ(s.incumbent, 2);
  EXPECT_EQ(s.trial(2)->parent, 1);
}

TEST(LedgerState, ARescreenThatAcceptsMakesTheIncumbent) {
  LedgerState s = fold(two_acceptances());
  ledger::apply(s, to_json(TrialDecided{3, "rejected", "+1%", "", 1, 141.0, 1.0}));
  EXPECT_EQ(s.incumbent, 2);
  EXPECT_TRUE(ledger::apply(s, to_json(Rescreened{3, "accepted", "+3%"})));
  EXPECT_EQ(s.incumbent, 3);
  EXPECT_EQ(s.trial(3)->parent, 2);
}

std::vector<json> read_lines(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// Resuming is folding the journal: the same events recorded again, in the
// same order, are found there; only what is new is appended.
TEST(Ledger, RecordingAgainWhatTheJournalHoldsAppendsNothing) {
  const fs::path file = scratch() / "journal.jsonl";
  const std::vector<json> events = two_acceptances();
  {
    Ledger first(file.string(), false);
    for (std::size_t i = 0; i < 7; ++i) first.record(events[i]);
  }
  const auto written = read_lines(file);
  ASSERT_EQ(written.size(), 7u);
  Ledger resumed(file.string(), false);
  EXPECT_EQ(resumed.state().incumbent, 0) << "the state is what was recorded again, not the whole file";
  for (std::size_t i = 0; i < 7; ++i) {
    const json& kept = resumed.record(events[i]);
    EXPECT_EQ(kept, written[i]) << "the journal's record, with its time, is the one kept";
  }
  EXPECT_EQ(read_lines(file).size(), 7u);
  EXPECT_EQ(resumed.state().incumbent, 1);
  for (std::size_t i = 7; i < events.size(); ++i) resumed.record(events[i]);
  const auto after = read_lines(file);
  ASSERT_EQ(after.size(), events.size());
  EXPECT_EQ(after.back()["trial"], 2);
  EXPECT_TRUE(after.back().contains("at"));
  EXPECT_EQ(resumed.state().incumbent, 2);
}

// Two verdicts of one trial (confirm, then accept) are two events: recorded
// again, each finds its own, in order.
TEST(Ledger, EventsOfTheSameTrialAreFoundInTheirOrder) {
  const fs::path file = scratch() / "journal.jsonl";
  const json confirm = to_json(VerdictGiven{1, 0, 1, {{"decision", "confirm"}}});
  const json accept = to_json(VerdictGiven{1, 0, 3, accept_verdict()});
  {
    Ledger first(file.string(), false);
    first.record(confirm);
    first.record(accept);
  }
  Ledger resumed(file.string(), false);
  EXPECT_EQ(resumed.record(confirm)["runs"], 1);
  EXPECT_EQ(resumed.state().incumbent, 0);
  EXPECT_EQ(resumed.record(accept)["runs"], 3);
  EXPECT_EQ(resumed.state().incumbent, 1);
  resumed.record(to_json(VerdictGiven{1, 0, 4, {{"decision", "reject"}}}));  // a third is new
  EXPECT_EQ(read_lines(file).size(), 3u);
  ASSERT_NE(resumed.find(EventKind::Verdict, 1), nullptr);
  EXPECT_EQ((*resumed.find(EventKind::Verdict, 1))["runs"], 4);
  EXPECT_EQ(resumed.find(EventKind::Verdict, 2), nullptr);
}

// The report and the bench agree with the campaign on the incumbent when the
// winner's verification finds it suspect: the best-so-far line and the curve
// end on the trial it was accepted over.
TEST(Ledger, ReportAndBenchAgreeThatASuspectWinnerIsNoLongerTheBest) {
  const fs::path dir = scratch();
  std::string journal = test::write_campaign_fixture(dir);
  const std::string passed = R"("suspect":false)";
  ASSERT_NE(journal.find(passed), std::string::npos);
  journal.replace(journal.find(passed), passed.size(), R"("suspect":true)");
  test::write_text(dir / "journal.jsonl", journal);

  LedgerState s;
  for (const json& e : read_lines(dir / "journal.jsonl")) ledger::apply(s, e);
  EXPECT_EQ(s.incumbent, 0);

  const report::CampaignData d = report::read_campaign(dir.string());
  ASSERT_FALSE(d.best_so_far.empty());
  EXPECT_EQ(d.best_so_far.back().trial, 0);
  for (const auto& row : d.trials) {
    if (row.trial == 2) {
      EXPECT_EQ(row.outcome, "suspect");
    }
  }
  const auto curve = campaign::incumbent_curve(dir.string());
  ASSERT_FALSE(curve.empty());
  EXPECT_DOUBLE_EQ(curve.back().second, 1005.0);  // the baseline's decided throughput
  EXPECT_DOUBLE_EQ(curve.back().first, 6.0);      // after all six runs were paid for
}

}  // namespace
}  // namespace attune::ledger
