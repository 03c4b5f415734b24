// PriceTable: list prices by the longest model-name prefix, Bedrock's
// cross-region ids, local servers at no cost, no price for an unknown model,
// the --llm-price flag, and what prompt-cache tokens cost.
#include "attune/llm/price_table.h"

#include <gtest/gtest.h>

#include "attune/llm/llm_client.h"

namespace attune::llm {
namespace {

TEST(PriceTable, TheLongestPrefixWins) {
  const auto mini = list_price("openai", "gpt-4o-mini-2024-07-18", "");
  ASSERT_TRUE(mini);
  EXPECT_DOUBLE_EQ(mini->input_per_mtok, 0.15);
  const auto full = list_price("openai", "gpt-4o-2024-08-06", "");
  ASSERT_TRUE(full);
  EXPECT_DOUBLE_EQ(full->input_per_mtok, 2.50);
  EXPECT_DOUBLE_EQ(full->cache_read_factor, 0.5);
  const auto sonnet = list_price("anthropic", "claude-sonnet-4-20250514", "");
  ASSERT_TRUE(sonnet);
  EXPECT_DOUBLE_EQ(sonnet->output_per_mtok, 15.00);
  EXPECT_DOUBLE_EQ(sonnet->cache_write_factor, 1.25);
}

TEST(PriceTable, BedrockCrossRegionIdsAndLocalServers) {
  const auto profile = list_price("bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0", "");
  ASSERT_TRUE(profile);
  EXPECT_DOUBLE_EQ(profile->input_per_mtok, 3.00);
  const auto local = list_price("openai", "Qwen/Qwen3-32B", "http://127.0.0.1:8000/v1");
  ASSERT_TRUE(local);
  EXPECT_DOUBLE_EQ(local->input_per_mtok, 0);
  EXPECT_FALSE(list_price("openai", "Qwen/Qwen3-32B", "https://inference.example.com/v1"));
  EXPECT_FALSE(list_price("anthropic", "gpt-4o", ""));
}

TEST(PriceTable, ThePriceFlag) {
  const TokenPrice p = parse_price_flag("3,15");
  EXPECT_DOUBLE_EQ(p.input_per_mtok, 3);
  EXPECT_DOUBLE_EQ(p.output_per_mtok, 15);
  EXPECT_DOUBLE_EQ(p.cache_read_factor, 1);
  for (const char* bad : {"3", "3,", ",15", "x,15", "3,-1", "3;15"}) {
    EXPECT_THROW(parse_price_flag(bad), LlmError) << bad;
  }
}

// 1M input tokens of which 600k read from the cache and 100k written to it,
// on Claude Sonnet: 300k at $3, 100k at $3.75, 600k at $0.30; 10k out at $15.
TEST(PriceTable, CacheTokensArePricedApart) {
  const auto sonnet = list_price("anthropic", "claude-sonnet-4-5", "");
  ASSERT_TRUE(sonnet);
  Usage u;
  u.input_tokens = 1'000'000;
  u.cache_read_tokens = 600'000;
  u.cache_write_tokens = 100'000;
  u.output_tokens = 10'000;
  EXPECT_NEAR(cost_usd(*sonnet, u), 0.9 + 0.375 + 0.18 + 0.15, 1e-9);
  u.cache_read_tokens = u.cache_write_tokens = 0;
  EXPECT_NEAR(cost_usd(*sonnet, u), 3.0 + 0.15, 1e-9);
}

}  // namespace
}  // namespace attune::llm
