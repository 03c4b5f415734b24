#include "attune/campaign/what_if.h"

#include <algorithm>

#include <fmt/format.h>

#include "attune/campaign/acceptance.h"
#include "attune/policy/admission.h"
#include "attune/policy/policy.h"
#include "attune/policy/rules_policy.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"
#include "attune/util/error.h"
#include "attune/util/json_input.h"

namespace attune::campaign {

namespace {

using json_field::optional_json;
using policy::Observation;
using policy::TrialOutcome;

// The rules policy's correction, fitted on every recorded measurement (as it
// would be asked for the record's next trial, from its final best).
policy::ModelCorrection recorded_correction(const WhatIfInput& in, double min_gain_now) {
  std::vector<Observation> history;
  for (const RecordedTrial& t : in.trials) history.push_back(t.obs);
  const RecordedTrial& best = in.trials.at(static_cast<std::size_t>(in.best_trial));
  const recipe::Recipe& incumbent = best.recipe ? *best.recipe : in.original;
  const std::vector<policy::Lesson> no_lessons;
  policy::PolicyContext ctx{in.original, incumbent, in.best_trial, best.obs.tokens_per_s_per_gpu.value_or(0), min_gain_now,
                            history, nullptr, in.gate, no_lessons, in.seed, static_cast<int>(in.trials.size()), 0, 0, {}, {}};
  policy::RulesPolicy rules;
  rules.propose(ctx);
  return rules.correction();
}

// How one what-if trial is answered: the record's measurement of the same file, else the corrected model's.
struct Answer {
  std::string source;
  int recorded_trial = -1;
  bool ok = false;
  std::string failure;
  std::optional<double> tokens, step_time_s, memory_gib;
  double gpu_hours = 0;
};

class WhatIf {
 public:
  WhatIf(const std::string& policy, const WhatIfInput& in)
      : in_(in), policy_(policy::make_policy(policy, in.settings, "--what-if")) {
    result_.policy = policy;
    threshold_ = min_gain(rule_, in.noise_cv, 2, 2);
    correction_ = recorded_correction(in, threshold_);
    result_.correction = policy::to_json(correction_);
  }
  WhatIfResult run();

 private:
  Answer answer(const recipe::Recipe& edited) const;
  std::vector<std::string> logs_of(int trial) const;
  void one_trial(int n);
  void best_of_record();

