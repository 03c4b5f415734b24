#include "attune/campaign/replay.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/loss_check.h"
#include "attune/campaign/run_measure.h"
#include "attune/cluster/run.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/ledger/journal_event.h"
#include "attune/ledger/ledger_state.h"
#include "attune/policy/admission.h"
#include "attune/policy/policy.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/recipe/run_hardware.h"
#include "attune/sim/workload.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/json_input.h"
#include "attune/util/statistics.h"
#include "attune/util/text.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;
using policy::TrialOutcome;

// What the record says and what today's code says of one trial.
struct TrialState {
  int n = 0;
  int parent = 0;
  std::string label = "baseline";
  policy::Proposal proposal;
  std::optional<recipe::Recipe> recipe;   // rebuilt today
  std::string stage;                      // today: approved | refused | unrunnable | duplicate ("" = not replayed)
  std::string stage_why;
  bool launched = false;
  bool launched_file_checked = false;
  std::string recorded_outcome;           // the `trial` event's ("" = none)
  // Today's measurements, as Campaign::absorb keeps them.
  Arm arm;
  std::vector<LossCurve> losses;
  std::optional<RunMeasure> last;
  // The recorded ones, for the what-if.
  Arm recorded_arm;
  std::vector<double> recorded_steps;
  std::optional<double> recorded_peak;
  std::string recorded_failure;
  std::vector<std::string> logs;          // its run logs found today, plain text (what an LLM may read)
  int runs = 0;
  double gpu_hours = 0;
};

bool differs_relatively(double a, double b, double tolerance) {
  const double scale = std::max(std::abs(a), std::abs(b));
  return scale > 0 && std::abs(a - b) > tolerance * scale;
}

std::string or_none(const std::string& s) { return s.empty() ? "none" : s; }

// The gate's stage of a recorded outcome: what proposing it came to.
std::string stage_of(const std::string& outcome) {
  if (outcome == "refused" || outcome == "unrunnable" || outcome == "duplicate") return outcome;
  return "approved";
}

// The first line where two texts differ (1-based), for a message.
int first_differing_line(const std::string& a, const std::string& b) {
  const auto la = split_lines(a), lb = split_lines(b);
  std::size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i]) ++i;
  return static_cast<int>(i) + 1;
}

class Replayer {
 public:
  explicit Replayer(const ReplayRequest& q)
      : q_(q), record_(q.dir), gate_(record_.inputs().gate) {}
  ReplayResult run();

 private:
  void differ(const std::string& kind, int trial, int run, std::string recorded, std::string today, std::string what) {
    result_.differences.push_back({kind, trial, run, std::move(recorded), std::move(today), std::move(what)});
  }
  void damaged(std::string where, std::string what) { result_.damaged.push_back({std::move(where), std::move(what)}); }
  TrialState& trial(int n);
  double noise_cv() const;
  void replay_event(const RecordedEvent& e);
  void baseline();
  void on_proposal(const RecordedEvent& e);
  void on_run_finished(const RecordedEvent& e);
  std::optional<RunMeasure> measure_today(TrialState& t, int run, const std::string& run_dir, const RecordedEvent& e,
                                          const cluster::RunStatus& status, double gpu_hours);
  void check_launched_file(TrialState& t, const std::string& run_dir);
  void check_demotion(const RecordedEvent* next);
  void on_verdict(const RecordedEvent& e);
  void on_verification(const RecordedEvent& e);
  void on_finished(const RecordedEvent& e);
  void compare_stages();
  std::vector<RecordedTrial> recorded_trials() const;
  void what_if();

  ReplayRequest q_;
  CampaignRecord record_;
  ReplayResult result_;
  OriginalRecipe original_;
  gate::CorrectnessGate gate_;
  AcceptanceRule rule_;
  std::map<int, TrialState> trials_;
  std::map<std::pair<int, int>, std::string> launched_dirs_;
  std::map<int, int> remeasures_;   // a judgement's re-measurements so far, per trial
  ledger::LedgerState recorded_;  // the record folded so far: who the incumbent is
  struct PendingDemotion {
    int trial = 0;
    bool today = false;
    std::string why;
  };
  std::optional<PendingDemotion> pending_demotion_;  // an incumbent re-measured: the next event says if it was demoted
  double spent_ = 0;
  int launches_ = 0, failed_today_ = 0, refused_today_ = 0;
  bool finished_ = false;
};

