#include "adapters.h"

#include <algorithm>

#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::recipe {

const Adapter& adapter_for(Framework framework) {
  static const MegatronAdapter megatron;
  static const BridgeAdapter bridge;
  static const AutoModelAdapter automodel;
  static const TorchtitanAdapter torchtitan;
  static const HyperPodAdapter hyperpod;
  static const AxolotlAdapter axolotl;
  switch (framework) {
    case Framework::Megatron: return megatron;
    case Framework::Bridge: return bridge;
    case Framework::AutoModel: return automodel;
    case Framework::Torchtitan: return torchtitan;
    case Framework::HyperPod: return hyperpod;
    case Framework::Axolotl: return axolotl;
  }
  return megatron;
}

std::string value_text(const std::optional<Entry>& e) { return e ? e->value.str() : ""; }

bool truthy(const std::optional<Entry>& e) {
  if (!e) return false;
  auto b = e->value.as_bool();
  return b && *b;
}

void add_rule(const Recipe& recipe, std::vector<RuleViolation>& out, bool ok, const std::string& rule,
              const std::string& lever, const std::string& message, bool error) {
  if (ok) return;
  std::string key = recipe.key_of(lever);
  out.push_back({rule, key.empty() ? lever : key, message, error});
}

Change make_change(const Recipe& recipe, const std::string& doc_key, std::optional<Value> new_value) {
  Change c;
  c.key = doc_key;
  if (auto e = recipe.document().find(doc_key)) c.old_value = e->value;
  c.new_value = std::move(new_value);
  return c;
}

std::string effective_text(const Recipe& recipe, const std::string& name) {
  auto v = recipe.value_or_default(name);
  return v && !v->is_null() ? v->str() : "";
}

std::optional<long long> effective_int(const Recipe& recipe, const std::string& name) {
  auto v = recipe.value_or_default(name);
  return v ? v->as_int() : std::nullopt;
}

bool effective_bool(const Recipe& recipe, const std::string& name) {
  auto v = recipe.value_or_default(name);
  if (!v) return false;
  auto b = v->as_bool();
  return b && *b;
}

int fsdp_shard_group(const std::string& strategy, const Plan& p) {
  std::string s = to_lower(strategy);
  if (s == "no_shard" || s == "shard_grad_op" || s == "_hybrid_shard_zero2") return 0;  // parameters whole
  if (s == "hybrid_shard") {
    // PyTorch FSDP's hybrid shard: shard within a node, replicate across nodes.
    int per_node = std::max(1, p.gpus_per_node / std::max(1, p.tp * p.cp));
    return std::min(p.dp, per_node);
  }
  return p.dp;  // full_shard
}

void split_pipeline_batch(const Recipe& recipe, Layout& l) {
  if (l.pp <= 1) return;
  l.local_batch = l.mbs;
  l.mbs = static_cast<int>(effective_int(recipe, "pp_microbatch").value_or(1));
}

std::string pipeline_mbs_lever(const Adapter& adapter, const Recipe& recipe, const std::string& name) {
  if (name != "mbs" || adapter.read_layout(recipe).pp <= 1) return name;
  return adapter.catalog().by_name("pp_microbatch", recipe.dialect()) ? "pp_microbatch" : name;
}

Value recompute_as_bool(const Recipe& recipe, const LeverDef& lever, const Value& value) {
  std::string t = value.str();
  if (t == "none" || t == "false" || t == "False") return Value::boolean(false);
  if (t == "full" || t == "true" || t == "True") return Value::boolean(true);
  throw InputError({recipe.config_path(), 0, 0}, lever.key,
                   "expected none or full (this framework's recompute is on/off), got '" + t + "'");
}

std::vector<Change> granularity_recompute(const Recipe& recipe, const Value& value, const std::string& granularity_key,
                                          const std::string& method_key, const std::string& layers_key,
                                          const std::optional<Value>& none_value) {
  std::string t = value.str();
  std::vector<Change> out;
  auto absent = [&](const std::string& k) { return !recipe.document().find(k).has_value(); };
  if (t == "none" || t == "null" || t == "false") {
    for (const auto& k : {granularity_key, method_key, layers_key}) {
      if (!absent(k)) out.push_back(make_change(recipe, k, k == granularity_key ? none_value
                                                                                : std::nullopt));
    }
    return out;
  }
  if (t != "full" && t != "selective") {
    throw InputError({recipe.config_path(), 0, 0}, granularity_key,
                     "expected none, selective or full, got '" + t + "'");
  }
  out.push_back(make_change(recipe, granularity_key, Value::string(t)));
  if (t == "full") {
    // Full recompute needs a method and a layer count; uniform/1 is the
    // framework's own example setting and the least memory.
    if (absent(method_key)) out.push_back(make_change(recipe, method_key, Value::string("uniform")));
    if (absent(layers_key)) out.push_back(make_change(recipe, layers_key, Value::integer(1)));
  } else {
    for (const auto& k : {method_key, layers_key}) {
      if (!absent(k)) out.push_back(make_change(recipe, k, std::nullopt));
    }
  }
  return out;
}

}  // namespace attune::recipe
