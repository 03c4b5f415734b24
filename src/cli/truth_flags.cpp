#include "attune/cli/truth_flags.h"

#include "attune/cli/flag_checks.h"

namespace attune::cli {

void add_truth_flags(CLI::App& cmd, campaign::TruthChoice& truth, bool seed) {
  cmd.add_flag("--truth", truth.scenario_truth,
               "Simulate under the scenario's hidden truth (its truth.yaml) instead of the nominal model. For the "
               "benchmark harness and for people: a tuning policy never sees the truth");
  cmd.add_option("--truth-file", truth.truth_file,
                 "Simulate under this truth file (docs/scenarios.md: factors, signed lever effects, failures, noise)")
      ->check(existing_file());
  if (seed) {
    cmd.add_option("--seed", truth.seed, "Seed of the run's noise (default: the truth's seed, else 1)")
        ->check(seed_number());
  }
}

}  // namespace attune::cli
