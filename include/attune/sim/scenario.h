// Scenario: one benchmark starting point (recipes/scenarios/<name>/) — a
// recipe written for another setting and the hardware it now runs on. Three
// files, read by different parties:
//  - scenario.yaml, public: name, title, what it was written for and runs on,
//    the recipe (or its attune wrapper);
//  - truth.yaml, hidden: how this cluster differs from the nominal model
//    (a Perturbation: factors, signed lever effects, failures, noise, seed).
//    Only the `sim` cluster backend and the benchmark harness read it;
//    `attune sim ...` applies it only with --truth;
//  - harness.yaml, hidden: what only the harness and `ctest -L scenarios`
//    read — what is off and what a good tuner should find, the campaign
//    budget, and the recorded figures (baseline, true optimum, prior regret,
//    greedy shortfall) that the tests hold the simulator to.
// The format is docs/scenarios.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attune::sim {

struct Scenario {
  std::string path;           // the scenario file
  std::string dir;            // its directory
  std::string name, title, written_for, runs_on;
  std::string recipe;         // resolved relative to the scenario file
  std::string truth;          // truth.yaml beside it ("" when there is none: the nominal model)
  std::string harness;        // harness.yaml beside it ("" when there is none)
};

// What harness.yaml records.
struct ScenarioHarness {
  std::string what_is_off;
  double budget_gpu_hours = 200;        // a campaign's budget on this scenario
  bool vendor_tuned = false;            // the recipe starts near its optimum, as vendor-tuned ones do
  std::string trap;                     // the OOM or failure the prior does not predict ("" = none)
  // Recorded by `attune sim scenarios --record`.
  std::optional<double> baseline_tokens_per_s_per_gpu;
  std::optional<double> optimum_tokens_per_s_per_gpu;
  std::optional<double> prior_regret;
  std::optional<double> greedy_shortfall;
  std::optional<int> greedy_trials;
  std::optional<int> traps;
  std::optional<double> trial_gpu_hours;
  std::vector<std::string> optimum_edits;  // "lever: from -> to"
  std::vector<std::string> prior_edits;
};

// True for a scenario file (YAML named scenario.yaml, or any YAML with
// `recipe:` and `runs_on:`) or a directory that holds scenario.yaml.
bool is_scenario(const std::string& path);
// The scenario file of a scenario directory or file.
std::string scenario_file(const std::string& path);
// Throws InputError naming the file, line and key on bad input.
Scenario read_scenario(const std::string& path);
ScenarioHarness read_harness(const std::string& path);
// Every scenario directory under `root`, sorted by name; `root` itself when it
// is one.
std::vector<std::string> scenario_dirs(const std::string& root);

struct RecordedFigures {
  double baseline = 0, optimum = 0, prior_regret = 0, greedy_shortfall = 0;
  int greedy_trials = 0;
  int traps = 0;
  double trial_gpu_hours = 0;
  std::vector<std::string> optimum_edits, prior_edits;
};
// The harness file's text with its recorded figures replaced (comments and
// the other keys kept); written atomically by record_figures.
std::string with_figures(const std::string& text, const RecordedFigures& f);
void record_figures(const std::string& path, const RecordedFigures& f);

}  // namespace attune::sim
