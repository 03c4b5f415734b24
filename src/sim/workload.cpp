#include "attune/sim/workload.h"

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::sim {

namespace {

// The file's value, else the framework's default from the lever catalog
// (Megatron-LM's flags default to off); nullopt when neither says.
std::optional<bool> flag(const recipe::Recipe& r, const char* name) {
  auto v = r.value_or_default(name);
  if (!v) return std::nullopt;
  return v->as_bool();
}

std::string text(const recipe::Recipe& r, const char* name) {
  auto e = r.find_named(name);
  return e ? e->value.str() : "";
}

// First/last stage sizes or an explicit layout let layers not divide by PP.
bool uneven_split(const recipe::Recipe& r) {
  for (const char* name : {"decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
                           "num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage",
                           "pipeline_model_parallel_layout", "pp_first_stage_less_layers",
                           "pp_last_stage_less_layers", "pp_layers_per_stage"}) {
    if (r.find_named(name)) return true;
  }
  return false;
}

// Canonical lever names (skills/levers/*.yaml) shared by the frameworks.
Knobs knobs_from(const recipe::Recipe& r, const recipe::Plan& plan) {
  Knobs k;
  k.sequence_parallel = flag(r, "sequence_parallel").value_or(plan.tp > 1);
  k.distributed_optimizer = flag(r, "distributed_optimizer").value_or(k.distributed_optimizer);
  k.overlap_grad_reduce = flag(r, "overlap_grad_reduce").value_or(k.overlap_grad_reduce);
  k.overlap_param_gather = flag(r, "overlap_param_gather").value_or(k.overlap_param_gather);
  k.tp_comm_overlap =
      flag(r, "tp_comm_overlap").value_or(false) || flag(r, "enable_async_tensor_parallel").value_or(false);
  k.fp8_param_gather = flag(r, "fp8_param_gather").value_or(false);
  const std::string precision = plan.precision;
  k.fp8 = contains(precision, "fp8") || flag(r, "fp8").value_or(false) || contains(text(r, "fp8"), "hybrid") ||
          contains(text(r, "fp8"), "e4m3");
  k.mxfp8 = k.fp8 && (contains(to_lower(precision), "mx") || contains(to_lower(text(r, "fp8_recipe")), "mx"));
  const std::string rc = plan.recompute;
  if (rc == "full" || rc == "selective" || rc == "none") k.recompute_granularity = rc;
  else if (!rc.empty() && rc != "false") k.recompute_granularity = "selective";
  // Megatron's uniform method recomputes every layer, N at a time; only the
  // block method limits recompute to the first N layers of a stage.
  if (auto e = r.find_named("recompute_layers"); e && to_lower(text(r, "recompute_method")) == "block")
    k.recompute_num_layers = static_cast<int>(e->value.as_int().value_or(0));
  k.uneven_pipeline_split = uneven_split(r);
  k.loss_fp32 = flag(r, "loss_fp32_upcast").value_or(true);
  if (plan.dp_shard > 0) k.zero_stage = 3;  // FSDP, even over one rank (it shards as DP grows)
  const std::string sharding = text(r, "sharding");
  if (contains(sharding, "zero3") || contains(sharding, "full") || contains(sharding, "optim_grads_params")) k.zero_stage = 3;
  else if (contains(sharding, "zero2") || contains(sharding, "optim_grads") || contains(to_lower(sharding), "shard_grad_op"))
    k.zero_stage = 2;
  const std::string graphs = text(r, "cuda_graphs");
  k.cuda_graphs = !graphs.empty() && graphs != "none" && graphs != "false";
  const std::string dispatcher = to_lower(text(r, "moe_dispatcher"));
  if (contains(dispatcher, "deepep") || contains(dispatcher, "hybridep") || flag(r, "moe_enable_deepep").value_or(false))
    k.moe_dispatcher = "deepep";
  else if (dispatcher == "allgather")
    k.moe_dispatcher = "allgather";
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
