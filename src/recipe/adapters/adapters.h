// The framework adapters (internal to the recipe module). Each states only what
// differs from the shared arithmetic in attune/recipe/adapter.h.
#pragma once

#include "attune/recipe/adapter.h"
#include "attune/recipe/recipe.h"

namespace attune::recipe {

class MegatronAdapter : public Adapter {
 public:
  MegatronAdapter() : Adapter(Framework::Megatron) {}
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  std::string doc_key(const Recipe& recipe, const std::string& catalog_key) const override;
  std::string catalog_key(const Recipe& recipe, const std::string& doc_path) const override;
  Layout read_layout(const Recipe& recipe) const override;
  std::string recompute(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

class BridgeAdapter : public Adapter {
 public:
  BridgeAdapter() : Adapter(Framework::Bridge) {}
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

class AutoModelAdapter : public Adapter {
 public:
  AutoModelAdapter() : Adapter(Framework::AutoModel) {}
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

class TorchtitanAdapter : public Adapter {
 public:
  TorchtitanAdapter() : Adapter(Framework::Torchtitan) {}
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Torchtitan; }
  std::string precision(const Recipe& recipe) const override;

 protected:
  void derive_dp(const Layout& layout, Plan& plan) const override;
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

class HyperPodAdapter : public Adapter {
 public:
  HyperPodAdapter() : Adapter(Framework::HyperPod) {}
  BatchRule batch_rule(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;
  Layout read_layout(const Recipe& recipe) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

class AxolotlAdapter : public Adapter {
 public:
  AxolotlAdapter() : Adapter(Framework::Axolotl) {}
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Axolotl; }
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void derive_dp(const Layout& layout, Plan& plan) const override;
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
};

// Shared helpers for adapters.
std::string value_text(const std::optional<Entry>& e);  // "" when absent
bool truthy(const std::optional<Entry>& e);              // present and true
void add_rule(const Recipe& recipe, std::vector<RuleViolation>& out, bool ok, const std::string& rule,
              const std::string& lever, const std::string& message, bool error = true);
// recompute lever for frameworks whose key is a boolean: none/false -> false, full/true -> true.
Value recompute_as_bool(const Recipe& recipe, const LeverDef& lever, const Value& value);
// Changes that set a "granularity" style recompute (full needs method + layers).
std::vector<Change> granularity_recompute(const Recipe& recipe, const Value& value, const std::string& granularity_key,
                                          const std::string& method_key, const std::string& layers_key,
                                          const std::optional<Value>& none_value);
Change make_change(const Recipe& recipe, const std::string& doc_key, std::optional<Value> new_value);

}  // namespace attune::recipe
