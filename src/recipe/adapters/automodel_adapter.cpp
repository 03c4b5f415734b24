#include "adapters.h"

namespace attune::recipe {

std::string AutoModelAdapter::precision(const Recipe& recipe) const {
  std::string te_recipe = value_text(recipe.find("model.backend.te_fp8.recipe"));
  if (!te_recipe.empty()) return te_recipe == "mxfp8" ? "mxfp8" : "fp8-" + te_recipe;
  if (truthy(recipe.find_named("fp8"))) return "fp8";
  std::string dtype = value_text(recipe.find_named("precision"));
  if (dtype.empty() || dtype == "bf16" || dtype == "bfloat16" || dtype == "torch.bfloat16") return "bf16";
  if (dtype == "fp16" || dtype == "float16") return "fp16";
  if (dtype == "fp32" || dtype == "float32") return "fp32";
  return dtype;
}

std::vector<Change> AutoModelAdapter::translate(const Recipe& recipe, const LeverDef& lever,
                                                const Value& value) const {
  if (lever.name != "recompute") return Adapter::translate(recipe, lever, value);
  // activation_checkpointing takes a bool or "selective"/"full".
  std::string t = value.str();
  if (t == "selective") return {make_change(recipe, lever.key, Value::string("selective"))};
  return {make_change(recipe, lever.key, recompute_as_bool(recipe, lever, value))};
}

void AutoModelAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  std::string strategy = value_text(recipe.find_named("sharding"));
  if (strategy == "ddp") {
    add_rule(recipe, out, p.tp == 1 && p.pp == 1 && p.cp == 1 && p.ep == 1, "ddp-forbids-model-parallel", "sharding",
             "distributed.strategy ddp forbids tp/pp/cp/ep > 1");
  }
  if (strategy == "megatron_fsdp") {
    add_rule(recipe, out, p.pp == 1 && p.ep == 1, "megatron-fsdp-forbids-pp-ep", "sharding",
             "distributed.strategy megatron_fsdp forbids pp/ep > 1");
  }
  if (p.ep > 1) {
    long long group = static_cast<long long>(p.dp) * p.cp * p.tp;
    add_rule(recipe, out, group % p.ep == 0, "ep-divides-dp-cp-tp", "ep",
             "(dp*cp*tp) = " + std::to_string(group) + " must be divisible by ep " + std::to_string(p.ep));
  }
  auto dp_explicit = recipe.find_named("dp");
  if (dp_explicit && dp_explicit->value.as_int()) {
    long long mp = static_cast<long long>(p.tp) * p.cp * p.pp;
    add_rule(recipe, out, *dp_explicit->value.as_int() * mp == p.world, "dp-size-matches-world", "dp",
             "distributed.dp_size " + dp_explicit->value.str() + " * tp*cp*pp " + std::to_string(mp) +
                 " must equal the world size " + std::to_string(p.world));
  }
}

}  // namespace attune::recipe
