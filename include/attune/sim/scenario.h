// Scenario: one benchmark starting point (recipes/scenarios/<name>/scenario.yaml)
// — a recipe written for another setting, the hardware it now runs on (in the
// recipe's wrapper), the hidden truth of that cluster (a Perturbation file),
// the noise seed, and the baseline and optimum the simulator predicts for it.
// Every `attune sim` command accepts a scenario file where it takes a recipe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attune::sim {

struct Scenario {
  std::string path;           // the scenario file
  std::string name, title, written_for, runs_on, what_is_off;
  std::string recipe;         // resolved relative to the scenario file
  std::string perturbation;   // resolved; "" = nominal
  std::uint64_t seed = 1;
  // Stated figures (tokens/s/GPU), checked against the simulator by the tests.
  std::optional<double> baseline_tokens_per_s_per_gpu;
  std::optional<double> optimum_tokens_per_s_per_gpu;
  std::vector<std::string> optimum_edits;  // "lever: from -> to"
};

// True when `path` is a YAML file with top-level `recipe:` and `perturbation:` or `seed:`.
bool is_scenario_file(const std::string& path);
// Throws InputError naming the file, line and key on bad input.
Scenario read_scenario(const std::string& path);

// The scenario file's text with its stated figures replaced by these
// (comments and the other keys kept); written atomically by record_figures.
std::string with_figures(const std::string& text, double baseline, double optimum,
                         const std::vector<std::string>& edits);
void record_figures(const std::string& path, double baseline, double optimum, const std::vector<std::string>& edits);

}  // namespace attune::sim