TrialState& Replayer::trial(int n) {
  auto [it, made] = trials_.try_emplace(n);
  if (made) it->second.n = n;
  return it->second;
}

double Replayer::noise_cv() const {
  std::vector<const Arm*> arms;
  for (const auto& [n, t] : trials_) arms.push_back(&t.arm);
  return run_to_run_cv(arms);
}

void Replayer::baseline() {
  TrialState& t = trial(0);
  original_ = record_.original(result_.damaged);
  result_.original = original_.source.empty() ? "" : record_.relative(original_.source);
  if (!original_.recipe) return;
  t.recipe.emplace(recipe::with_run_hardware(*original_.recipe));
  const gate::Verdict v = gate_.check(*original_.recipe, *t.recipe);
  t.stage = v.allowed ? "approved" : "refused";
  if (!v.allowed) differ("gate", 0, 0, "approved", "refused", "the gate would now refuse the original recipe itself");
}

void Replayer::on_proposal(const RecordedEvent& e) {
  const ledger::ProposalMade made = ledger::proposal_made(e.event);
  const int n = made.trial;
  TrialState& t = trial(n);
  t.parent = made.parent;
  try {
    t.proposal = policy::proposal_from_json(made.proposal, fmt::format("journal.jsonl:{}", e.line));
  } catch (const std::exception& err) {
    damaged(fmt::format("journal.jsonl:{}", e.line), fmt::format("trial {}: not a proposal ({}): skipped", n, err.what()));
    return;
  }
  t.label = t.proposal.label();
  const TrialState& parent = trial(t.parent);
  if (!parent.recipe || !original_.recipe) return;  // nothing to apply it to: reported where the parent was lost
  // Admitted today as the campaign admits it: the recipes tried so far are
  // the ones approved before it.
  std::vector<policy::Observation> tried;
  for (const auto& [m, other] : trials_) {
    if (m == n || other.stage != "approved" || !other.recipe) continue;
    policy::Observation o;
    o.trial = m;
    o.runs = 1;
    o.recipe_identity = recipe::settings_identity(*other.recipe);
    tried.push_back(std::move(o));
  }
  policy::Admission a = policy::admit(t.proposal, *parent.recipe, *original_.recipe, gate_, tried);
  t.recipe = std::move(a.edited);
  t.stage_why = a.why;
  switch (a.kind) {
    case policy::AdmissionKind::Unrunnable: t.stage = "unrunnable"; break;
    case policy::AdmissionKind::NoChange:
    case policy::AdmissionKind::Repeat:
      t.stage = "duplicate";
      if (a.repeat_of >= 0) t.stage_why = fmt::format("the recipe of trial {}", a.repeat_of);
      break;
    case policy::AdmissionKind::Refused:
      t.stage = "refused";
      ++refused_today_;
      break;
    case policy::AdmissionKind::Admitted: t.stage = "approved"; break;
  }
}

// The recipe file today's edit writes against the one the run launched.
void Replayer::check_launched_file(TrialState& t, const std::string& run_dir) {
  if (t.launched_file_checked || !t.recipe) return;
  t.launched_file_checked = true;
  const fs::path launched = fs::path(run_dir) / fs::path(t.recipe->config_path()).filename();
  std::error_code ec;
  if (!fs::is_regular_file(launched, ec)) return;
  const std::string was = read_file(launched.string());
  const std::string& now = t.recipe->document().text();
  if (was == now) return;
  differ("edit", t.n, 0, "the file as launched", "another file",
         t.n == 0 ? fmt::format("the original recipe ({}) differs from the file the baseline launched, {}, from line {}",
                                original_.source, record_.relative(launched.string()), first_differing_line(was, now))
                  : fmt::format("the edit now writes another file than the run launched ({}), from line {}",
                                record_.relative(launched.string()), first_differing_line(was, now)));
}