  const WhatIfInput& in_;
  std::unique_ptr<policy::Policy> policy_;
  AcceptanceRule rule_;
  double threshold_ = 0.01;
  policy::ModelCorrection correction_;
  WhatIfResult result_;
  std::vector<Observation> history_;
  std::vector<std::optional<recipe::Recipe>> recipes_;   // the what-if's trials' recipes
  std::vector<std::string> sources_, labels_;
  std::vector<int> answered_by_;   // per what-if trial: the recorded trial whose measurement answered it (-1: none)
  int incumbent_ = 0;
  double spent_ = 0;
  bool stopped_ = false;
};

Answer WhatIf::answer(const recipe::Recipe& edited) const {
  Answer a;
  const std::string& text = edited.document().text();
  for (const RecordedTrial& t : in_.trials) {
    if (!t.recipe || t.obs.runs == 0 || t.recipe->document().text() != text) continue;
    a.source = "measured";
    a.recorded_trial = t.obs.trial;
    a.ok = t.obs.tokens_per_s_per_gpu.has_value();
    a.failure = t.obs.failure;
    a.tokens = t.obs.tokens_per_s_per_gpu;
    a.step_time_s = t.obs.step_time_s;
    a.memory_gib = t.obs.peak_memory_gib;
    a.gpu_hours = t.obs.gpu_hours;
    return a;
  }
  a.source = "predicted";
  a.gpu_hours = in_.run_cost_gpu_hours;
  try {
    const sim::Prediction p = sim::predict(sim::workload_from_recipe(edited), correction_.perturbation(), sim::Detail::Numbers);
    a.ok = p.ok;
    a.failure = p.failure;
    if (p.ok) a.tokens = p.tokens_per_s_per_gpu, a.step_time_s = p.step_time_s;
    a.memory_gib = p.memory.total_gib;
  } catch (const InputError& e) {
    a.failure = "unknown";
  }
  return a;
}

std::vector<std::string> WhatIf::logs_of(int trial) const {
  if (trial < 0 || trial >= static_cast<int>(answered_by_.size())) return {};
  const int recorded = answered_by_[static_cast<std::size_t>(trial)];
  if (recorded < 0 || recorded >= static_cast<int>(in_.trials.size())) return {};
  return in_.trials[static_cast<std::size_t>(recorded)].logs;
}

void WhatIf::one_trial(int n) {
  WhatIfTrial row;
  row.trial = n;
  if (n < static_cast<int>(in_.trials.size())) {
    const RecordedTrial& r = in_.trials[static_cast<std::size_t>(n)];
    row.recorded_label = r.label;
    row.recorded_outcome = policy::to_string(r.obs.outcome);
    row.recorded_tokens = r.obs.tokens_per_s_per_gpu;
  }
  if (stopped_) {
    result_.trials.push_back(row);
    return;
  }
  const recipe::Recipe& inc = *recipes_[static_cast<std::size_t>(incumbent_)];
  const std::vector<policy::Lesson> no_lessons;
  const double left = in_.budget_gpu_hours - spent_;
  policy::PolicyContext ctx{in_.original, inc, incumbent_, history_[static_cast<std::size_t>(incumbent_)].tokens_per_s_per_gpu.value_or(0),
                            threshold_, history_, nullptr, in_.gate, no_lessons, in_.seed, n, left, in_.run_cost_gpu_hours,
                            [this](int t) { return logs_of(t); }, [](int) { return nlohmann::json(); }};
  const policy::PolicyAnswer a = policy_->propose(ctx);
  for (std::string& note : policy_->take_notes()) result_.policy_notes.push_back(fmt::format("trial {}: {}", n, note));
  if (!a.proposal || left <= 0) {
    stopped_ = true;
    result_.stop_reason = left <= 0 ? "the budget is spent" : a.stop_reason;
    result_.trials.push_back(row);
    return;
  }
  Observation o;
  o.trial = n;
  o.parent = incumbent_;
  o.proposal = *a.proposal;
  row.label = a.proposal->label();
  int answered_by = -1;
  policy::Admission admitted = policy::admit(*a.proposal, inc, in_.original, in_.gate, history_);
  std::optional<recipe::Recipe>& edited = admitted.edited;
  o.recipe_identity = admitted.identity;
  o.reason = admitted.why;
  if (edited) {
    try {
      o.workload = sim::workload_from_recipe(*edited);
    } catch (const InputError&) {
    }
  }
  if (admitted.kind == policy::AdmissionKind::Unrunnable) {
    o.outcome = TrialOutcome::Unrunnable;
  } else if (admitted.kind == policy::AdmissionKind::NoChange || admitted.kind == policy::AdmissionKind::Repeat) {
    o.outcome = TrialOutcome::Duplicate;
  } else if (admitted.kind == policy::AdmissionKind::Refused) {
    o.outcome = TrialOutcome::Refused;
  } else {
    const Answer ans = answer(*edited);
    row.source = ans.source;
    answered_by = ans.recorded_trial;
    ++(ans.source == "measured" ? result_.measured : result_.predicted);
    spent_ += ans.gpu_hours;
    o.runs = 1;
    o.gpu_hours = ans.gpu_hours;
    o.tokens_per_s_per_gpu = ans.tokens;
    o.step_time_s = ans.step_time_s;
    o.peak_memory_gib = ans.memory_gib;
    const double base = history_[static_cast<std::size_t>(incumbent_)].tokens_per_s_per_gpu.value_or(0);
    if (!ans.ok) {
      o.outcome = TrialOutcome::Failed;
      o.failure = ans.failure.empty() ? "unknown" : ans.failure;
      o.reason = "fails: " + o.failure;
    } else if (base > 0 && *ans.tokens / base - 1 > threshold_) {
      o.outcome = TrialOutcome::Accepted;
      o.reason = fmt::format("{:+.2f}% > {:.2f}% over trial {}", 100 * (*ans.tokens / base - 1), 100 * threshold_, incumbent_);
    } else {
      o.outcome = TrialOutcome::Rejected;
      o.reason = fmt::format("{:+.2f}% is not more than {:.2f}%", base > 0 ? 100 * (*ans.tokens / base - 1) : 0.0, 100 * threshold_);
    }
  }
  row.outcome = policy::to_string(o.outcome);
  row.reason = o.reason;
  row.tokens = o.tokens_per_s_per_gpu;
  const bool accepted = o.outcome == TrialOutcome::Accepted;
  const bool ran = o.runs > 0;  // only what ran is a recipe tried already
  history_.push_back(std::move(o));
  recipes_.push_back(ran ? std::move(edited) : std::nullopt);
  sources_.push_back(row.source);
  labels_.push_back(row.label);
  answered_by_.push_back(answered_by);
  if (accepted) incumbent_ = n;
  result_.trials.push_back(std::move(row));
}

void WhatIf::best_of_record() {
  WhatIfBest& b = result_.recorded;
  b.trial = in_.best_trial;
  b.tokens = in_.trials.at(static_cast<std::size_t>(in_.best_trial)).obs.tokens_per_s_per_gpu;
  b.source = "measured";
  for (int t = in_.best_trial; t != 0;) {
    const RecordedTrial& r = in_.trials.at(static_cast<std::size_t>(t));
    b.path.insert(b.path.begin(), r.label);
    if (r.obs.parent == t) break;
    t = r.obs.parent;
  }
}

WhatIfResult WhatIf::run() {
  const RecordedTrial& base = in_.trials.at(0);
  Observation o = base.obs;
  o.outcome = TrialOutcome::Baseline;
  o.recipe_identity = recipe::settings_identity(in_.original);
  history_.push_back(o);
  recipes_.emplace_back(in_.original);
  sources_.push_back("measured");
  labels_.push_back("baseline");
  answered_by_.push_back(0);
  for (int n = 1; n < static_cast<int>(in_.trials.size()); ++n) one_trial(n);
  best_of_record();
  result_.policy_usage = policy_->usage();
  WhatIfBest& b = result_.what_if;
  b.trial = incumbent_;
  b.tokens = history_[static_cast<std::size_t>(incumbent_)].tokens_per_s_per_gpu;
  b.source = sources_[static_cast<std::size_t>(incumbent_)];
  for (int t = incumbent_; t != 0; t = history_[static_cast<std::size_t>(t)].parent)
    b.path.insert(b.path.begin(), labels_[static_cast<std::size_t>(t)]);
  return std::move(result_);
}

nlohmann::json best_json(const WhatIfBest& b) {
  return {{"trial", b.trial}, {"tokens_per_s_per_gpu", optional_json(b.tokens)}, {"source", b.source}, {"path", b.path}};
}

}  // namespace

WhatIfResult run_what_if(const std::string& policy, const WhatIfInput& in) {
  if (in.trials.empty()) throw InputError({}, "--what-if", "the record holds no baseline to start from");
  WhatIf w(policy, in);
  return w.run();
}

nlohmann::json to_json(const WhatIfResult& r) {
  nlohmann::json trials = nlohmann::json::array();
  for (const WhatIfTrial& t : r.trials) {
    trials.push_back({{"trial", t.trial},
                      {"recorded", {{"label", t.recorded_label}, {"outcome", t.recorded_outcome},
                                    {"tokens_per_s_per_gpu", optional_json(t.recorded_tokens)}}},
                      {"what_if", {{"label", t.label}, {"outcome", t.outcome}, {"reason", t.reason}, {"source", t.source},
                                   {"tokens_per_s_per_gpu", optional_json(t.tokens)}}}});
  }
  return {{"policy", r.policy},       {"trials", trials},         {"recorded_best", best_json(r.recorded)},
          {"what_if_best", best_json(r.what_if)}, {"stop_reason", r.stop_reason}, {"measured", r.measured},
          {"predicted", r.predicted}, {"correction", r.correction}, {"policy_usage", r.policy_usage},
          {"policy_notes", r.policy_notes}};
}

}  // namespace attune::campaign
