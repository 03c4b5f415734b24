#include "attune/sim/scenario_report.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "attune/recipe/recipe.h"
#include "attune/sim/run_log.h"
#include "attune/sim/scenario.h"

namespace attune::sim {

namespace {

constexpr int kMinTrials = 15;
constexpr int kDefaultMeasureSteps = 50;

bool runs(const Prediction& p) { return p.ok && p.oom_risk == 0; }

// Settings the nominal model says run and the truth fails (or puts at risk
// of a late OOM): the baseline's one-lever neighbours and the prior's optimum.
int count_traps(const Optimum& o, const Perturbation& truth) {
  int traps = 0;
  auto check = [&](const Workload& w) {
    if (runs(predict(w, {}, Detail::Numbers)) && !runs(predict(w, truth, Detail::Numbers))) ++traps;
  };
  for (const Workload& w : one_lever_moves(o.baseline_workload, o.baseline_workload, o.space)) check(w);
  if (o.prior) check(o.prior->workload);
  return traps;
}

}  // namespace

ScenarioFigures scenario_figures(const std::string& dir, const gate::CorrectnessGate& gate) {
  const Scenario s = read_scenario(dir);
  ScenarioFigures f;
  f.name = s.name.empty() ? std::filesystem::path(s.dir).filename().string() : s.name;
  f.dir = s.dir;
  const Perturbation truth = s.truth.empty() ? Perturbation{} : read_perturbation(s.truth);
  const ScenarioHarness harness = s.harness.empty() ? ScenarioHarness{} : read_harness(s.harness);
  const recipe::Recipe r = recipe::Recipe::load(s.recipe);
  const auto start = std::chrono::steady_clock::now();
  const Optimum o = find_optimum(r, gate, truth);
  f.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  f.baseline = o.baseline.ok ? o.baseline.tokens_per_s_per_gpu : 0;
  f.optimum = o.best.prediction.tokens_per_s_per_gpu;
  f.optimum_edits = o.best.edits;
  f.prior_regret = o.prior_regret;
  if (o.prior) {
    f.prior_edits = o.prior->edits;
    if (!o.prior_under_truth.ok) f.prior_failure = o.prior_under_truth.failure;
    else if (o.prior_under_truth.oom_risk > 0) f.prior_failure = "oom risk";
  }
  if (o.greedy) {
    f.greedy = o.greedy->prediction.tokens_per_s_per_gpu;
    f.greedy_trials = o.greedy->trials;
    f.greedy_shortfall = o.greedy->shortfall;
  }
  f.settings = o.settings;
  f.vendor_tuned = f.optimum > 0 && f.baseline >= 0.9 * f.optimum;
  f.traps = count_traps(o, truth);
  const int steps = r.measure().steps > 0 ? r.measure().steps : kDefaultMeasureSteps;
  if (o.baseline.step_time_s > 0) {
    f.trial_gpu_hours = expected_run_seconds(o.baseline_workload, o.baseline, truth, steps) *
                        o.baseline_workload.plan.world / 3600.0;
  }
  f.budget_gpu_hours = harness.budget_gpu_hours;
  f.trials_that_fit = f.trial_gpu_hours > 0 ? f.budget_gpu_hours / f.trial_gpu_hours : 0;
  return f;
}

ScenarioTargets targets_of(const std::vector<ScenarioFigures>& scenarios) {
  ScenarioTargets t;
  std::vector<double> regrets;
  for (const ScenarioFigures& f : scenarios) {
    regrets.push_back(f.prior_regret);
    t.regret_5pct += f.prior_regret >= 0.05;
    t.greedy_stuck_3pct += f.greedy_shortfall >= 0.03;
    t.within_10pct += f.vendor_tuned;
    t.with_traps += f.traps > 0;
    t.too_few_trials += f.trials_that_fit < kMinTrials;
    t.slowest_search_s = std::max(t.slowest_search_s, f.search_seconds);
  }
  if (!regrets.empty()) {
    std::sort(regrets.begin(), regrets.end());
    const std::size_t n = regrets.size();
    t.median_regret = n % 2 ? regrets[n / 2] : (regrets[n / 2 - 1] + regrets[n / 2]) / 2;
  }
  t.met = t.regret_5pct >= 8 && t.median_regret >= 0.05 && t.median_regret <= 0.15 && t.greedy_stuck_3pct >= 5 &&
          t.within_10pct >= 3 && t.with_traps >= 4 && t.too_few_trials == 0 && t.slowest_search_s < 2 &&
          scenarios.size() >= 20;
  return t;
}

RecordedFigures recorded(const ScenarioFigures& f) {
  auto lines = [](const std::vector<LeverEdit>& edits) {
    std::vector<std::string> out;
    for (const auto& e : edits) out.push_back(e.lever + ": " + (e.from.empty() ? "(default)" : e.from) + " -> " + e.to);
    return out;
  };
  RecordedFigures out;
  out.baseline = f.baseline;
  out.optimum = f.optimum;
  out.prior_regret = f.prior_regret;
  out.greedy_shortfall = f.greedy_shortfall;
  out.greedy_trials = f.greedy_trials;
  out.traps = f.traps;
  out.trial_gpu_hours = f.trial_gpu_hours;
  out.optimum_edits = lines(f.optimum_edits);
  out.prior_edits = lines(f.prior_edits);
  return out;
}

ScenarioReport scenario_report(const std::vector<std::string>& dirs, const gate::CorrectnessGate& gate, bool record) {
  ScenarioReport r;
  for (const auto& d : dirs) {
    r.scenarios.push_back(scenario_figures(d, gate));
    if (record) record_figures((std::filesystem::path(d) / "harness.yaml").string(), recorded(r.scenarios.back()));
  }
  r.targets = targets_of(r.scenarios);
  return r;
}

nlohmann::json to_json(const ScenarioReport& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const ScenarioFigures& f : r.scenarios) {
    list.push_back({{"name", f.name},
                    {"baseline_tokens_per_s_per_gpu", f.baseline},
                    {"optimum_tokens_per_s_per_gpu", f.optimum},
                    {"optimum_edits", edits_json(f.optimum_edits)},
                    {"prior_regret", f.prior_regret},
                    {"prior_failure", f.prior_failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.prior_failure)},
                    {"prior_edits", edits_json(f.prior_edits)},
                    {"greedy_tokens_per_s_per_gpu", f.greedy},
                    {"greedy_shortfall", f.greedy_shortfall},
                    {"greedy_trials", f.greedy_trials},
                    {"traps", f.traps},
                    {"trial_gpu_hours", f.trial_gpu_hours},
                    {"budget_gpu_hours", f.budget_gpu_hours},
                    {"trials_that_fit", f.trials_that_fit},
                    {"vendor_tuned", f.vendor_tuned},
                    {"settings_searched", f.settings},
                    {"search_seconds", f.search_seconds}});
  }
  const ScenarioTargets& t = r.targets;
  return {{"scenarios", list},
          {"targets",
           {{"scenarios", r.scenarios.size()},
            {"prior_regret_at_least_5pct", t.regret_5pct},
            {"median_prior_regret", t.median_regret},
            {"greedy_stuck_at_least_3pct", t.greedy_stuck_3pct},
            {"start_within_10pct", t.within_10pct},
            {"with_traps", t.with_traps},
            {"too_few_trials", t.too_few_trials},
            {"slowest_search_s", t.slowest_search_s},
            {"met", t.met}}}};
}

