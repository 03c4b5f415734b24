// RecipeDiff: the semantic difference of two recipes — each key whose value
// differs (compared by meaning: 1e-4 equals 0.0001) and each derived plan value
// that moved (DP, global batch, tokens per step, ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/recipe.h"

namespace attune::recipe {

struct KeyDifference {
  std::string key;
  std::optional<Value> old_value;  // nullopt: only in the second recipe
  std::optional<Value> new_value;  // nullopt: only in the first recipe
  std::string lever;               // catalog lever name, "" if none
};

struct DerivedDifference {
  std::string name;  // plan field
  std::string old_value;
  std::string new_value;
};

struct RecipeDiff {
  std::vector<KeyDifference> keys;
  std::vector<DerivedDifference> derived;
  bool empty() const { return keys.empty() && derived.empty(); }
};

// Throws InputError when the recipes are of different frameworks.
RecipeDiff diff_recipes(const Recipe& a, const Recipe& b);
// The two files loaded with the same options, then diffed.
RecipeDiff diff_recipe_files(const std::string& a, const std::string& b, const RecipeOptions& options);
nlohmann::json to_json(const RecipeDiff& d);

}  // namespace attune::recipe
