#include "attune/gate/verdict.h"

#include "attune/recipe/edit.h"

namespace attune::gate {

std::string to_string(ChangeStatus s) {
  switch (s) {
    case ChangeStatus::Lever: return "lever";
    case ChangeStatus::OptedIn: return "opted_in";
    case ChangeStatus::FollowUp: return "follow_up";
    case ChangeStatus::AllowedKey: return "allowed_key";
    case ChangeStatus::Parity: return "parity";
    case ChangeStatus::Refused: return "refused";
  }
  return "?";
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : v.changes) {
    nlohmann::json j = {{"key", c.key},
                        {"old", recipe::value_to_json(c.old_value)},
                        {"new", recipe::value_to_json(c.new_value)},
                        {"lever", c.lever.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.lever)},
                        {"status", to_string(c.status)}};
    if (!c.rule.empty()) j["rule"] = c.rule;
    if (!c.reason.empty()) j["reason"] = c.reason;
    changes.push_back(j);
  }
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : v.reasons) reasons.push_back({{"rule", r.rule}, {"key", r.key}, {"message", r.message}});
  nlohmann::json inv = nlohmann::json::object();
  for (const auto& [name, ba] : v.invariants) inv[name] = {ba.first, ba.second};
  return {{"verdict", v.allowed ? "allow" : "refuse"},
          {"requires_parity", v.requires_parity},
          {"changes", changes},
          {"reasons", reasons},
          {"invariants", inv},
          {"warnings", v.warnings}};
}

}  // namespace attune::gate
