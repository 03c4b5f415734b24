// --truth, --truth-file and --seed: which truth a simulating command runs
// under (campaign/sim_target.h). The nominal model unless one is given.
#pragma once

#include <CLI/CLI.hpp>

#include "attune/campaign/sim_target.h"

namespace attune::cli {

// --truth and --truth-file (and --seed when `seed`).
void add_truth_flags(CLI::App& cmd, campaign::TruthChoice& truth, bool seed);

}  // namespace attune::cli
