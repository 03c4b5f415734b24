// What the LLM policy tells its model. The system prompt is the skill
// (SKILL.md), the lever catalog of the recipe's framework, the lessons of
// earlier campaigns that match this GPU, model class and framework, what the
// gate refuses and why, and how to use the tools. Each round's user message
// carries the whole state, since models lose track across turns: the
// incumbent's plan and its diff from the original, every trial so far as a
// table, the incumbent's latest diagnosis, the noise to beat, the budget
// left and what one more trial costs — and, for `hybrid`, the rules'
// ranking with the corrected model's predictions.
#pragma once

#include <string>
#include <vector>

#include "attune/policy/policy.h"

namespace attune::policy {

// One candidate the rules policy ranked, for hybrid.
struct RankedCandidate {
  Proposal proposal;
  double predicted_gain = 0;
};

std::string llm_system_prompt(const recipe::Recipe& original, const std::vector<Lesson>& lessons, bool hybrid);

// `rules_choice` is what the rules would propose ("" when they would stop,
// with `rules_stop` saying why); `ranking` is empty outside hybrid.
std::string llm_state_message(const PolicyContext& context, const std::vector<RankedCandidate>& ranking,
                              const std::string& rules_choice, const std::string& rules_stop);

}  // namespace attune::policy