// Today's reading of the run's log; none when the log cannot be found or read.
std::optional<RunMeasure> Replayer::measure_today(TrialState& t, int run, const std::string& run_dir, const RecordedEvent& e,
                                                  const cluster::RunStatus& status, double gpu_hours) {
  const std::string where = fmt::format("journal.jsonl:{}", e.line);
  if (run_dir.empty()) {
    damaged(where, fmt::format("trial {} run {}: its directory is gone (trials/{:04d}-*/run-{}): the recorded measurement stands",
                               t.n, run, t.n, run));
    return std::nullopt;
  }
  const std::string log = record_.run_log(run_dir, result_.damaged);
  if (log.empty()) {
    damaged(record_.relative(run_dir), fmt::format("trial {} run {}: no run.log (nor run.log.gz): the recorded measurement stands", t.n, run));
    return std::nullopt;
  }
  if (log.size() > 3 && log.compare(log.size() - 3, 3, ".gz") == 0)
    result_.notes.push_back(fmt::format("trial {} run {}: read the gzipped log {}", t.n, run, record_.relative(log)));
  else
    t.logs.push_back(log);
  DirectoryRunResult r;
  r.status = status;
  r.gpu_hours = gpu_hours;
  std::error_code ec;
  if (fs::file_size(log, ec) > 0) {
    std::optional<recipe::Recipe> launched;
    if (!t.recipe) launched = record_.launched_recipe(run_dir, result_.damaged);
    const recipe::Recipe* context = t.recipe ? &*t.recipe : launched ? &*launched : nullptr;
    try {
      diagnose::DiagnoseOptions o = context ? diagnose::options_for_recipe(*context) : diagnose::DiagnoseOptions{};
      o.log_bytes = status.measured_log_bytes;  // the part the campaign measured
      r.diagnosis = diagnose::diagnose_logs({log}, o);
    } catch (const InputError& err) {
      // As the campaign does: a log that is no text leaves the run judged by its state.
      result_.notes.push_back(fmt::format("trial {} run {}: the log cannot be read: {}", t.n, run, err.what()));
    }
  }
  return measure_of(r, rule_);
}

void Replayer::on_run_finished(const RecordedEvent& e) {
  const ledger::RunFinished finished = ledger::run_finished(e.event);
  const int n = finished.trial, run = finished.run;
  const std::string where = fmt::format("journal.jsonl:{}", e.line);
  TrialState& t = trial(n);
  RunMeasure recorded;
  cluster::RunStatus status;
  try {
    recorded = measure_from_json(finished.measurement, where);
    status = cluster::run_status_from_json(finished.status);
  } catch (const std::exception& err) {
    damaged(where, fmt::format("trial {} run {}: not a finished run ({}): skipped", n, run, err.what()));
    return;
  }
  ++result_.runs;
  ++launches_;
  t.launched = true;
  const auto d = launched_dirs_.find({n, run});
  const std::string run_dir = record_.run_dir(n, run, d == launched_dirs_.end() ? "" : d->second, result_.damaged);
  // The charge: what the run's spec and elapsed time come to today.
  double gpu_hours = e.event.contains("gpu_hours") ? finished.gpu_hours : recorded.gpu_hours;
  if (!run_dir.empty()) {
    if (const auto spec = record_.run_spec(run_dir, result_.damaged)) {
      try {
        const double today = cluster::gpu_hours(cluster::run_spec_from_json(*spec), status.elapsed_s);
        if (differs_relatively(today, gpu_hours, 1e-6))
          differ("budget", n, run, fmt::format("{:.4f} GPU-hours", gpu_hours), fmt::format("{:.4f} GPU-hours", today),
                 "the run's charge (its GPUs x elapsed time) comes to another figure today");
        gpu_hours = today;
      } catch (const InputError& err) {
        damaged(record_.relative(run_dir) + "/journal.jsonl", std::string("the run's spec cannot be read: ") + err.what());
      }
    }
    check_launched_file(t, run_dir);
  }
  spent_ += gpu_hours;
  std::optional<RunMeasure> today = measure_today(t, run, run_dir, e, status, gpu_hours);
  if (today) {
    const std::string log = record_.relative(record_.run_log(run_dir, result_.damaged));
    if (today->failure != recorded.failure) {
      differ("diagnosis", n, run, or_none(recorded.failure), or_none(today->failure),
             fmt::format("the failure class read from {} changed{}", log, today->evidence.empty() ? "" : " (" + today->evidence + ")"));
    } else if (today->ok && recorded.ok && differs_relatively(today->step_time_s, recorded.step_time_s, q_.tolerance)) {
      differ("diagnosis", n, run, fmt::format("{:.4g} s", recorded.step_time_s), fmt::format("{:.4g} s", today->step_time_s),
             fmt::format("the step time read from {} moved by more than {:.1f}%", log, 100 * q_.tolerance));
    } else if (today->ok && recorded.ok && differs_relatively(today->tokens, recorded.tokens, q_.tolerance)) {
      differ("diagnosis", n, run, fmt::format("{:.1f} tokens/s/GPU", recorded.tokens), fmt::format("{:.1f} tokens/s/GPU", today->tokens),
             fmt::format("the throughput read from {} moved by more than {:.1f}%", log, 100 * q_.tolerance));
    }
  }
  const RunMeasure& m = today ? *today : recorded;
  // As Campaign::absorb: a failed run marks the trial, a measured one joins its arm.
  ++t.runs;
  t.gpu_hours += recorded.gpu_hours;
  if (!m.ok) ++failed_today_;
  if (m.ok) {
    t.arm.run_means.push_back(m.tokens);
    t.arm.blocks.insert(t.arm.blocks.end(), m.blocks.begin(), m.blocks.end());
    t.losses.push_back(m.loss);
  }
  t.last = m;
  if (recorded.ok) {
    t.recorded_arm.run_means.push_back(recorded.tokens);
    t.recorded_arm.blocks.insert(t.recorded_arm.blocks.end(), recorded.blocks.begin(), recorded.blocks.end());
    if (recorded.step_time_s > 0) t.recorded_steps.push_back(recorded.step_time_s);
    if (recorded.peak_reserved_gib) t.recorded_peak = std::max(t.recorded_peak.value_or(0), *recorded.peak_reserved_gib);
  } else {
    t.recorded_failure = recorded.failure;
  }
  // An incumbent measured again is judged against its parent at once (Campaign::remeasure_incumbent).
  if (n == recorded_.incumbent && n != 0 && finished.purpose == "remeasure" && m.ok) {
    const AcceptanceVerdict v = judge(t.arm, trial(t.parent).arm, noise_cv(), 0, rule_);
    pending_demotion_ = PendingDemotion{n, v.decision == Decision::Reject, v.why};
  }
}

