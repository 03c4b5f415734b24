// RecipeDiff: the semantic difference of two recipes — each key whose value
// differs (compared by meaning: 1e-4 equals 0.0001) and each derived plan value
// that moved (DP, global batch, tokens per step, ...) — and a recipe's identity
// by the same meaning.
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

// Throws InputError when the recipes are of different frameworks. The keys
// are the document's, and `launch.env.NAME` for a variable the launch
// exports (a framework whose file has no environment section).
RecipeDiff diff_recipes(const Recipe& a, const Recipe& b);
// What a recipe is, for telling whether two trials ran the same thing: every
// setting of its document and launch environment by meaning (1e-4 and 0.0001
// alike), in key order. Two recipes have one identity when no setting differs,
// whichever order their edits were made in and whatever a model reads of them.
std::string settings_identity(const Recipe& r);
// The two files loaded with the same options, then diffed.
RecipeDiff diff_recipe_files(const std::string& a, const std::string& b, const RecipeOptions& options);
nlohmann::json to_json(const RecipeDiff& d);

}  // namespace attune::recipe
