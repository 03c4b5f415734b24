#include "adapters.h"

#include <algorithm>

#include "attune/util/text.h"

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

namespace {

int smp_shard_degree(const Layout& l, const Plan& p, const std::string& strategy) {
  if (l.dp_shard > 0) return l.dp_shard;
  // shard_degree unset (SMP's hybrid_shard_degree 0): without TP, PyTorch FSDP
  // itself runs, full_shard over every rank and hybrid_shard within a node of
  // 8 GPUs; with TP, SMP takes the largest degree world / (tp*ep).
  if (p.tp <= 1 && strategy != "full_shard") return std::min(8, std::max(1, p.world / std::max(1, p.ep)));
  return std::max(1, p.world / std::max(1, p.tp * p.ep));
}

}  // namespace

int HyperPodAdapter::shard_group(const Recipe& recipe, const Layout& l, const Plan& p) const {
  const std::string& d = recipe.dialect();
  if (d == "smp") {
    std::string strategy = to_lower(effective_text(recipe, "sharding"));  // hybrid_shard when absent
    if (strategy == "no_shard" || strategy == "shard_grad_op" || strategy == "_hybrid_shard_zero2") return 0;
    // The context-parallel ranks lie inside the shard group (cp <= shard_degree):
    // the DP ranks that shard the weights are shard_degree / cp.
    return std::max(1, smp_shard_degree(l, p, strategy) / std::max(1, p.cp));
  }
  if (d == "llmft") {
    // OpenRLHF-style FSDP: strategy.fsdp_config (accelerate's FULL_SHARD when unset).
    bool fsdp = false;
    for (const auto& e : recipe.document().entries()) {
      if (e.path.find("strategy.fsdp_config.") != std::string::npos) fsdp = true;
    }
    if (!fsdp) return 0;
    return fsdp_shard_group(effective_text(recipe, "sharding"), p);
  }
  return Adapter::shard_group(recipe, l, p);
}

void HyperPodAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  if (recipe.dialect() == "smp") {
    Layout l = read_layout(recipe);
    long long shard = l.dp_shard > 0 ? l.dp_shard : 1;
    long long group = shard * p.tp * p.ep;
    add_rule(recipe, out, p.world % group == 0, "world-divisible-by-shard-tp-ep", "dp_shard",
             "world size " + std::to_string(p.world) + " must be divisible by shard_degree*tp*ep = " +
                 std::to_string(group));
    add_rule(recipe, out, l.dp_shard <= 0 || p.cp <= l.dp_shard, "cp-within-shard", "cp",
             "context_parallel_degree " + std::to_string(p.cp) + " must be <= shard_degree " +
                 std::to_string(l.dp_shard));
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
