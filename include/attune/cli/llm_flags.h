// --llm, --llm-base-url, --llm-max-tokens, --llm-retries, --llm-rounds and
// --llm-price: how the LLM policies (`llm`, `hybrid`) reach their model and
// what they may spend, as every command that runs a campaign takes them.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "attune/policy/policy.h"

namespace attune::cli {

struct LlmFlags {
  std::string llm, base_url, price;
  long max_tokens = 2'000'000;
  int retries = 3, rounds = 6;
};

void add_llm_flags(CLI::App& cmd, LlmFlags& flags);

// The settings the flags give; none without --llm. InputError naming --llm
// for a malformed model or price, or --llm-base-url without --llm.
std::optional<policy::LlmPolicySettings> llm_settings(const LlmFlags& flags);

// The "llm" line of a summary: provider, model, calls, tokens, cost, who
// proposed how many trials, and a fallback; nothing when `usage` (a policy's
// usage()) is not an LLM's.
void print_llm_usage(const nlohmann::json& usage);

}  // namespace attune::cli
