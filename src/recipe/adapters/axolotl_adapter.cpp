#include "adapters.h"

#include <algorithm>

namespace attune::recipe {

std::string AxolotlAdapter::precision(const Recipe& recipe) const {
  if (truthy(recipe.find("fp8"))) return "fp8";
  std::string bf16 = value_text(recipe.find_named("precision"));
  if (bf16 == "true" || bf16 == "True" || bf16 == "auto") return "bf16";
  if (truthy(recipe.find("fp16"))) return "fp16";
  return "fp32";
}

void AxolotlAdapter::derive_dp(const Layout& l, Plan& p) const {
  // "your effective global batch size is divided by the context_parallel_size"
  p.dp = std::max(1, p.world / std::max(1, l.tp * l.cp));
}

std::vector<Change> AxolotlAdapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  if (lever.name != "recompute") return Adapter::translate(recipe, lever, value);
  // gradient_checkpointing also takes offload / offload_disk (recompute plus CPU offload).
  if (value.str() == "offload" || value.str() == "offload_disk") return {make_change(recipe, lever.key, value)};
  return {make_change(recipe, lever.key, recompute_as_bool(recipe, lever, value))};
}

void AxolotlAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  long long group = static_cast<long long>(p.tp) * p.cp;
  add_rule(recipe, out, p.world % group == 0, "world-divisible", "tp",
           "world size " + std::to_string(p.world) + " must be divisible by tensor_parallel_size*context_parallel_size = " +
               std::to_string(group));
  if (p.cp > 1) {
    bool packing = truthy(recipe.find("sample_packing"));
    add_rule(recipe, out, !packing || p.mbs == 1, "cp-needs-micro-batch-1", "mbs",
             "context parallelism with sample_packing needs micro_batch_size: 1");
    std::string attn = value_text(recipe.find_named("attention_backend"));
    bool flash = attn.find("flash") != std::string::npos || truthy(recipe.find("flash_attention"));
    add_rule(recipe, out, flash, "cp-needs-flash-attention", "cp",
             "context parallelism needs flash attention (attn_implementation: flash_attention_2)");
  }
  auto shard = recipe.find_named("dp_shard");
  if (p.ep > 1 && shard && shard->value.as_int()) {
    long long s = *shard->value.as_int();
    add_rule(recipe, out, s * p.ep == p.world, "ep-times-shard-is-world", "ep",
             "expert_parallel_size*dp_shard_size = " + std::to_string(s * p.ep) + " must equal the world size " +
                 std::to_string(p.world));
  }
}

}  // namespace attune::recipe
