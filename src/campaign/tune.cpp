#include "attune/campaign/tune.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/campaign_finish.h"
#include "attune/campaign/campaign_parts.h"
#include "attune/campaign/trial.h"
#include "attune/campaign/trial_judge.h"
#include "attune/campaign/trial_runs.h"
#include "attune/campaign/winner_verification.h"
#include "attune/ledger/ledger.h"
#include "attune/policy/admission.h"
#include "attune/policy/policy.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/recipe/run_hardware.h"
#include "attune/sim/recipe_levers.h"
#include "attune/util/error.h"
#include "attune/util/statistics.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;
using policy::Observation;
using policy::TrialOutcome;

constexpr int kBaselineRuns = 2;
constexpr int kSettledRuns = 8;         // most runs of the incumbent, or of a rejection measured again, before an end
constexpr int kMaxIdleProposals = 40;   // proposals in a row that launch nothing before giving up

// The campaign's loop: the baseline, rounds of proposals judged against the
// incumbent, close calls and the incumbent measured again before giving up,
// and the winner's verification. Its parts (campaign_parts.h) are made
// before; its runs go through TrialRuns; its end is campaign_finish.h's.
class Campaign {
 public:
  Campaign(CampaignParts parts, const TuneHooks& hooks)
      : p_(std::move(parts)), hooks_(hooks),
        runs_(p_, rule_, {[this] { return hooks_.interrupted && hooks_.interrupted(); },
                          [this](const std::string& doing, double elapsed_s) { progress(doing, elapsed_s); },
                          [this](const std::string& s) { note(s); }}),
        judge_(p_, runs_, trials_, rule_, redecided(), [this](const std::string& s) { note(s); }) {}
  TuneResult run();

 private:
  void note(const std::string& text);
  bool interrupted() const { return runs_.stopped() || (hooks_.interrupted && hooks_.interrupted()); }
  void progress(const std::string& doing, double elapsed_s = 0);
  std::optional<RunMeasure> measure(Trial& t, const std::string& purpose, int steps_factor) {
    return runs_.measure(t, purpose, steps_factor);
  }
  bool baseline();
  std::optional<Trial> propose_trial(int n);
  policy::PolicyAnswer ask_policy(int n);
  void admit(Trial& c, policy::Admission a);
  std::vector<std::string> trial_logs(int trial) const;
  nlohmann::json trial_profile(int trial) const;
  void pass_on_policy_notes(int trial);
  bool round(int first, int count);
  bool rescreen();
  bool settle_incumbent();
  void search();
  void finish();
  void record_trial(const Trial& t);
  void rerecord(const Trial& t, const std::string& outcome, const std::string& reason);
  TrialJudge::Redecided redecided() {
    return [this](const Trial& t, const std::string& outcome, const std::string& reason) { rerecord(t, outcome, reason); };
  }
  int incumbent_n() const { return p_.incumbent_n(); }
  Trial& incumbent() { return trials_.at(static_cast<std::size_t>(incumbent_n())); }
  const Trial& incumbent() const { return trials_.at(static_cast<std::size_t>(incumbent_n())); }
  std::vector<Observation> observations() const;

  CampaignParts p_;
  const TuneHooks& hooks_;
  AcceptanceRule rule_;
  TrialRuns runs_;
  std::vector<Trial> trials_;   // index = trial number
  TrialJudge judge_;
  TuneResult result_;
  int since_best_ = 0;
  bool policy_done_ = false;    // the policy's last answer was that nothing is worth trying
  double attune_seconds_ = 0;
};

void Campaign::note(const std::string& text) {
  if (p_.log) p_.log->info(text);
  if (hooks_.on_note) hooks_.on_note(text);
}

void Campaign::progress(const std::string& doing, double elapsed_s) {
  if (!hooks_.on_progress) return;
  TuneProgress p;
  p.trial = static_cast<int>(trials_.size()) - 1;
  p.doing = doing;
  p.run_elapsed_s = elapsed_s;
  p.best_tokens_per_s_per_gpu = incumbent_n() < static_cast<int>(trials_.size()) && !incumbent().arm.run_means.empty()
                                    ? median(incumbent().arm.run_means)
                                    : 0;
  const double base = trials_.empty() || trials_[0].arm.run_means.empty() ? 0 : median(trials_[0].arm.run_means);
  p.gain = base > 0 ? p.best_tokens_per_s_per_gpu / base - 1 : 0;
  p.spent_gpu_hours = p_.budget ? p_.budget->spent() : 0;
  p.budget_gpu_hours = p_.budget ? p_.budget->total() : 0;
  hooks_.on_progress(p);
}

