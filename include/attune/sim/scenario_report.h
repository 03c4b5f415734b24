// ScenarioReport: what each benchmark scenario asks of a tuner, measured —
// its baseline and true optimum, how far the nominal model's optimum falls
// short under the truth (prior regret), where one-lever greedy gets stuck,
// the traps (settings the nominal model says run that fail under the truth),
// what one trial of the baseline costs and how many fit the budget — and
// whether the set of scenarios meets the targets that make it a benchmark
// worth winning (docs/scenarios.md). `attune sim scenarios` prints it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/gate/correctness_gate.h"
#include "attune/sim/optimum.h"
#include "attune/sim/scenario.h"

namespace attune::sim {

struct ScenarioFigures {
  std::string name;
  std::string dir;
  double baseline = 0;            // true tokens/s/GPU of the recipe as written
  double optimum = 0;             // true optimum
  std::vector<LeverEdit> optimum_edits;
  double prior_regret = 0;        // 1 - truth of the prior's optimum / true optimum
  std::string prior_failure;      // how the prior's optimum fails under the truth ("" = it runs)
  std::vector<LeverEdit> prior_edits;
  double greedy = 0;              // true tokens/s/GPU where one-lever greedy stops
  double greedy_shortfall = 0;    // 1 - greedy / optimum
  int greedy_trials = 0;
  int traps = 0;                  // one-lever moves from the baseline (and the prior's optimum) the prior says run, the truth fails
  double trial_gpu_hours = 0;     // one measured trial of the baseline
  double budget_gpu_hours = 200;
  double trials_that_fit = 0;     // budget / trial cost
  bool vendor_tuned = false;      // starts within 10% of its optimum
  long long settings = 0;         // settings the search covered
  double search_seconds = 0;      // sim optimum under the truth, on one core
};

struct ScenarioTargets {
  int regret_5pct = 0;            // scenarios whose prior regret is >= 5% (target >= 8)
  double median_regret = 0;       // (target 5-15%)
  int greedy_stuck_3pct = 0;      // (target >= 5)
  int within_10pct = 0;           // (target >= 3)
  int with_traps = 0;             // (target >= 4)
  int too_few_trials = 0;         // scenarios with fewer than 15 trials in their budget (target 0)
  double slowest_search_s = 0;    // (target < 2 s)
  bool met = false;
};

struct ScenarioReport {
  std::vector<ScenarioFigures> scenarios;
  ScenarioTargets targets;
};

// Figures for one scenario directory (its truth applied; the gate's options
// as given: FP8 only when allowed).
ScenarioFigures scenario_figures(const std::string& dir, const gate::CorrectnessGate& gate);
// With `record`, each scenario's figures are written into its harness file
// (harness.yaml beside scenario.yaml, created when missing).
ScenarioReport scenario_report(const std::vector<std::string>& dirs, const gate::CorrectnessGate& gate,
                               bool record = false);
// What the harness records of a scenario's figures.
RecordedFigures recorded(const ScenarioFigures& f);
ScenarioTargets targets_of(const std::vector<ScenarioFigures>& scenarios);

nlohmann::json to_json(const ScenarioReport& r);

// A tuner's final recipe on a scenario, scored as benchmarks score it: its
// noiseless throughput under the truth over the true optimum. A recipe the
// gate refuses against the scenario's, or that fails under the truth, scores
// 0; one near the memory limit counts what it delivers on average,
// throughput x (1 - its chance of a late OOM).
struct TunedScore {
  double baseline = 0;          // true tokens/s/GPU of the scenario's recipe
  double optimum = 0;           // the true optimum
  double tuned = 0;             // true tokens/s/GPU of the tuned recipe (0 when refused or failing)
  double oom_risk = 0;
  double score = 0;             // tuned x (1 - oom_risk) / optimum
  std::string refused;          // the gate's reasons ("" = approved)
  std::string failure;          // how it fails under the truth ("" = it runs)
};
TunedScore score_tuned(const std::string& scenario_dir, const recipe::Recipe& tuned, const gate::CorrectnessGate& gate);
// The same with the scenario's true optimum known already (a bench scores
// thirty campaigns a scenario: the search under the truth is the costly part,
// and its answer depends only on the scenario and the gate's options).
TunedScore score_tuned(const std::string& scenario_dir, const recipe::Recipe& tuned, const gate::CorrectnessGate& gate,
                       double known_optimum);
nlohmann::json to_json(const TunedScore& s);

}  // namespace attune::sim
