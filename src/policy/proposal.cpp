#include "attune/policy/proposal.h"

#include <fmt/format.h>

#include "attune/util/error.h"

namespace attune::policy {

std::string Proposal::label() const {
  std::string out;
  for (const DimensionChange& c : changes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} -> {}", c.dimension, c.from.empty() ? "default" : c.from, c.to);
  }
  return out.empty() ? "no change" : out;
}

std::string Proposal::slug() const {
  std::string out;
  for (const DimensionChange& c : changes) {
    if (!out.empty()) out += "-";
    for (char ch : c.dimension) out += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  }
  if (out.size() > 40) out.resize(40);
  return out.empty() ? "none" : out;
}

nlohmann::json to_json(const Proposal& p) {
  nlohmann::json changes = nlohmann::json::array();
  for (const DimensionChange& c : p.changes) {
    nlohmann::json settings = nlohmann::json::array();
    for (const LeverChange& s : c.settings) settings.push_back({{"lever", s.lever}, {"value", s.value}});
    changes.push_back({{"dimension", c.dimension}, {"from", c.from}, {"to", c.to}, {"settings", settings}});
  }
  nlohmann::json j = {{"changes", changes}, {"rule", p.rule}, {"stage", p.stage}, {"why", p.why}};
  j["predicted_gain"] = p.predicted_gain ? nlohmann::json(*p.predicted_gain) : nlohmann::json(nullptr);
  j["predicted_memory_gib"] = p.predicted_memory_gib ? nlohmann::json(*p.predicted_memory_gib) : nlohmann::json(nullptr);
  j["setting"] = p.setting;
  return j;
}

Proposal proposal_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    Proposal p;
    for (const auto& c : j.at("changes")) {
      DimensionChange d{c.at("dimension").get<std::string>(), c.at("from").get<std::string>(),
                        c.at("to").get<std::string>(), {}};
      for (const auto& s : c.at("settings")) d.settings.push_back({s.at("lever").get<std::string>(), s.at("value").get<std::string>()});
      p.changes.push_back(std::move(d));
    }
    p.rule = j.value("rule", "");
    p.stage = j.value("stage", "");
    p.why = j.value("why", "");
    p.setting = j.value("setting", "");
    if (j.contains("predicted_gain") && j["predicted_gain"].is_number()) p.predicted_gain = j["predicted_gain"].get<double>();
    if (j.contains("predicted_memory_gib") && j["predicted_memory_gib"].is_number())
      p.predicted_memory_gib = j["predicted_memory_gib"].get<double>();
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw InputError({where, 0, 0}, "proposal", std::string("not a proposal: ") + e.what());
  }
}

std::optional<recipe::Recipe> apply_proposal(const recipe::Recipe& incumbent, const Proposal& p, std::string& why,
                                             std::vector<std::string>* described) {
  recipe::Recipe candidate = incumbent;
  std::vector<const DimensionChange*> pending;
  for (const DimensionChange& c : p.changes) pending.push_back(&c);
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      recipe::Recipe attempt = candidate;
      std::vector<std::string> words;
      try {
        for (const LeverChange& s : (*it)->settings) {
          const recipe::EditResult e = attempt.set(s.lever, s.value, s.lever.rfind("env.", 0) == 0);
          for (const auto& c : e.changes) words.push_back(recipe::describe(c));
          for (const auto& c : e.follow_ups) words.push_back(recipe::describe(c) + " (" + c.why + ")");
        }
        candidate = std::move(attempt);
        if (described) described->insert(described->end(), words.begin(), words.end());
        it = pending.erase(it);
        progress = true;
      } catch (const InputError& e) {
        why = (*it)->dimension + " = " + (*it)->to + ": " + e.message();
        ++it;
      }
    }
    if (!progress) return std::nullopt;
  }
  return candidate;
}

}  // namespace attune::policy
