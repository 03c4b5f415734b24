#include "attune/sim/workload.h"

#include "attune/recipe/recipe.h"
#include "attune/sim/recipe_levers.h"
#include "attune/util/error.h"

namespace attune::sim {

Workload workload_from_recipe(const recipe::Recipe& r) {
  Workload w;
  if (!r.model()) {
    throw InputError({r.config_path(), 0, 0}, "model",
                     "the recipe names no model the simulator knows: pass --model PRESET");
  }
  w.model = *r.model();
  w.plan = r.plan();
  if (w.plan.gpu.empty()) {
    throw InputError({r.config_path(), 0, 0}, "gpu", "the recipe does not say which GPU it runs on: pass --gpu h100|h200|b200");
  }
  w.knobs = read_knobs(r, w.plan);
  return w;
}

}  // namespace attune::sim
