#include "adapters.h"

#include <algorithm>

namespace attune::recipe {

BatchRule HyperPodAdapter::batch_rule(const Recipe& recipe) const {
  return recipe.dialect() == "smp" ? BatchRule::SmpImplied : BatchRule::Explicit;
}

Layout HyperPodAdapter::read_layout(const Recipe& recipe) const {
  Layout l = Adapter::read_layout(recipe);
  if (recipe.dialect() == "smp") l.etp = 1;  // SMP has no expert-TP knob
  return l;
}

std::string HyperPodAdapter::precision(const Recipe& recipe) const {
  const std::string& d = recipe.dialect();
  if (d == "smp" || d == "nemo1") {
    // SMP's schema defaults fp8 to True: a recipe that omits it trains in FP8.
    auto fp8 = recipe.find_named("fp8");
    bool on = fp8 ? truthy(fp8) : d == "smp";
    if (on) return "fp8";
  }
  std::string prec = value_text(recipe.find_named("precision"));
  if (prec.empty()) return "bf16";
  if (prec.find("bf16") != std::string::npos) return "bf16";
  if (prec.find("16") != std::string::npos) return "fp16";
  return prec;
}

std::vector<Change> HyperPodAdapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  if (lever.name != "recompute") return Adapter::translate(recipe, lever, value);
  if (recipe.dialect() == "nemo1") {
    return granularity_recompute(recipe, value, "model.activations_checkpoint_granularity",
                                 "model.activations_checkpoint_method", "model.activations_checkpoint_num_layers",
                                 Value::null());
  }
  return {make_change(recipe, lever.key, recompute_as_bool(recipe, lever, value))};
}

void HyperPodAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  if (recipe.dialect() == "smp") {
    long long shard = p.dp_shard > 0 ? p.dp_shard : 1;
    long long group = shard * p.tp * p.ep;
    add_rule(recipe, out, p.world % group == 0, "world-divisible-by-shard-tp-ep", "dp_shard",
             "world size " + std::to_string(p.world) + " must be divisible by shard_degree*tp*ep = " +
                 std::to_string(group));
    add_rule(recipe, out, p.dp_shard <= 0 || p.cp <= p.dp_shard, "cp-within-shard", "cp",
             "context_parallel_degree " + std::to_string(p.cp) + " must be <= shard_degree " +
                 std::to_string(p.dp_shard));
    auto smp = recipe.find("use_smp_model");
    bool smp_on = !smp || truthy(smp);
    add_rule(recipe, out, smp_on || (p.tp == 1 && p.ep == 1), "tp-ep-need-smp-model", "tp",
             "tensor/expert parallel degrees > 1 need use_smp_model: True");
  }
  if (recipe.dialect() == "llmft") {
    add_rule(recipe, out, p.gbs >= p.mbs, "train-batch-at-least-micro", "mbs",
             "train_batch_size must be >= micro_train_batch_size");
  }
}

}  // namespace attune::recipe
