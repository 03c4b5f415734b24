// Bench (`attune bench`): every policy tuned on every scenario of a
// directory on the simulated cluster, with the same budget, gate and seeds,
// each (policy, scenario, seed) a real campaign (run_tune, its own directory,
// no lessons so no result depends on an earlier one), many at once on their
// own threads. Each campaign is scored as benchmarks score it: the final
// recipe's true throughput over the true optimum, its gain over the recipe as
// written, the GPU-hours until its measured best first reached 95% of its
// final value, failed launches and gate refusals. The result is summarised
// per policy (medians over scenarios of the medians over seeds), checked
// against the targets of docs/benchmarks.md and written as bench.json,
// bench.md and bench.svg (best so far against GPU-hours, per policy).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/campaign/tune_result.h"
#include "attune/gate/correctness_gate.h"
#include "attune/policy/policy.h"
#include "attune/sim/scenario_report.h"

namespace attune::campaign {

struct BenchRequest {
  std::string scenarios_dir = "recipes/scenarios";  // a directory of scenario directories, or one scenario
  std::vector<std::string> policies;                // empty: default_bench_policies()
  policy::PolicySettings policy_settings;           // the LLM's, for llm and hybrid
  std::optional<double> budget_gpu_hours;           // none: each scenario's own (its harness.yaml)
  int seeds = 5;                                    // campaign seeds 1..seeds
  int jobs = 0;                                     // campaigns at once (0: one per core)
  std::string out_dir;                              // "" = campaigns/bench-<time>
  bool keep_runs = false;                           // keep each campaign's trials/ (run logs); else only its journal, summary and best/
};

// One campaign of the bench.
struct BenchCampaign {
  std::string policy, scenario;
  int seed = 0;
  std::string dir;
  double ratio_to_optimum = 0;        // true tokens/s/GPU of the final recipe / true optimum (0: it fails under the truth)
  double gain = 0;                    // final / starting throughput (true where the scenario's truth gives both, else measured)
  double gpuh_to_95pct = 0;           // GPU-hours spent when the measured best first reached 95% of its final value
  double gpu_hours = 0, budget_gpu_hours = 0;
  int trials = 0, launches = 0, failed_launches = 0, refused = 0;
  std::string stop_reason;
  double seconds = 0;                 // wall time of the campaign
  // The incumbent's measured throughput over the true optimum after each
  // trial, against the GPU-hours spent by then (the campaign's journal).
  std::vector<std::pair<double, double>> curve;
};

// What the bench knows of a scenario beyond the campaigns.
struct BenchScenario {
  std::string name, dir;
  double optimum_tokens_per_s_per_gpu = 0;
  double baseline_tokens_per_s_per_gpu = 0;   // true, of the recipe as written (0: not known)
  std::optional<double> prior_regret;         // harness.yaml's recorded figure
  bool true_gain() const { return baseline_tokens_per_s_per_gpu > 0; }
};

// A campaign's final recipe scored as benchmarks score it: its true
// throughput x (1 - its late-OOM risk) / the scenario's true optimum under
// the gate (0 when the gate refuses it or it fails). Only a benchmark knows
// the scenario's truth: the campaign never sees it. A recipe near the memory
// limit can out-run the optimum, which counts only settings that never OOM,
// and still fail a share of long runs.
sim::TunedScore score_campaign(const TuneResult& r, const BenchScenario& scenario, const gate::GateOptions& gate = {});

struct BenchResult {
  std::string out_dir;
  std::optional<double> budget_gpu_hours;     // --budget, else the scenarios' own when they all agree
  int seeds = 0, jobs = 0;
  std::vector<std::string> policies;
  std::vector<BenchScenario> scenarios;       // sorted by name
  std::vector<BenchCampaign> campaigns;       // policy, scenario, seed order
  double wall_seconds = 0;
  bool interrupted = false;
};

struct BenchProgress {
  int done = 0, total = 0;
  const BenchCampaign* finished = nullptr;    // the campaign that just ended
  double elapsed_s = 0;
};

struct BenchHooks {
  std::function<bool()> interrupted;
  std::function<void(const BenchProgress&)> on_progress;  // one call at a time
};

// "rules,random,grid,planner,optuna,xgb", the ones registered (and llm,
// hybrid when an LLM is configured).
std::vector<std::string> default_bench_policies(const policy::PolicySettings& settings);
// "rules,random" split and checked: InputError naming --policies for an
// unknown name (listing the known ones), a repeat, or an LLM policy without --llm.
std::vector<std::string> parse_bench_policies(const std::string& list, const policy::PolicySettings& settings);

// Runs the bench and writes bench.json, bench.md and bench.svg into its
// directory. InputError for a bad request (no scenarios, a directory that
// holds a bench already, a scenario without a budget); a campaign's
// InputError stops the others and is thrown, naming the campaign.
BenchResult run_bench(const BenchRequest& request, const BenchHooks& hooks = {});

// Per policy: the medians over scenarios of each scenario's median over
// seeds, and failed launches over all launches.
struct BenchSummary {
  double median_ratio_to_optimum = 0;
  double median_gain = 0;
  double failed_launch_rate = 0;
  double median_gpuh_to_95pct = 0;
  double median_refused = 0;          // gate refusals per campaign
  int launches = 0, failed_launches = 0;
};
BenchSummary summarize(const BenchResult& r, const std::string& policy);

// The incumbent's measured throughput (as its trial's decision recorded it)
// against the GPU-hours spent by then, folded from the journal of the
// campaign in `campaign_dir` by the ledger: a point at the baseline, at each
// acceptance, and each time the incumbent is taken back.
std::vector<std::pair<double, double>> incumbent_curve(const std::string& campaign_dir);

// One target of docs/benchmarks.md: what it asks, the figure, whether it is met
// (null: a policy it needs was not run).
struct BenchTarget {
  std::string target, measured;
  std::optional<bool> met;
};
std::vector<BenchTarget> bench_targets(const BenchResult& r);

// {"budget_gpuh", "seeds", "policies": {name: {"median_ratio_to_optimum", "median_gain",
// "failed_launch_rate", "median_gpuh_to_95pct", "scenarios": [{"name", "ratio_to_optimum": [per seed],
// "gain": [..], "curves": [per seed [[GPU-hours, best so far / optimum], ..]], ...}]}}, "scenarios",
// "targets", ...}
nlohmann::json to_json(const BenchResult& r);
// The summary table, the targets and the per-scenario table.
std::string bench_markdown(const BenchResult& r);
// Best so far (over the true optimum) against GPU-hours: one polyline per
// policy, the median over scenarios and seeds on a common GPU-hour grid
// (0 to the median campaign budget).
std::string bench_chart_svg(const BenchResult& r);

}  // namespace attune::campaign