std::vector<Observation> Campaign::observations() const {
  std::vector<Observation> out;
  for (const Trial& t : trials_) out.push_back(t.obs);
  return out;
}

// A trial decided before, decided again (demoted, measured again, suspect):
// its record in the result says how it stands now.
void Campaign::rerecord(const Trial& t, const std::string& outcome, const std::string& reason) {
  for (TrialRecord& r : result_.history) {
    if (r.trial != t.n) continue;
    r.outcome = outcome;
    r.reason = reason;
    r.tokens_per_s_per_gpu = t.obs.tokens_per_s_per_gpu;
    r.gpu_hours = t.obs.gpu_hours;
    r.runs = t.obs.runs;
  }
}

void Campaign::record_trial(const Trial& t) {
  p_.journal->record(ledger::TrialDecided{t.n, policy::to_string(t.obs.outcome), t.obs.reason, t.obs.failure, t.obs.runs,
                                         t.obs.tokens_per_s_per_gpu, t.obs.gpu_hours});
  TrialRecord rec;
  rec.trial = t.n;
  rec.parent = t.parent;
  rec.label = t.n == 0 ? "baseline" : t.proposal.label();
  rec.rule = t.proposal.rule;
  rec.stage = t.proposal.stage;
  rec.why = t.proposal.why;
  rec.outcome = policy::to_string(t.obs.outcome);
  rec.reason = t.obs.reason;
  rec.tokens_per_s_per_gpu = t.obs.tokens_per_s_per_gpu;
  rec.predicted_gain = t.proposal.predicted_gain;
  rec.gpu_hours = t.obs.gpu_hours;
  rec.runs = t.obs.runs;
  result_.history.push_back(rec);
  p_.log->info("trial {} {}: {} {}", t.n, rec.label, rec.outcome, rec.reason);
  if (hooks_.on_trial) hooks_.on_trial(rec);
}

bool Campaign::baseline() {
  Trial t;
  t.n = 0;
  t.dir = (fs::path(result_.dir) / "trials" / "0000-baseline").string();
  try {
    // As it runs on its hardware: a count the file states otherwise is set to the run's.
    t.approved = p_.gate->approve(p_.target->recipe, recipe::with_run_hardware(p_.target->recipe));
  } catch (const gate::GateRefusal& e) {
    throw InputError({p_.q.file, 0, 0}, "RECIPE", std::string("the correctness gate refuses it: ") + e.what());
  }
  t.obs.trial = 0;
  t.obs.outcome = TrialOutcome::Baseline;
  t.obs.recipe_identity = recipe::settings_identity(t.approved->recipe());
  try {
    t.obs.workload = sim::workload_from_recipe(p_.target->recipe);
  } catch (const InputError&) {
  }
  trials_.push_back(std::move(t));
  for (int k = 0; k < kBaselineRuns; ++k) {
    const auto m = measure(trials_[0], "baseline", 1);
    if (!m) return false;
    if (!m->ok) break;  // a failing baseline: the policy fixes it first
  }
  if (trials_[0].arm.run_means.empty()) note("the baseline failed: " + trials_[0].obs.failure + " " + trials_[0].obs.reason);
  record_trial(trials_[0]);
  return true;
}

