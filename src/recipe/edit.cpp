#include "attune/recipe/edit.h"

namespace attune::recipe {

nlohmann::json value_to_json(const std::optional<Value>& v) {
  if (!v) return nullptr;
  if (v->kind == ValueKind::List) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& item : v->items) arr.push_back(value_to_json(item));
    return arr;
  }
  if (v->is_null()) return nullptr;
  if (v->kind == ValueKind::Bool) {
    if (auto b = v->as_bool()) return *b;
  }
  if (v->kind == ValueKind::Int) {
    if (auto i = v->as_int()) return *i;
  }
  if (v->kind == ValueKind::Float) {
    if (auto d = v->as_double()) return *d;
  }
  return v->text;
}

nlohmann::json to_json(const Change& c) {
  nlohmann::json j = {{"key", c.key}, {"old", value_to_json(c.old_value)}, {"new", value_to_json(c.new_value)}};
  if (!c.why.empty()) j["why"] = c.why;
  if (!c.old_value) j["added"] = true;
  if (!c.new_value) j["removed"] = true;
  return j;
}

nlohmann::json to_json(const EditResult& e) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : e.changes) changes.push_back(to_json(c));
  nlohmann::json follow = nlohmann::json::array();
  for (const auto& c : e.follow_ups) follow.push_back(to_json(c));
  return {{"lever", e.lever}, {"changes", changes}, {"follow_ups", follow},
          {"plan_before", to_json(e.before)}, {"plan_after", to_json(e.after)}};
}

std::string describe(const Change& c) {
  std::string from = c.old_value ? c.old_value->str() : "(absent)";
  std::string to = c.new_value ? c.new_value->str() : "(removed)";
  return c.key + ": " + from + " -> " + to;
}

}  // namespace attune::recipe
