#include "attune/diagnose/recipe_context.h"

namespace attune::diagnose {

DiagnoseOptions options_for_recipe(const recipe::Recipe& r) {
  DiagnoseOptions o;
  const recipe::Plan p = r.plan();
  o.model = r.model();
  o.gpu = p.gpu;
  o.precision = p.precision;
  o.world = p.world;
  o.seq_len = p.seq_len;
  o.global_batch = p.gbs;
  return o;
}

}  // namespace attune::diagnose