// Whether the event after an incumbent's re-measurement demoted it, against today's answer.
void Replayer::check_demotion(const RecordedEvent* next) {
  if (!pending_demotion_) return;
  const PendingDemotion p = *pending_demotion_;
  pending_demotion_.reset();
  const bool recorded = next && ledger::kind_of(next->event) == ledger::EventKind::Demoted &&
                        ledger::identity_of(next->event).trial == p.trial;
  if (recorded == p.today) return;
  differ("demotion", p.trial, trial(p.trial).runs, recorded ? "demoted" : "kept", p.today ? "demoted" : "kept",
         fmt::format("re-measured as the incumbent, it would now be {}: {}", p.today ? "demoted" : "kept", p.why));
}

void Replayer::on_verdict(const RecordedEvent& e) {
  const ledger::VerdictGiven given = ledger::verdict_given(e.event);
  const int n = given.trial, against = std::max(0, given.against);
  const std::string recorded = ledger::verdict_decision(given.verdict);
  ++result_.verdicts;
  TrialState& t = trial(n);
  const AcceptanceVerdict v = judge(t.arm, trial(against).arm, noise_cv(), remeasures_[n], rule_);
  if (to_string(v.decision) != recorded)
    differ("decision", n, given.runs, recorded, to_string(v.decision),
           fmt::format("against trial {}: the decision would now go the other way: {}", against, v.why));
  // The campaign went on as recorded.
  if (recorded == "remeasure") {
    ++remeasures_[n];
  } else if (recorded == "accept" || recorded == "reject") {
    remeasures_[n] = 0;
  }
  if (recorded == "accept") t.parent = against;  // the record makes it the incumbent (ledger::apply)
}

void Replayer::on_verification(const RecordedEvent& e) {
  const ledger::Verified verified = ledger::verified(e.event);
  const int n = verified.trial;
  const LossCheck recorded_check = loss_check_from_json(verified.loss);
  const bool recorded_suspect = recorded_check.suspect, recorded_comparable = recorded_check.comparable;
  TrialState& t = trial(n);
  const TrialState& base = trial(0);
  LossCheck today;
  if (t.last && !t.last->ok) {
    today.comparable = today.suspect = true;
    today.why = "the winner failed when re-run: " + t.last->failure;
  } else if (t.last && base.losses.size() >= 2) {
    today = compare_loss(t.last->loss, base.losses[0], base.losses[1]);
  } else {
    today.why = "the baseline has fewer than two loss curves today";
  }
  auto word = [](bool comparable, bool suspect) { return !comparable ? "unknown" : suspect ? "suspect" : "passed"; };
  const std::string was = word(recorded_comparable, recorded_suspect), now = word(today.comparable, today.suspect);
  if (was != now) differ("verification", n, t.runs, was, now, "the winner's loss check would now say: " + today.why);
}

