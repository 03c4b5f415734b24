// The tools the LLM policy offers its model — propose, predict, read_log,
// read_profile and stop, by those exact names — with their JSON schemas, and
// the check of a call's arguments against them. A call that fails the check
// is answered with the reason instead of being acted on, so a model that
// invents an argument or leaves one out is told so in the next request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/llm/chat.h"

namespace attune::policy {

// `hybrid` also documents choosing a ranked candidate with propose("candidate", N).
std::vector<llm::ToolSpec> llm_policy_tools(bool hybrid);

// The reason `call` does not fit its tool's schema (unknown tool, arguments
// that are not a JSON object, a missing or unknown argument, a wrong type or
// range); nullopt when it fits.
std::optional<std::string> check_tool_call(const llm::ToolCall& call, const std::vector<llm::ToolSpec>& tools);

// A proposal's value as the recipe editor takes it: strings as they are,
// whole numbers without a point, booleans as true/false.
std::string value_text(const nlohmann::json& value);

}  // namespace attune::policy
