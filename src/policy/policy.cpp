#include "attune/policy/policy.h"

#include <functional>
#include <utility>

#include "attune/policy/baseline_policies.h"
#include "attune/policy/rules_policy.h"
#include "attune/util/error.h"

namespace attune::policy {

namespace {

using Factory = std::function<std::unique_ptr<Policy>()>;

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> r = {
      {"rules", [] { return std::make_unique<RulesPolicy>(); }},
      {"random", [] { return std::make_unique<RandomPolicy>(); }},
      {"grid", [] { return std::make_unique<GridPolicy>(); }},
      {"planner", [] { return std::make_unique<PlannerPolicy>(); }},
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

std::unique_ptr<Policy> make_policy(const std::string& name, const std::string& flag) {
  for (const auto& [n, factory] : registry()) {
    if (n == name) return factory();
  }
  std::string known;
  for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError({}, flag, "unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace attune::policy