void Replayer::on_finished(const RecordedEvent& e) {
  finished_ = true;
  nlohmann::json s = ledger::campaign_finished(e.event).summary;
  if (!s.is_object()) s = nlohmann::json::object();
  const double recorded = s.value("gpu_hours", 0.0);
  if (differs_relatively(recorded, spent_, 1e-6))
    differ("budget", -1, 0, fmt::format("{:.4f} GPU-hours", recorded), fmt::format("{:.4f} GPU-hours", spent_),
           "the campaign's spending, summed again over its runs");
  const double budget = record_.inputs().budget_gpu_hours;
  if (spent_ > budget * (1 + 1e-9))
    differ("budget", -1, 0, fmt::format("{:.1f} GPU-hours budget", budget), fmt::format("{:.4f} GPU-hours spent", spent_),
           "the runs spent more than the budget");
  auto count = [&](const char* key, int today, const char* what) {
    const int was = s.value(key, 0);
    if (was != today) differ("budget", -1, 0, std::to_string(was), std::to_string(today), what);
  };
  count("launches", launches_, "launches, counted again");
  count("failed_launches", failed_today_, "failed launches, by today's diagnosis");
  count("refused", refused_today_, "proposals the gate refuses, judged again");
  const int best = s.contains("best") ? s["best"].value("trial", 0) : 0;
  if (best != recorded_.incumbent)
    differ("decision", -1, 0, fmt::format("trial {}", best), fmt::format("trial {}", recorded_.incumbent),
           "the best trial the journal's decisions lead to is not the one the summary names");
}

// How proposing each trial came out, recorded and today.
void Replayer::compare_stages() {
  for (auto& [n, t] : trials_) {
    if (n == 0 || t.stage.empty()) continue;
    ++result_.trials;
    const std::string recorded = !t.recorded_outcome.empty() ? stage_of(t.recorded_outcome) : t.launched ? "approved" : "";
    if (recorded.empty() || recorded == t.stage) continue;
    const bool gate = recorded == "refused" || t.stage == "refused";
    differ(gate ? "gate" : "edit", n, 0, recorded, t.stage,
           t.stage == "refused"      ? "the gate would now refuse it: " + t.stage_why
           : t.stage == "unrunnable" ? "the edit no longer applies: " + t.stage_why
           : t.stage == "duplicate"  ? "it would now be a duplicate of " + t.stage_why
                                     : "the gate would now approve it");
  }
}

void Replayer::replay_event(const RecordedEvent& e) {
  using ledger::EventKind;
  switch (ledger::kind_of(e.event)) {
    case EventKind::Proposal: on_proposal(e); break;
    case EventKind::RunLaunching: {
      const ledger::RunLaunching launching = ledger::run_launching(e.event);
      launched_dirs_[{launching.trial, launching.run}] = launching.dir;
      break;
    }
    case EventKind::RunFinished: on_run_finished(e); break;
    case EventKind::Verdict: on_verdict(e); break;
    case EventKind::Verification: on_verification(e); break;
    case EventKind::Trial: {
      const ledger::TrialDecided decided = ledger::trial_decided(e.event);
      trial(decided.trial).recorded_outcome = decided.outcome;
      break;
    }
    case EventKind::Finished: on_finished(e); break;
    default: break;
  }
  ledger::apply(recorded_, e.event);
}