namespace {

// The tuned recipe's score under the truth, `out`'s baseline and optimum given.
TunedScore scored(TunedScore out, const recipe::Recipe& original, const recipe::Recipe& tuned, const Perturbation& truth,
                  const gate::CorrectnessGate& gate) {
  const gate::Verdict v = gate.check(original, tuned);
  if (!v.allowed) {
    for (const auto& r : v.reasons) out.refused += (out.refused.empty() ? "" : "; ") + r.key + ": " + r.message;
    return out;
  }
  const Prediction p = predict(workload_from_recipe(tuned), truth, Detail::Numbers);
  if (!p.ok) {
    out.failure = p.failure;
    return out;
  }
  out.tuned = p.tokens_per_s_per_gpu;
  out.oom_risk = p.oom_risk;
  out.score = out.optimum > 0 ? out.tuned * (1 - out.oom_risk) / out.optimum : 0;
  return out;
}

// What scoring a scenario needs: its truth and its recipe as written.
struct ScoringInputs {
  Perturbation truth;
  recipe::Recipe original;
};

ScoringInputs scoring_inputs(const std::string& scenario_dir) {
  const Scenario s = read_scenario(scenario_dir);
  return {s.truth.empty() ? Perturbation{} : read_perturbation(s.truth), recipe::Recipe::load(s.recipe)};
}

}  // namespace

TunedScore score_tuned(const std::string& scenario_dir, const recipe::Recipe& tuned, const gate::CorrectnessGate& gate) {
  const ScoringInputs in = scoring_inputs(scenario_dir);
  OptimumOptions options;
  options.prior = options.greedy = false;
  const Optimum o = find_optimum(in.original, gate, in.truth, options);
  TunedScore out;
  out.baseline = o.baseline.ok ? o.baseline.tokens_per_s_per_gpu : 0;
  out.optimum = o.best.prediction.tokens_per_s_per_gpu;
  return scored(std::move(out), in.original, tuned, in.truth, gate);
}

TunedScore score_tuned(const std::string& scenario_dir, const recipe::Recipe& tuned, const gate::CorrectnessGate& gate,
                       double known_optimum) {
  const ScoringInputs in = scoring_inputs(scenario_dir);
  const Prediction base = predict(workload_from_recipe(in.original), in.truth);  // as find_optimum predicts it
  TunedScore out;
  out.baseline = base.ok ? base.tokens_per_s_per_gpu : 0;
  out.optimum = known_optimum;
  return scored(std::move(out), in.original, tuned, in.truth, gate);
}

nlohmann::json to_json(const TunedScore& s) {
  auto text_or_null = [](const std::string& t) { return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t); };
  return {{"score", s.score},
          {"tuned_tokens_per_s_per_gpu", s.tuned},
          {"optimum_tokens_per_s_per_gpu", s.optimum},
          {"baseline_tokens_per_s_per_gpu", s.baseline},
          {"oom_risk", s.oom_risk},
          {"refused", text_or_null(s.refused)},
          {"failure", text_or_null(s.failure)}};
}

}  // namespace attune::sim
