#include "adapters.h"

#include <algorithm>

#include "attune/util/text.h"

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

int AxolotlAdapter::shard_group(const Recipe& recipe, const Layout& l, const Plan& p) const {
  // N-D parallelism states the FSDP group itself (dp_shard_size).
  if (l.dp_shard > 0) return l.dp_shard;
  bool fsdp = false, fsdp1_list = false;
  std::string list_mode;  // FSDP1 `fsdp: [full_shard, auto_wrap]`
  for (const auto& e : recipe.document().entries()) {
    const std::string& k = e.path;
    if (k == "fsdp_version" || k.rfind("fsdp_config.", 0) == 0) fsdp = true;
    if (k == "fsdp" || k.rfind("fsdp[", 0) == 0) {
      std::vector<Value> items = e.value.kind == ValueKind::List ? e.value.items : std::vector<Value>{e.value};
      for (const auto& item : items) {
        std::string t = to_lower(item.str());
        fsdp1_list = true;
        for (const char* mode : {"full_shard", "hybrid_shard", "shard_grad_op", "no_shard"}) {
          if (t.find(mode) != std::string::npos) list_mode = mode;
        }
      }
    }
  }
  if (fsdp || fsdp1_list) {
    std::string strategy = effective_text(recipe, "sharding");
    if (strategy.empty()) strategy = list_mode;
    int replicate = std::max(1, l.dp_replicate);
    int group = fsdp_shard_group(strategy, p);
    // FSDP2 with dp_replicate_size: HSDP over groups of dp / dp_replicate.
    if (group == p.dp && replicate > 1 && p.dp % replicate == 0) group = p.dp / replicate;
    return group;
  }
  // DeepSpeed ZeRO-3 shards the parameters over all of DP.
  std::string ds = to_lower(effective_text(recipe, "deepspeed"));
  auto stage = recipe.find("deepspeed.zero_optimization.stage");
  if (ds.find("zero3") != std::string::npos || (stage && stage->value.as_int() == 3)) return p.dp;
  return 0;
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
