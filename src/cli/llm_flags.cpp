#include "attune/cli/llm_flags.h"

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

}  // namespace attune::cli
