// The events of a campaign's journal (journal.jsonl), one type each with its
// JSON: the only place that spells an event's name or its fields' names.
// tune writes these; the ledger state, replay, bench and the report read
// them back. Every record also has "at", the time it was written (UTC).
//
//   campaign      the first line: the campaign's inputs
//   proposal      a trial as its policy proposed it, from the incumbent then
//   run_launching before a run is submitted
//   run_finished  how a run ended, and its measurement
//   verdict       each acceptance test of a trial against the incumbent
//   trial         how a trial ended
//   demoted       a re-measurement took the incumbent back to its parent
//   rescreened    a rejected trial measured again, and its new outcome
//   verification  the winner's loss against the baseline's
//   policy_note   a policy's word to the user
//   policy_stop   the policy ends the search, with what it was based on
//   lessons       the campaign's lessons were written to the store
//   finished      the summary
//
// The values of other modules (a proposal, a measurement, a verdict, a loss
// check, a run status) are kept as the JSON their owners write: the ledger
// sits above util only, so that the report reads it without the campaign.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace attune::ledger {

enum class EventKind {
  Campaign,
  Proposal,
  RunLaunching,
  RunFinished,
  Verdict,
  Trial,
  Demoted,
  Rescreened,
  Verification,
  PolicyNote,
  PolicyStop,
  Lessons,
  Finished,
  Unknown,  // a record this version does not know: kept, never applied
};

std::string_view event_name(EventKind kind);
EventKind kind_of(const nlohmann::json& record);

// What makes two records the same event: its kind, trial and run. A resumed
// campaign that records an event already in the journal under the same
// identity finds it there instead of appending it again.
struct EventIdentity {
  EventKind kind = EventKind::Unknown;
  int trial = -1;
  int run = -1;
  bool operator==(const EventIdentity&) const = default;
};
EventIdentity identity_of(const nlohmann::json& record);

struct CampaignStarted {
  nlohmann::json inputs;
};

struct ProposalMade {
  int trial = 0;
  int parent = 0;
  nlohmann::json proposal;  // policy::to_json(Proposal)
  nlohmann::json policy;    // what the policy says of itself (an LLM's conversation)
};

struct RunLaunching {
  int trial = 0, run = 0;
  std::string purpose, dir;
  int steps_factor = 1;
};

struct RunFinished {
  int trial = 0, run = 0;
  std::string purpose;
  int steps_factor = 1;
  nlohmann::json status;       // cluster::run_status_json
  double gpu_hours = 0;
  nlohmann::json measurement;  // campaign::to_json(RunMeasure)
};

struct VerdictGiven {
  int trial = 0;
  int against = 0;  // the incumbent it was judged against
  int runs = 0;
  nlohmann::json verdict;  // campaign::to_json(AcceptanceVerdict): "decision", "why", ...
};

struct TrialDecided {
  int trial = 0;
  std::string outcome, reason, failure;
  int runs = 0;
  std::optional<double> tokens_per_s_per_gpu;
  double gpu_hours = 0;
};

struct Demoted {
  int trial = 0;
  int back_to = 0;
  nlohmann::json verdict;
};

struct Rescreened {
  int trial = 0;
  std::string outcome, reason;
};

struct Verified {
  int trial = 0;
  nlohmann::json loss;  // campaign::to_json(LossCheck): "comparable", "suspect", "steps", "why"
};

struct PolicyNote {
  int trial = 0;
  std::string note;
};

struct PolicyStop {
  int trial = 0;
  std::string reason;
  nlohmann::json policy;
};

struct LessonsWritten {
  std::size_t count = 0;
};

struct CampaignFinished {
  nlohmann::json summary;
};

nlohmann::json to_json(const CampaignStarted& e);
nlohmann::json to_json(const ProposalMade& e);
nlohmann::json to_json(const RunLaunching& e);
nlohmann::json to_json(const RunFinished& e);
nlohmann::json to_json(const VerdictGiven& e);
nlohmann::json to_json(const TrialDecided& e);
nlohmann::json to_json(const Demoted& e);
nlohmann::json to_json(const Rescreened& e);
nlohmann::json to_json(const Verified& e);
nlohmann::json to_json(const PolicyNote& e);
nlohmann::json to_json(const PolicyStop& e);
nlohmann::json to_json(const LessonsWritten& e);
nlohmann::json to_json(const CampaignFinished& e);

// Reading a record back, tolerant of what older versions wrote (a field that
// is missing or of another type reads as its default). The caller checks the
// kind first.
CampaignStarted campaign_started(const nlohmann::json& record);
ProposalMade proposal_made(const nlohmann::json& record);
RunLaunching run_launching(const nlohmann::json& record);
RunFinished run_finished(const nlohmann::json& record);
VerdictGiven verdict_given(const nlohmann::json& record);
TrialDecided trial_decided(const nlohmann::json& record);
Demoted demoted(const nlohmann::json& record);
Rescreened rescreened(const nlohmann::json& record);
Verified verified(const nlohmann::json& record);
PolicyStop policy_stop(const nlohmann::json& record);
CampaignFinished campaign_finished(const nlohmann::json& record);

// Fields of the values kept as JSON that the ledger itself reads.
bool measurement_ok(const nlohmann::json& measurement);
std::optional<double> measurement_tokens(const nlohmann::json& measurement);
std::string verdict_decision(const nlohmann::json& verdict);
bool loss_suspect(const nlohmann::json& loss);

}  // namespace attune::ledger
