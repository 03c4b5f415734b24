// Workload: what the simulator needs to know about one training run — the
// model, the canonical plan (layout, batch, sequence, precision, recompute) and
// the throughput knobs the analytic model understands — independent of the
// framework that spelled them. Built from a Recipe (workload_from_recipe) or
// from a row of published measurements (calibration).
#pragma once

#include <string>

#include "attune/recipe/model_spec.h"
#include "attune/recipe/plan.h"
#include "attune/sim/knobs.h"

namespace attune::sim {

struct Workload {
  recipe::ModelSpec model;
  recipe::Plan plan;  // plan.gpu, nodes, gpus_per_node, world and the layout are filled
  Knobs knobs;
};

}  // namespace attune::sim

namespace attune::recipe {
class Recipe;
}

namespace attune::sim {

// The Workload a recipe describes: its model (preset or the recipe's own
// fields), its plan, and the knobs read from its canonical levers. Throws
// InputError when the recipe names no model or no GPU type.
Workload workload_from_recipe(const recipe::Recipe& r);

}  // namespace attune::sim
