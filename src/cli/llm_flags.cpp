#include "attune/cli/llm_flags.h"

#include <fmt/format.h>

#include "attune/cli/flag_checks.h"
#include "attune/util/error.h"

namespace attune::cli {

void add_llm_flags(CLI::App& cmd, LlmFlags& f) {
  cmd.add_option("--llm", f.llm,
                 "Model for the llm and hybrid policies: openai:MODEL, anthropic:MODEL or bedrock:MODEL_ID (keys from "
                 "OPENAI_API_KEY, ANTHROPIC_API_KEY, the AWS variables or ~/.aws/credentials)");
  cmd.add_option("--llm-base-url", f.base_url,
                 "The provider's endpoint (an OpenAI-compatible vLLM, SGLang, Ollama or llama.cpp server: "
                 "http://host:8000/v1; default the provider's, or OPENAI_BASE_URL)");
  cmd.add_option("--llm-max-tokens", f.max_tokens,
                 "Input + output tokens the LLM may use over a campaign before the rules take over (default 2000000)")
      ->check(whole_number(1, LLONG_MAX));
  cmd.add_option("--llm-retries", f.retries,
                 "Retries of a transient provider error (429, 5xx, 529, no answer) before the trial goes to the rules (default 3)")
      ->check(whole_number(0, 10));
  cmd.add_option("--llm-rounds", f.rounds, "Model turns allowed to reach one valid proposal (default 6)")
      ->check(whole_number(1, 50));
  cmd.add_option("--llm-price", f.price,
                 "US dollars per million input and output tokens, IN,OUT (default: the built-in list price, if any)");
}

std::optional<policy::LlmPolicySettings> llm_settings(const LlmFlags& f) {
  if (f.llm.empty()) {
    if (!f.base_url.empty()) throw InputError({}, "--llm-base-url", "needs --llm PROVIDER:MODEL");
    return std::nullopt;
  }
  try {
    policy::LlmPolicySettings s;
    s.client = llm::parse_llm_flag(f.llm);
    s.client.base_url = f.base_url;
    s.client.max_attempts = f.retries + 1;
    s.max_tokens = f.max_tokens;
    s.rounds_per_trial = f.rounds;
    if (!f.price.empty()) s.price = llm::parse_price_flag(f.price);
    return s;
  } catch (const llm::LlmError& e) {
    throw InputError({}, "--llm", e.what());
  }
}

void print_llm_usage(const nlohmann::json& u) {
  if (!u.is_object() || !u.contains("calls")) return;
  const std::string cost = u["cost_usd"].is_number() ? fmt::format("${:.4f}", u["cost_usd"].get<double>()) : "cost unknown";
  fmt::print("llm         {}:{}: {} calls, {} input + {} output tokens, {}; {} trials proposed by the LLM, {} by the rules\n",
             u.value("provider", ""), u.value("model", ""), u.value("calls", 0), u.value("input_tokens", 0L),
             u.value("output_tokens", 0L), cost, u.value("trials_by_llm", 0), u.value("trials_by_rules", 0));
  if (u["fallback"].is_string()) fmt::print("            fell back to rules: {}\n", u["fallback"].get<std::string>());
}

}  // namespace attune::cli
