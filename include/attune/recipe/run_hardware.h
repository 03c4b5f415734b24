// The recipe as it runs on its hardware. A framework file may state its own
// node count or GPUs per node as a literal (a launch script's NUM_NODES=1,
// HyperPod's trainer.num_nodes: 16) while the run is on the hardware the
// wrapper or the flags say: each node's launcher reads the file, so the file
// must say the same, or two nodes each start a one-node job. The edits are
// the ones Recipe::set makes for the `nodes` and `gpus_per_node` levers, so
// the gate sees them like any other.
#pragma once

#include <vector>

#include "attune/recipe/edit.h"
#include "attune/recipe/recipe.h"

namespace attune::recipe {

// `recipe` with the file's literal node count and GPUs per node set to the
// run's (nothing changes when the hardware comes from the file itself, or the
// file leaves the count to the run: `${SLURM_NNODES:-1}`, an environment
// variable). The edits made are appended to `edits` when given. Throws
// InputError naming the key when the file's count cannot be set.
Recipe with_run_hardware(const Recipe& recipe, std::vector<EditResult>* edits = nullptr);

}  // namespace attune::recipe
