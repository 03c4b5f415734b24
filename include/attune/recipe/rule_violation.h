// RuleViolation: one broken validity rule of a recipe's layout,
// with the key to fix and what was expected.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::recipe {

struct RuleViolation {
  std::string rule;     // stable id, e.g. "heads-divisible-by-tp"
  std::string key;      // the recipe key to change
  std::string message;  // what is wrong and what was expected
  bool error = true;    // false: a warning (the framework adjusts or ignores it)
};

nlohmann::json to_json(const RuleViolation& v);
bool has_errors(const std::vector<RuleViolation>& violations);

}  // namespace attune::recipe
