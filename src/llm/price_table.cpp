#include "attune/llm/price_table.h"

#include <cstdlib>
#include <vector>

#include "attune/llm/llm_client.h"

namespace attune::llm {

namespace {

struct PriceEntry {
  const char* provider;
  const char* model_prefix;    // the longest matching prefix wins
  TokenPrice price;
};

// List prices in US dollars per million tokens (input, output), and the
// prompt cache's write and read prices as multiples of the input price.
const std::vector<PriceEntry>& table() {
  static const std::vector<PriceEntry> t = {
      {"openai", "gpt-4o-mini", {0.15, 0.60, 1, 0.5}},
      {"openai", "gpt-4o", {2.50, 10.00, 1, 0.5}},
      {"openai", "gpt-4.1-mini", {0.40, 1.60, 1, 0.25}},
      {"openai", "gpt-4.1-nano", {0.10, 0.40, 1, 0.25}},
      {"openai", "gpt-4.1", {2.00, 8.00, 1, 0.25}},
      {"openai", "o4-mini", {1.10, 4.40, 1, 0.25}},
      {"openai", "o3", {2.00, 8.00, 1, 0.25}},
      {"anthropic", "claude-3-5-haiku", {0.80, 4.00, 1.25, 0.1}},
      {"anthropic", "claude-3-5-sonnet", {3.00, 15.00, 1.25, 0.1}},
      {"anthropic", "claude-3-7-sonnet", {3.00, 15.00, 1.25, 0.1}},
      {"anthropic", "claude-sonnet-4", {3.00, 15.00, 1.25, 0.1}},
      {"anthropic", "claude-opus-4", {15.00, 75.00, 1.25, 0.1}},
      {"anthropic", "claude-haiku-4", {1.00, 5.00, 1.25, 0.1}},
      {"bedrock", "anthropic.claude-3-5-haiku", {0.80, 4.00, 1.25, 0.1}},
      {"bedrock", "anthropic.claude-3-5-sonnet", {3.00, 15.00, 1.25, 0.1}},
      {"bedrock", "anthropic.claude-3-7-sonnet", {3.00, 15.00, 1.25, 0.1}},
      {"bedrock", "anthropic.claude-sonnet-4", {3.00, 15.00, 1.25, 0.1}},
      {"bedrock", "anthropic.claude-opus-4", {15.00, 75.00, 1.25, 0.1}},
      {"bedrock", "amazon.nova-pro", {0.80, 3.20}},
      {"bedrock", "amazon.nova-lite", {0.06, 0.24}},
      {"bedrock", "meta.llama3-1-70b", {0.72, 0.72}},
  };
  return t;
}

// Bedrock's cross-region profiles prefix the id ("us.anthropic...").
std::string bedrock_base_id(const std::string& model) {
  for (const char* region : {"us.", "eu.", "apac.", "global."}) {
    if (model.rfind(region, 0) == 0) return model.substr(std::string(region).size());
  }
  return model;
}

bool local_server(const std::string& base_url) {
  for (const char* host : {"://localhost", "://127.", "://[::1]", "://0.0.0.0"}) {
    if (base_url.find(host) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::optional<TokenPrice> list_price(const std::string& provider, const std::string& model, const std::string& base_url) {
  if (provider == "openai" && local_server(base_url)) return TokenPrice{0, 0};
  const std::string id = provider == "bedrock" ? bedrock_base_id(model) : model;
  const PriceEntry* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& e : table()) {
    const std::string prefix = e.model_prefix;
    if (provider == e.provider && id.rfind(prefix, 0) == 0 && prefix.size() > best_len) {
      best = &e;
      best_len = prefix.size();
    }
  }
  if (!best) return std::nullopt;
  return best->price;
}

TokenPrice parse_price_flag(const std::string& text, const std::string& flag) {
  const auto comma = text.find(',');
  const auto fail = [&] {
    return LlmError(LlmErrorKind::config,
                    flag + ": expected INPUT,OUTPUT in US dollars per million tokens (e.g. 3,15), got '" + text + "'");
  };
  if (comma == std::string::npos) throw fail();
  TokenPrice p;
  char* end = nullptr;
  const std::string in = text.substr(0, comma), out = text.substr(comma + 1);
  p.input_per_mtok = std::strtod(in.c_str(), &end);
  if (in.empty() || *end != '\0' || !(p.input_per_mtok >= 0)) throw fail();
  p.output_per_mtok = std::strtod(out.c_str(), &end);
  if (out.empty() || *end != '\0' || !(p.output_per_mtok >= 0)) throw fail();
  return p;
}

double cost_usd(const TokenPrice& price, const Usage& usage) {
  const double uncached = static_cast<double>(usage.input_tokens - usage.cache_write_tokens - usage.cache_read_tokens);
  const double input = uncached + price.cache_write_factor * static_cast<double>(usage.cache_write_tokens) +
                       price.cache_read_factor * static_cast<double>(usage.cache_read_tokens);
  return (price.input_per_mtok * input + price.output_per_mtok * static_cast<double>(usage.output_tokens)) / 1e6;
}

}  // namespace attune::llm
