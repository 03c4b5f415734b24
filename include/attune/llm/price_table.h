// PriceTable: what a provider charges per million input and output tokens
// for a model, so a campaign can say what its LLM calls cost. The built-in
// entries are list prices at the time of writing, matched by model-name
// prefix; `--llm-price IN,OUT` overrides them, and a model nobody priced
// costs "unknown", never a guessed figure.
#pragma once

#include <optional>
#include <string>

#include "attune/llm/chat.h"

namespace attune::llm {

struct TokenPrice {
  double input_per_mtok = 0;   // US dollars per million input tokens
  double output_per_mtok = 0;
  // Prompt-cache tokens at these multiples of the input price (Anthropic:
  // writes 1.25, reads 0.1; OpenAI: reads 0.5 or 0.25 by model, no write charge).
  double cache_write_factor = 1;
  double cache_read_factor = 1;
};

// The price of `model` at `provider`; nullopt when the table has none (a
// local server costs nothing: openai with a base URL of localhost is 0).
std::optional<TokenPrice> list_price(const std::string& provider, const std::string& model, const std::string& base_url);

// "3,15" -> {3, 15} (cached tokens at the input price); LlmError(config)
// naming `flag` otherwise.
TokenPrice parse_price_flag(const std::string& text, const std::string& flag = "--llm-price");

double cost_usd(const TokenPrice& price, const Usage& usage);

}  // namespace attune::llm
