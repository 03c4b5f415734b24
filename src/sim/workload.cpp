#include "attune/sim/workload.h"

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::sim {

namespace {

std::optional<bool> flag(const recipe::Recipe& r, const char* name) {
  auto e = r.find_named(name);
  if (!e) return std::nullopt;
  return e->value.as_bool();
}

std::string text(const recipe::Recipe& r, const char* name) {
  auto e = r.find_named(name);
  return e ? e->value.str() : "";
}

// Canonical lever names (skills/levers/*.yaml) shared by the frameworks.
Knobs knobs_from(const recipe::Recipe& r, const recipe::Plan& plan) {
  Knobs k;
  k.sequence_parallel = flag(r, "sequence_parallel").value_or(plan.tp > 1);
  k.distributed_optimizer = flag(r, "distributed_optimizer").value_or(k.distributed_optimizer);
  k.overlap_grad_reduce = flag(r, "overlap_grad_reduce").value_or(k.overlap_grad_reduce);
  k.overlap_param_gather = flag(r, "overlap_param_gather").value_or(k.overlap_param_gather);
  k.tp_comm_overlap = flag(r, "tp_comm_overlap").value_or(false);
  k.fp8_param_gather = flag(r, "fp8_param_gather").value_or(false);
  const std::string precision = plan.precision;
  k.fp8 = contains(precision, "fp8") || flag(r, "fp8").value_or(false) || contains(text(r, "fp8"), "hybrid") ||
          contains(text(r, "fp8"), "e4m3");
  const std::string rc = plan.recompute;
  if (rc == "full" || rc == "selective" || rc == "none") k.recompute_granularity = rc;
  else if (!rc.empty() && rc != "false") k.recompute_granularity = "selective";
  if (auto e = r.find_named("recompute_layers")) k.recompute_num_layers = static_cast<int>(e->value.as_int().value_or(0));
  if (plan.dp_shard > 1) k.zero_stage = 3;
  const std::string sharding = text(r, "sharding");
  if (contains(sharding, "zero3") || contains(sharding, "full") || contains(sharding, "optim_grads_params")) k.zero_stage = 3;
  else if (contains(sharding, "zero2") || contains(sharding, "optim_grads")) k.zero_stage = 2;
  k.cuda_graphs = !text(r, "cuda_graph_impl").empty() && text(r, "cuda_graph_impl") != "none";
  if (auto e = r.find_named("optimizer_cpu_offload"); e && e->value.as_bool().value_or(false)) {
    k.optimizer_cpu_offload = 1.0;
  }
  return k;
}

}  // namespace

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
  w.knobs = knobs_from(r, w.plan);
  return w;
}

}  // namespace attune::sim