// When the policy has nothing left: the candidate of the incumbent it was
// proposed from whose one screening run came closest to the noise threshold
// without reaching half of it (a gain above zero, where one noisy run may
// well have hidden a real one) is measured again and judged on two runs.
// Rejections at screening are provisional when the budget would otherwise
// go unused. True when one was measured again.
bool Campaign::rescreen() {
  Trial* pick = nullptr;
  double best = 0;
  const double inc = median(incumbent().arm.run_means);
  for (Trial& t : trials_) {
    if (t.n == 0 || t.obs.outcome != TrialOutcome::Rejected || t.runs >= kSettledRuns || t.parent != incumbent_n() ||
        t.arm.run_means.empty())
      continue;
    const double gain = inc > 0 ? median(t.arm.run_means) / inc - 1 : 0;
    if (gain > best) pick = &t, best = gain;
  }
  if (!pick) return false;
  const std::string stop_reason = result_.stop_reason;
  const auto m = measure(*pick, "rescreen", 1);
  if (!m) {
    result_.stop_reason = runs_.stopped() ? "interrupted" : stop_reason;
    return false;
  }
  if (!m->ok) pick->obs.outcome = TrialOutcome::Failed;
  else judge_.judge(*pick);
  p_.journal->record(ledger::Rescreened{pick->n, policy::to_string(pick->obs.outcome), pick->obs.reason});
  rerecord(*pick, policy::to_string(pick->obs.outcome), pick->obs.reason);
  note(fmt::format("trial {} measured again: {}", pick->n, pick->obs.reason));
  if (pick->obs.outcome == TrialOutcome::Accepted) since_best_ = 0;
  return !runs_.stopped();
}

// When nothing is left to try or measure again: the incumbent measured once
// more, up to kSettledRuns (a lucky first measurement otherwise hides every
// later candidate, and a re-measurement can demote it). True when it was.
bool Campaign::settle_incumbent() {
  if (incumbent().runs >= kSettledRuns) return false;
  const std::string stop_reason = result_.stop_reason;
  if (!judge_.remeasure_incumbent()) {
    result_.stop_reason = runs_.stopped() ? "interrupted" : stop_reason;
    return false;
  }
  return !runs_.stopped();
}

// A trial's run logs, oldest run first (for the LLM's read_log).
std::vector<std::string> Campaign::trial_logs(int trial) const {
  std::vector<std::string> out;
  if (trial < 0 || trial >= static_cast<int>(trials_.size())) return out;
  const Trial& t = trials_[static_cast<std::size_t>(trial)];
  for (int run = 1; run <= t.runs; ++run) {
    const fs::path log = fs::path(t.dir) / fmt::format("run-{}", run) / "run.log";
    std::error_code ec;
    if (fs::is_regular_file(log, ec)) out.push_back(log.string());
  }
  return out;
}

nlohmann::json Campaign::trial_profile(int trial) const {
  if (trial < 0 || trial >= static_cast<int>(trials_.size())) return nullptr;
  const Trial& t = trials_[static_cast<std::size_t>(trial)];
  if (!t.last_diagnosis || !t.last_diagnosis->profile) return nullptr;
  return diagnose::to_json(*t.last_diagnosis).value("profile", nlohmann::json());
}

// What the policy has to say goes to the user and the journal, and into the summary.
void Campaign::pass_on_policy_notes(int trial) {
  for (const std::string& text : p_.policy->take_notes()) {
    note(text);
    p_.journal->record(ledger::PolicyNote{trial, text});
    result_.policy_notes.push_back(text);
  }
}

// Trial n as the policy proposes it (or the journal recalls it), through the
// gate: approved, or decided already (refused, a duplicate, unrunnable).
// nullopt when the policy has nothing to propose (stop_reason says why).
std::optional<Trial> Campaign::propose_trial(int n) {
  Trial c;
  c.n = n;
  c.parent = incumbent_n();
  c.obs.trial = n;
  c.obs.parent = incumbent_n();
  std::optional<policy::Admission> admitted;  // by the policy already (against the same incumbent and history)
  if (const nlohmann::json* p = p_.journal->find(ledger::EventKind::Proposal, n)) {
    c.proposal = policy::proposal_from_json(ledger::proposal_made(*p).proposal, p_.journal->path());
    p_.journal->record(*p);
  } else {
    policy::PolicyAnswer a = ask_policy(n);
    if (!a.proposal) return std::nullopt;
    c.proposal = *a.proposal;
    admitted = std::move(a.admission);
    p_.journal->record(ledger::ProposalMade{n, incumbent_n(), policy::to_json(c.proposal), p_.policy->explain()});
  }
  c.obs.proposal = c.proposal;
  c.dir = (fs::path(result_.dir) / "trials" / fmt::format("{:04d}-{}", n, c.proposal.slug())).string();
  admit(c, admitted ? std::move(*admitted)
                    : policy::admit(c.proposal, incumbent().approved->recipe(), p_.target->recipe, *p_.gate, observations()));
  return c;
}

