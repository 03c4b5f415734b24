// Change and EditResult: what one lever edit did to a recipe — the change the
// user asked for and the follow-ups the adapter made so the recipe stays valid
// and keeps its objective (grad accumulation that keeps the global batch, DP
// from the world size) — with the plan before and after.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/plan.h"
#include "attune/recipe/value.h"

namespace attune::recipe {

struct Change {
  std::string key;                    // document key path
  std::optional<Value> old_value;     // nullopt: the key was absent
  std::optional<Value> new_value;     // nullopt: the key is removed
  std::string why;                    // for follow-ups: the reason in plain words
};

struct EditResult {
  std::string lever;                  // canonical lever name, or the raw key
  std::vector<Change> changes;        // the requested edit (one lever may touch several keys)
  std::vector<Change> follow_ups;     // what had to follow
  Plan before;
  Plan after;
};

// JSON of a value: numbers and booleans as JSON numbers/booleans, lists as arrays.
nlohmann::json value_to_json(const std::optional<Value>& v);
nlohmann::json to_json(const Change& c);
nlohmann::json to_json(const EditResult& e);
std::string describe(const Change& c);  // "--micro-batch-size: 1 -> 2"

}  // namespace attune::recipe
