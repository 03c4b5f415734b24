#include "attune/recipe/rule_violation.h"

namespace attune::recipe {

nlohmann::json to_json(const RuleViolation& v) {
  return {{"rule", v.rule}, {"key", v.key}, {"message", v.message}, {"severity", v.error ? "error" : "warning"}};
}

bool has_errors(const std::vector<RuleViolation>& violations) {
  for (const auto& v : violations) {
    if (v.error) return true;
  }
  return false;
}

}  // namespace attune::recipe
