#include "adapters.h"

#include "attune/util/error.h"

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
