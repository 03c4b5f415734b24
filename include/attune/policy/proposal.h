// Proposal: what a policy asks the campaign to try next — one lever moved
// from the incumbent, or a combination that only pays off together (a new TP
// with the micro batch that fits it), each dimension as the recipe's own lever
// edits, with the rule that motivated it, why, and what the corrected model
// expects of it. The campaign applies it to the incumbent (the adapter adds
// the follow-ups that keep the objective) and the gate judges the edited file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/recipe.h"

namespace attune::policy {

// One edit in the recipe's terms: a canonical lever or a raw key, and its value.
struct LeverChange {
  std::string lever;
  std::string value;
};

// One dimension moved ("tp" 2 -> 4) and the lever edits that spell it.
struct DimensionChange {
  std::string dimension;
  std::string from, to;               // in the simulator's words
  std::vector<LeverChange> settings;
};

struct Proposal {
  std::vector<DimensionChange> changes;
  std::string rule;                   // the rule that motivated it (skills/rules.yaml id, or the policy's name)
  std::string stage;                  // fix | fit | communication | bubble | kernels | layout | search
  std::string why;
  std::optional<double> predicted_gain;        // candidate / incumbent - 1, by the corrected model
  std::optional<double> predicted_memory_gib;  // peak per GPU, by the corrected model
  std::string setting;                // the setting it aims at, as the model names it ("" = unknown):
                                      // what "already tried" compares when the edited recipe reads back otherwise

  // "tp 2 -> 4, mbs 1 -> 2"
  std::string label() const;
  // "tp-mbs": for a trial's directory name.
  std::string slug() const;
};

nlohmann::json to_json(const Proposal& p);
// Throws InputError (naming `where`) for a record that is not a proposal.
Proposal proposal_from_json(const nlohmann::json& j, const std::string& where);

// The incumbent with the proposal's edits applied, each dimension's edits
// retried until the others have made them valid (TP before what depends on
// DP). nullopt with `why` when some edit never applies. `described` gets
// each change the edit made, follow-ups included, in words.
std::optional<recipe::Recipe> apply_proposal(const recipe::Recipe& incumbent, const Proposal& p, std::string& why,
                                             std::vector<std::string>* described = nullptr);

}  // namespace attune::policy
