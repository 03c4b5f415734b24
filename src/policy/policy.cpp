#include "attune/policy/policy.h"

#include <functional>
#include <utility>

#include "attune/policy/baseline_policies.h"
#include "attune/policy/bridge_policy.h"
#include "attune/policy/llm_policy.h"
#include "attune/policy/rules_policy.h"
#include "attune/util/error.h"

namespace attune::policy {

namespace {

using Factory = std::function<std::unique_ptr<Policy>(const PolicySettings&, const std::string& flag)>;

// An LLM policy's settings, or InputError naming --llm when there are none.
const LlmPolicySettings& llm_settings(const PolicySettings& s, const std::string& flag, const std::string& name) {
  if (!s.llm) throw InputError({}, "--llm", flag + " " + name + " needs a model: --llm PROVIDER:MODEL (providers: openai, anthropic, bedrock)");
  return *s.llm;
}

std::unique_ptr<Policy> make_llm_policy(bool hybrid, const PolicySettings& s, const std::string& flag) {
  const LlmPolicySettings& llm = llm_settings(s, flag, hybrid ? "hybrid" : "llm");
  try {
    return std::make_unique<LlmPolicy>(hybrid, llm);
  } catch (const llm::LlmError& e) {
    throw InputError({}, "--llm", e.what());
  }
}

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"rules", [](const PolicySettings&, const std::string&) { return std::make_unique<RulesPolicy>(); }},
      {"llm", [](const PolicySettings& s, const std::string& f) { return make_llm_policy(false, s, f); }},
      {"hybrid", [](const PolicySettings& s, const std::string& f) { return make_llm_policy(true, s, f); }},  // policy_asks_llm names both
      {"random", [](const PolicySettings&, const std::string&) { return std::make_unique<RandomPolicy>(); }},
      {"grid", [](const PolicySettings&, const std::string&) { return std::make_unique<GridPolicy>(); }},
      {"planner", [](const PolicySettings&, const std::string&) { return std::make_unique<PlannerPolicy>(); }},
      {"optuna", [](const PolicySettings&, const std::string& f) { return std::make_unique<BridgePolicy>(BridgeMethod::Tpe, BridgeSettings{}, f); }},
      {"xgb", [](const PolicySettings&, const std::string& f) { return std::make_unique<BridgePolicy>(BridgeMethod::Xgb, BridgeSettings{}, f); }},
  };
  return r;
}

}  // namespace

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, f] : registry()) n.push_back(name);
    return n;
  }();
  return names;
}

bool policy_asks_llm(const std::string& name) { return name == "llm" || name == "hybrid"; }

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicySettings& settings, const std::string& flag) {
  for (const auto& [n, factory] : registry()) {
    if (n == name) return factory(settings, flag);
  }
  std::string known;
  for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError({}, flag, "unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace attune::policy
