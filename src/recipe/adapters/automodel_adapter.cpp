#include "adapters.h"

#include <algorithm>

namespace attune::recipe {

std::string AutoModelAdapter::edit_lever(const Recipe& recipe, const std::string& name) const {
  // With PP the micro batch is the pipeline micro-batch size: `mbs` edits it,
  // which keeps the local and the global batch.
  return pipeline_mbs_lever(*this, recipe, name);
}

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

Layout AutoModelAdapter::read_layout(const Recipe& recipe) const {
  Layout l = Adapter::read_layout(recipe);
  // Mock/pretraining datasets state dataset.seq_len (or seq_length); SFT
  // datasets pad each batch to its longest sample unless the recipe packs
  // sequences, and then every sample is packed_sequence_size tokens. The
  // dataset's own setting wins when both are given.
  if (l.seq_len <= 0) {
    auto packed = recipe.find_named("packed_sequence_size");
    if (auto n = packed ? packed->value.as_int() : std::nullopt; n && *n > 0) l.seq_len = *n;
  }
  // With PP, step_scheduler.local_batch_size is split into micro-batches of
  // distributed.pipeline.pp_microbatch_size.
  split_pipeline_batch(recipe, l);
  return l;
}

int AutoModelAdapter::shard_group(const Recipe& recipe, const Layout& l, const Plan& p) const {
  std::string strategy = effective_text(recipe, "sharding");  // fsdp2 when absent
  if (strategy == "ddp") return 0;
  if (strategy == "megatron_fsdp") {
    // zero_dp_strategy 3 (the default) shards parameters; 1 and 2 shard only
    // the optimizer state (and gradients).
    return effective_int(recipe, "zero_dp_strategy").value_or(3) >= 3 ? p.dp : 0;
  }
  // fsdp2: FSDP over dp_shard = dp / dp_replicate (HSDP replicates across groups).
  int replicate = std::max(1, l.dp_replicate);
  return p.dp % replicate == 0 ? p.dp / replicate : p.dp;
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
  if (p.pp > 1) {
    Layout l = read_layout(recipe);
    long long local = l.local_batch > 0 ? l.local_batch : p.mbs;
    add_rule(recipe, out, p.mbs > 0 && local % p.mbs == 0, "pp-microbatch-divides-local-batch", "pp_microbatch",
             "local_batch_size " + std::to_string(local) + " must be divisible by pp_microbatch_size " +
                 std::to_string(p.mbs));
    long long per_pass = local * p.dp;
    add_rule(recipe, out, per_pass > 0 && p.gbs % per_pass == 0, "gbs-divisible-by-local-batch", "gbs",
             "global_batch_size " + std::to_string(p.gbs) + " must be divisible by local_batch_size*dp = " +
                 std::to_string(local) + "*" + std::to_string(p.dp) + " = " + std::to_string(per_pass));
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