// The policy's answer for trial n; a stop is journalled (stop_reason says why).
policy::PolicyAnswer Campaign::ask_policy(int n) {
  const Trial& inc = incumbent();
  const std::vector<Observation> history = observations();
  policy::PolicyContext ctx{p_.target->recipe, inc.approved->recipe(), incumbent_n(), inc.obs.tokens_per_s_per_gpu.value_or(0),
                            judge_.min_gain_now(), history, inc.last_diagnosis ? &*inc.last_diagnosis : nullptr, *p_.gate,
                            p_.lessons, p_.seed, n, p_.budget->left(), runs_.expected_cost(1),
                            [this](int trial) { return trial_logs(trial); },
                            [this](int trial) { return trial_profile(trial); }};
  policy::PolicyAnswer a = p_.policy->propose(ctx);
  pass_on_policy_notes(n);
  policy_done_ = !a.proposal;
  if (!a.proposal) {
    p_.journal->record(ledger::PolicyStop{n, a.stop_reason, p_.policy->explain()});
    result_.stop_reason = a.stop_reason;
  }
  return a;
}

// The trial as its admission decided it: approved (its directory made), or
// decided already (refused, a duplicate, unrunnable: no GPU time).
void Campaign::admit(Trial& c, policy::Admission a) {
  c.described = std::move(a.described);
  c.obs.edits = c.described;
  c.obs.recipe_identity = a.identity;
  c.obs.reason = a.why;
  if (a.edited) {
    try {
      c.obs.workload = sim::workload_from_recipe(*a.edited);
    } catch (const InputError&) {
    }
  }
  switch (a.kind) {
    case policy::AdmissionKind::Unrunnable: c.obs.outcome = TrialOutcome::Unrunnable; break;
    case policy::AdmissionKind::NoChange:
    case policy::AdmissionKind::Repeat: c.obs.outcome = TrialOutcome::Duplicate; break;
    case policy::AdmissionKind::Refused:
      c.obs.outcome = TrialOutcome::Refused;
      ++result_.refused;
      break;
    case policy::AdmissionKind::Admitted:
      c.approved = std::move(a.approved);
      c.obs.outcome = TrialOutcome::Pending;
      fs::create_directories(c.dir);
      p_.write_file((fs::path(c.dir) / "proposal.json").string(), policy::to_json(c.proposal).dump(2) + "\n");
      break;
  }
}

// One round: up to `count` proposals from the same history, the approved
// ones screened with their runs in flight together (the worst case of each
// held against the budget), then each judged in trial order. A trial whose
// screening could not start or was interrupted is dropped with the ones
// after it (nothing was decided for them: a resume recalls them from the
// journal). False when the campaign stops.
bool Campaign::round(int first, int count) {
  const double work_start = p_.clock->now_s();
  const double runs_before = runs_.run_seconds();
  for (int k = 0; k < count; ++k) {
    std::optional<Trial> c = propose_trial(first + k);
    if (!c) break;
    trials_.push_back(std::move(*c));
  }
  const int proposed = static_cast<int>(trials_.size()) - first;
  if (proposed == 0) return false;
  std::vector<PlannedRun> screens;
  double in_flight = 0;
  int undecided = static_cast<int>(trials_.size());  // the first trial nothing could be decided for
  for (int n = first; n < static_cast<int>(trials_.size()); ++n) {
    Trial& t = trials_[static_cast<std::size_t>(n)];
    if (!t.approved) continue;
    std::optional<PlannedRun> p = runs_.plan(t, "screen", 1, in_flight);
    if (!p) {
      undecided = n;
      break;
    }
    in_flight += p->cost;
    screens.push_back(std::move(*p));
  }
  runs_.execute(screens);
  for (PlannedRun& p : screens) {
    if (p.trial >= undecided) break;
    const std::optional<RunMeasure> m = runs_.finish(trials_.at(static_cast<std::size_t>(p.trial)), p);
    if (!m) undecided = std::min(undecided, p.trial);
  }
  for (int n = first; n < undecided; ++n) {
    Trial& t = trials_[static_cast<std::size_t>(n)];
    if (t.approved && t.runs > 0 && t.obs.outcome == TrialOutcome::Pending) {
      if (!t.obs.failure.empty()) t.obs.outcome = TrialOutcome::Failed;
      else if (!runs_.stopped()) judge_.judge(t);
    }
    if (t.obs.outcome == TrialOutcome::Pending) {  // interrupted before its judgement
      undecided = n;
      break;
    }
    const bool launched = t.runs > 0;
    since_best_ = t.obs.outcome == TrialOutcome::Accepted ? 0 : since_best_ + (launched ? 1 : 0);
    record_trial(t);
  }
  const bool dropped = undecided < static_cast<int>(trials_.size());
  trials_.resize(static_cast<std::size_t>(undecided));
  attune_seconds_ += p_.clock->now_s() - work_start - (runs_.run_seconds() - runs_before);
  if (runs_.stopped() || interrupted()) {
    result_.stop_reason = "interrupted";
    return false;
  }
  if (dropped && undecided == first) {
    result_.stop_reason = "the budget cannot pay for another run";
    return false;
  }
  return true;
}

