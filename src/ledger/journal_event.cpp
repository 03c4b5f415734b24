#include "attune/ledger/journal_event.h"

#include <array>
#include <utility>

#include "attune/util/json_input.h"

namespace attune::ledger {

namespace {

using json = nlohmann::json;

constexpr std::array<std::pair<EventKind, std::string_view>, 13> kNames = {{
    {EventKind::Campaign, "campaign"},
    {EventKind::Proposal, "proposal"},
    {EventKind::RunLaunching, "run_launching"},
    {EventKind::RunFinished, "run_finished"},
    {EventKind::Verdict, "verdict"},
    {EventKind::Trial, "trial"},
    {EventKind::Demoted, "demoted"},
    {EventKind::Rescreened, "rescreened"},
    {EventKind::Verification, "verification"},
    {EventKind::PolicyNote, "policy_note"},
    {EventKind::PolicyStop, "policy_stop"},
    {EventKind::Lessons, "lessons"},
    {EventKind::Finished, "finished"},
}};

json event(EventKind kind) { return {{"event", std::string(event_name(kind))}}; }

// Tolerant reads: what an older version left out, or wrote as another type,
// reads as the default.
int int_of(const json& j, const char* key, int fallback = 0) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

double number_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json member_of(const json& j, const char* key) {
  const json* v = json_field::member(j, key);
  return v ? *v : json();
}

}  // namespace

std::string_view event_name(EventKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

EventKind kind_of(const json& record) {
  if (!record.is_object()) return EventKind::Unknown;
  const std::string name = text_of(record, "event");
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return EventKind::Unknown;
}

EventIdentity identity_of(const json& record) {
  EventIdentity id;
  id.kind = kind_of(record);
  if (record.is_object()) {
    id.trial = int_of(record, "trial", -1);
    id.run = int_of(record, "run", -1);
  }
  return id;
}

json to_json(const CampaignStarted& e) {
  json j = event(EventKind::Campaign);
  j["inputs"] = e.inputs;
  return j;
}

json to_json(const ProposalMade& e) {
  json j = event(EventKind::Proposal);
  j.update({{"trial", e.trial}, {"parent", e.parent}, {"proposal", e.proposal}, {"policy", e.policy}});
  return j;
}

json to_json(const RunLaunching& e) {
  json j = event(EventKind::RunLaunching);
  j.update({{"trial", e.trial}, {"run", e.run}, {"purpose", e.purpose}, {"dir", e.dir}, {"steps_factor", e.steps_factor}});
  return j;
}

json to_json(const RunFinished& e) {
  json j = event(EventKind::RunFinished);
  j.update({{"trial", e.trial}, {"run", e.run}, {"purpose", e.purpose}, {"steps_factor", e.steps_factor},
            {"status", e.status}, {"gpu_hours", e.gpu_hours}, {"measurement", e.measurement}});
  return j;
}

json to_json(const VerdictGiven& e) {
  json j = event(EventKind::Verdict);
  j.update({{"trial", e.trial}, {"against", e.against}, {"runs", e.runs}, {"verdict", e.verdict}});
  return j;
}

json to_json(const TrialDecided& e) {
  json j = event(EventKind::Trial);
  j.update({{"trial", e.trial}, {"outcome", e.outcome}, {"reason", e.reason}, {"failure", e.failure}, {"runs", e.runs},
            {"tokens_per_s_per_gpu", json_field::optional_json(e.tokens_per_s_per_gpu)}, {"gpu_hours", e.gpu_hours}});
  return j;
}

json to_json(const Demoted& e) {
  json j = event(EventKind::Demoted);
  j.update({{"trial", e.trial}, {"back_to", e.back_to}, {"verdict", e.verdict}});
  return j;
}

json to_json(const Rescreened& e) {
  json j = event(EventKind::Rescreened);
  j.update({{"trial", e.trial}, {"outcome", e.outcome}, {"reason", e.reason}});
  return j;
}

json to_json(const Verified& e) {
  json j = event(EventKind::Verification);
  j.update({{"trial", e.trial}, {"loss", e.loss}});
  return j;
}

json to_json(const PolicyNote& e) {
  json j = event(EventKind::PolicyNote);
  j.update({{"trial", e.trial}, {"note", e.note}});
  return j;
}

json to_json(const PolicyStop& e) {
  json j = event(EventKind::PolicyStop);
  j.update({{"trial", e.trial}, {"reason", e.reason}, {"policy", e.policy}});
  return j;
}

json to_json(const LessonsWritten& e) {
  json j = event(EventKind::Lessons);
  j.update({{"trial", -1}, {"count", e.count}});
  return j;
}

json to_json(const CampaignFinished& e) {
  json j = event(EventKind::Finished);
  j["summary"] = e.summary;
  return j;
}

CampaignStarted campaign_started(const json& r) { return {member_of(r, "inputs")}; }

ProposalMade proposal_made(const json& r) {
  return {int_of(r, "trial"), int_of(r, "parent"), member_of(r, "proposal"), member_of(r, "policy")};
}

RunLaunching run_launching(const json& r) {
  return {int_of(r, "trial"), int_of(r, "run"), text_of(r, "purpose"), text_of(r, "dir"), int_of(r, "steps_factor", 1)};
}

RunFinished run_finished(const json& r) {
  return {int_of(r, "trial"),        int_of(r, "run"),        text_of(r, "purpose"),      int_of(r, "steps_factor", 1),
          member_of(r, "status"),    number_of(r, "gpu_hours"), member_of(r, "measurement")};
}

VerdictGiven verdict_given(const json& r) {
  return {int_of(r, "trial"), int_of(r, "against", -1), int_of(r, "runs"), member_of(r, "verdict")};
}

TrialDecided trial_decided(const json& r) {
  return {int_of(r, "trial"),           text_of(r, "outcome"), text_of(r, "reason"),
          text_of(r, "failure"),        int_of(r, "runs"),     json_field::optional_number(r, "tokens_per_s_per_gpu"),
          number_of(r, "gpu_hours")};
}

Demoted demoted(const json& r) { return {int_of(r, "trial"), int_of(r, "back_to"), member_of(r, "verdict")}; }

Rescreened rescreened(const json& r) { return {int_of(r, "trial"), text_of(r, "outcome"), text_of(r, "reason")}; }

Verified verified(const json& r) { return {int_of(r, "trial"), member_of(r, "loss")}; }

CampaignFinished campaign_finished(const json& r) { return {member_of(r, "summary")}; }

PolicyStop policy_stop(const json& r) { return {int_of(r, "trial"), text_of(r, "reason"), member_of(r, "policy")}; }

bool measurement_ok(const json& m) {
  const json ok = m.is_object() ? member_of(m, "ok") : json();
  return ok.is_boolean() && ok.get<bool>();
}

std::optional<double> measurement_tokens(const json& m) {
  if (!measurement_ok(m)) return std::nullopt;
  return json_field::optional_number(m, "tokens_per_s_per_gpu");
}

std::string verdict_decision(const json& v) { return v.is_object() ? text_of(v, "decision") : std::string(); }

bool loss_suspect(const json& loss) {
  const json s = loss.is_object() ? member_of(loss, "suspect") : json();
  return s.is_boolean() && s.get<bool>();
}

}  // namespace attune::ledger