std::vector<RecordedTrial> Replayer::recorded_trials() const {
  std::vector<RecordedTrial> out;
  const int last = trials_.empty() ? 0 : trials_.rbegin()->first;
  for (int n = 0; n <= last; ++n) {
    RecordedTrial r;
    const auto it = trials_.find(n);
    r.obs.trial = n;
    if (it == trials_.end()) {
      r.label = "(missing from the journal)";
      r.obs.outcome = TrialOutcome::Unrunnable;
      out.push_back(std::move(r));
      continue;
    }
    const TrialState& t = it->second;
    r.label = t.label;
    if (t.recipe) r.recipe.emplace(*t.recipe);
    r.obs.parent = t.parent;
    r.obs.proposal = t.proposal;
    r.obs.outcome = n == 0 ? TrialOutcome::Baseline
                           : policy::outcome_by_name(t.recorded_outcome).value_or(t.launched ? TrialOutcome::Rejected
                                                                                            : TrialOutcome::Unrunnable);
    r.obs.failure = t.recorded_failure;
    if (!t.recorded_arm.run_means.empty()) r.obs.tokens_per_s_per_gpu = median(t.recorded_arm.run_means);
    if (!t.recorded_steps.empty()) r.obs.step_time_s = median(t.recorded_steps);
    r.obs.peak_memory_gib = t.recorded_peak;
    if (t.recipe) r.obs.recipe_identity = recipe::settings_identity(*t.recipe);
    r.obs.runs = t.runs;
    r.obs.gpu_hours = t.gpu_hours;
    r.logs = t.logs;
    if (t.recipe) {
      try {
        r.obs.workload = sim::workload_from_recipe(*t.recipe);
      } catch (const InputError&) {
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void Replayer::what_if() {
  if (q_.what_if_policy.empty()) return;
  if (!original_.recipe)
    throw InputError({record_.dir(), 0, 0}, "--what-if", "the original recipe cannot be found, so no other policy can be run from it");
  const std::vector<RecordedTrial> trials = recorded_trials();
  std::vector<const Arm*> arms;
  for (const auto& [n, t] : trials_) arms.push_back(&t.recorded_arm);
  WhatIfInput in{*original_.recipe, gate_, trials};
  in.best_trial = recorded_.incumbent;
  in.seed = record_.inputs().seed;
  in.budget_gpu_hours = record_.inputs().budget_gpu_hours;
  in.noise_cv = run_to_run_cv(arms);
  in.run_cost_gpu_hours = result_.runs > 0 ? spent_ / result_.runs : 0;
  in.settings = q_.policy_settings;
  result_.what_if = run_what_if(q_.what_if_policy, in);
}

ReplayResult Replayer::run() {
  result_.dir = record_.dir();
  result_.damaged = record_.damaged();
  baseline();
  const auto& events = record_.events();
  for (std::size_t i = 0; i < events.size(); ++i) {
    replay_event(events[i]);
    if (pending_demotion_ && ledger::kind_of(events[i].event) == ledger::EventKind::RunFinished)
      check_demotion(i + 1 < events.size() ? &events[i + 1] : nullptr);
  }
  compare_stages();
  if (!finished_) result_.notes.push_back("the journal has no `finished` event (an interrupted campaign): the summary is not compared");
  what_if();
  return std::move(result_);
}

}  // namespace

ReplayResult replay_campaign(const ReplayRequest& request) {
  // The flags are checked before the record is read: a mistyped model is not
  // found out after the whole replay.
  if (request.policy_settings.llm && !policy::policy_asks_llm(request.what_if_policy))
    throw InputError({}, "--llm", "the model is only asked with --what-if llm or --what-if hybrid");
  if (!request.what_if_policy.empty()) policy::make_policy(request.what_if_policy, request.policy_settings, "--what-if");
  Replayer r(request);
  return r.run();
}

nlohmann::json to_json(const ReplayResult& r) {
  nlohmann::json differences = nlohmann::json::array(), damaged = nlohmann::json::array();
  for (const ReplayDifference& d : r.differences) {
    differences.push_back({{"kind", d.kind}, {"trial", d.trial}, {"run", d.run}, {"recorded", d.recorded},
                           {"today", d.today}, {"what", d.what}});
  }
  for (const DamagedInput& d : r.damaged) damaged.push_back({{"where", d.where}, {"what", d.what}});
  nlohmann::json j = {{"dir", r.dir},         {"original", r.original}, {"trials", r.trials},
                      {"runs", r.runs},       {"verdicts", r.verdicts}, {"differs", r.differs()},
                      {"differences", differences}, {"damaged", damaged}, {"notes", r.notes}};
  if (r.what_if) j["what_if"] = to_json(*r.what_if);
  return j;
}

}  // namespace attune::campaign