void Campaign::finish() {
  result_.launches = runs_.launches();
  result_.failed_launches = runs_.failed_launches();
  finish_campaign(p_, trials_, attune_seconds_, result_, [this](const std::string& s) { note(s); });
}

void Campaign::search() {
  since_best_ = 0;
  int idle = 0;
  for (;;) {
    if (interrupted()) {
      result_.stop_reason = "interrupted";
      break;
    }
    const int launched = static_cast<int>(std::count_if(trials_.begin() + 1, trials_.end(), [](const Trial& t) { return t.runs > 0; }));
    if (p_.q.max_trials > 0 && launched >= p_.q.max_trials) {
      result_.stop_reason = fmt::format("--max-trials {} reached", p_.q.max_trials);
      break;
    }
    if (since_best_ >= p_.q.patience) {
      if (rescreen() || settle_incumbent()) continue;  // before giving up: close calls, then the incumbent, again
      result_.stop_reason = fmt::format("{} trials without a new best (patience)", p_.q.patience);
      break;
    }
    const int first = static_cast<int>(trials_.size());
    const int count = p_.q.max_trials > 0 ? std::min(p_.q.parallel, p_.q.max_trials - launched) : p_.q.parallel;
    if (!round(first, count)) {
      if (policy_done_ && (rescreen() || settle_incumbent())) continue;
      break;
    }
    for (std::size_t n = static_cast<std::size_t>(first); n < trials_.size(); ++n) idle = trials_[n].runs > 0 ? 0 : idle + 1;
    if (idle >= kMaxIdleProposals) {
      result_.stop_reason = fmt::format("{} proposals in a row could not run", kMaxIdleProposals);
      break;
    }
  }
}

TuneResult Campaign::run() {
  result_.dir = p_.dir;
  result_.policy = p_.q.policy;
  result_.cluster = p_.def.name;
  result_.budget_gpu_hours = p_.budget->total();
  note(fmt::format("campaign {} on cluster '{}' with policy {}, budget {:.1f} GPU-hours, seed {}", p_.dir, p_.def.name,
                   p_.q.policy, p_.budget->total(), p_.seed));
  if (!baseline()) {
    result_.stop_reason = runs_.stopped() || interrupted() ? "interrupted" : "the budget cannot pay for the baseline";
    result_.interrupted = result_.stop_reason == "interrupted";
    if (trials_.empty()) return result_;
    trials_.resize(1);
    finish();  // the summary says so, with what was spent
    return result_;
  }
  for (;;) {
    search();
    result_.interrupted = runs_.stopped() || result_.stop_reason == "interrupted";
    if (result_.interrupted) break;
    const VerificationOutcome v = verify_winner(p_, runs_, trials_, redecided(), [this](const std::string& s) { note(s); });
    result_.verification = v.verification;
    if (!v.search_on) break;
    note("the winner failed when re-run; searching on from its parent");
  }
  finish();
  return result_;
}

}  // namespace

TuneResult run_tune(const TuneRequest& request, const TuneHooks& hooks, const TuneServices& services) {
  Campaign c(open_campaign(request, services), hooks);
  return c.run();
}

}  // namespace attune::campaign
