#include "attune/recipe/model_spec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace attune::recipe {
namespace {

const ModelSpec& preset(const std::string& name) {
  const ModelSpec* m = find_model_preset(name);
  if (m == nullptr) throw std::runtime_error("missing preset " + name);
  return *m;
}

TEST(ModelPresets, RequiredPresetsExist) {
  for (const char* name :
       {"llama3-8b", "llama3-70b", "llama3-405b", "llama3.2-1b", "llama3.2-3b", "mistral-7b",
        "mixtral-8x7b", "mixtral-8x22b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b",
        "qwen3-235b-a22b", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b", "glm-4.5", "minimax-m2"}) {
    const ModelSpec* m = find_model_preset(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, name);
    EXPECT_FALSE(m->display.empty()) << name;
    EXPECT_GT(m->max_seq, 0) << name;
  }
}

struct Dims {
  const char* name;
  int layers, hidden, heads, kv_heads, ffn, vocab;
};

TEST(ModelPresets, PublishedDimensions) {
  const Dims dims[] = {
      {"llama3-8b", 32, 4096, 32, 8, 14336, 128256},
      {"llama3-70b", 80, 8192, 64, 8, 28672, 128256},
      {"llama3-405b", 126, 16384, 128, 8, 53248, 128256},
      {"llama3.2-1b", 16, 2048, 32, 8, 8192, 128256},
      {"llama3.2-3b", 28, 3072, 24, 8, 8192, 128256},
      {"mistral-7b", 32, 4096, 32, 8, 14336, 32000},
      {"mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000},
      {"mixtral-8x22b", 56, 6144, 48, 8, 16384, 32768},
      {"qwen3-8b", 36, 4096, 32, 8, 12288, 151936},
      {"qwen3-32b", 64, 5120, 64, 8, 25600, 151936},
      {"qwen3-30b-a3b", 48, 2048, 32, 4, 6144, 151936},
      {"qwen3-235b-a22b", 94, 4096, 64, 4, 12288, 151936},
      {"deepseek-v3", 61, 7168, 128, 128, 18432, 129280},
      {"gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088},
      {"gpt-oss-20b", 24, 2880, 64, 8, 2880, 201088},
  };
  for (const auto& d : dims) {
    SCOPED_TRACE(d.name);
    const ModelSpec& m = preset(d.name);
    EXPECT_EQ(m.layers, d.layers);
    EXPECT_EQ(m.hidden, d.hidden);
    EXPECT_EQ(m.heads, d.heads);
    EXPECT_EQ(m.kv_heads, d.kv_heads);
    EXPECT_EQ(m.ffn, d.ffn);
    EXPECT_EQ(m.vocab, d.vocab);
  }
}

TEST(ModelPresets, SpecificFields) {
  EXPECT_TRUE(preset("llama3.2-1b").tied_embeddings);
  EXPECT_TRUE(preset("llama3.2-3b").tied_embeddings);
  EXPECT_FALSE(preset("llama3-8b").tied_embeddings);
  EXPECT_EQ(preset("llama3-8b").head_dim, 0);
  EXPECT_EQ(preset("qwen3-32b").head_dim, 128);
  EXPECT_EQ(preset("qwen3-30b-a3b").head_dim, 128);

  const ModelSpec& ds = preset("deepseek-v3");
  EXPECT_TRUE(ds.is_moe());
  EXPECT_TRUE(ds.is_mla());
  EXPECT_EQ(ds.experts, 256);
  EXPECT_EQ(ds.top_k, 8);
  EXPECT_EQ(ds.shared_experts, 1);
  EXPECT_EQ(ds.moe_ffn, 2048);
  EXPECT_EQ(ds.dense_layers, 3);
  EXPECT_EQ(ds.q_lora_rank, 1536);
  EXPECT_EQ(ds.kv_lora_rank, 512);
  EXPECT_EQ(ds.qk_nope_head_dim, 128);
  EXPECT_EQ(ds.qk_rope_head_dim, 64);
  EXPECT_EQ(ds.v_head_dim, 128);

  const ModelSpec& oss = preset("gpt-oss-120b");
  EXPECT_EQ(oss.head_dim, 64);
  EXPECT_EQ(oss.experts, 128);
  EXPECT_EQ(oss.top_k, 4);
  EXPECT_EQ(oss.moe_ffn, 2880);
  EXPECT_EQ(preset("gpt-oss-20b").experts, 32);
  EXPECT_EQ(preset("gpt-oss-20b").top_k, 4);

  EXPECT_EQ(preset("mixtral-8x7b").experts, 8);
  EXPECT_EQ(preset("mixtral-8x7b").top_k, 2);
  EXPECT_EQ(preset("qwen3-30b-a3b").experts, 128);
  EXPECT_EQ(preset("qwen3-30b-a3b").top_k, 8);
  EXPECT_EQ(preset("qwen3-30b-a3b").moe_ffn, 768);
  EXPECT_EQ(preset("qwen3-235b-a22b").moe_ffn, 1536);
  EXPECT_FALSE(preset("qwen3-8b").is_moe());
  EXPECT_FALSE(preset("llama3-70b").is_mla());
}

TEST(FindModelPreset, MatchesNamesAliasesAndContainedAliases) {
  const std::pair<const char*, const char*> cases[] = {
      {"llama3-8b", "llama3-8b"},
      {"LLAMA3-8B", "llama3-8b"},
      {"Llama 3.1 8B", "llama3-8b"},
      {"meta-llama/Llama-3.1-8B", "llama3-8b"},
      {"meta-llama/Meta-Llama-3-8B-Instruct", "llama3-8b"},
      {"NousResearch/Meta-Llama-3.1-8B", "llama3-8b"},
      {"llama3.1_8b", "llama3-8b"},
      {"meta-llama/Llama-3.1-70B-Instruct", "llama3-70b"},
      {"meta-llama/Llama-3.3-70B-Instruct", "llama3-70b"},
      {"llama3.3-70b", "llama3-70b"},
      {"meta-llama/Llama-3.1-405B-FP8", "llama3-405b"},
      {"meta-llama/Llama-3.2-1B-Instruct", "llama3.2-1b"},
      {"unsloth/Llama-3.2-3B", "llama3.2-3b"},
      {"mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b"},
      {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
      {"mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b"},
      {"Qwen/Qwen3-8B", "qwen3-8b"},
      {"Qwen/Qwen3-32B", "qwen3-32b"},
      {"Qwen3-30B-A3B", "qwen3-30b-a3b"},
      {"Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"},
      {"Qwen/Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b"},
      {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
      {"deepseek-ai/DeepSeek-R1", "deepseek-v3"},
      {"deepseek-r1", "deepseek-v3"},
      {"DeepSeek-V3.1-Base", "deepseek-v3"},
      {"deepseek_v3 671B", "deepseek-v3"},
      {"openai/gpt-oss-20b", "gpt-oss-20b"},
      {"openai/gpt-oss-120b", "gpt-oss-120b"},
      {"zai-org/GLM-4.5", "glm-4.5"},
      {"zai-org/GLM-4.5-Air", "glm-4.5-air"},
      {"MiniMaxAI/MiniMax-M2", "minimax-m2"},
  };
  for (const auto& [name, want] : cases) {
    const ModelSpec* m = find_model_preset(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name, want) << name;
  }
}

TEST(FindModelPreset, RejectsLookalikes) {
  for (const char* name : {"", "gpt2", "llama", "Qwen3", "deepseek_v3 16B", "Llama-3.2-11B-Vision",
                           "DeepSeek-R1-Distill-Qwen-32B", "Qwen/Qwen2.5-7B", "/", "mixtral"}) {
    const ModelSpec* m = find_model_preset(name);
    EXPECT_EQ(m, nullptr) << name << " -> " << (m ? m->name : "");
  }
}

TEST(ModelPresets, ArchitectureSanity) {
  std::set<std::string> names;
  for (const auto& m : model_presets()) {
    SCOPED_TRACE(m.name);
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate";
    EXPECT_GT(m.layers, 0);
    EXPECT_GT(m.hidden, 0);
    EXPECT_GT(m.heads, 0);
    EXPECT_GT(m.kv_heads, 0);
    EXPECT_GT(m.ffn, 0);
    EXPECT_GT(m.vocab, 0);
    EXPECT_EQ(m.heads % m.kv_heads, 0);
    EXPECT_FALSE(m.activation.empty());
    // head_dim is given only when it is not hidden/heads.
    if (m.head_dim == 0) {
      EXPECT_EQ(m.hidden % m.heads, 0);
    } else {
      EXPECT_NE(m.head_dim * m.heads, m.hidden);
    }
    if (m.is_mla()) {
      EXPECT_EQ(m.head_dim, m.qk_nope_head_dim + m.qk_rope_head_dim);
      EXPECT_GT(m.v_head_dim, 0);
      EXPECT_GT(m.q_lora_rank, 0);
      EXPECT_EQ(m.kv_heads, m.heads);
    } else {
      EXPECT_EQ(m.q_lora_rank + m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim, 0);
    }
    if (m.is_moe()) {
      EXPECT_GT(m.top_k, 0);
      EXPECT_LE(m.top_k, m.experts);
      EXPECT_GT(m.moe_ffn, 0);
      EXPECT_LT(m.dense_layers, m.layers);
    } else {
      EXPECT_EQ(m.top_k, 0);
      EXPECT_EQ(m.shared_experts, 0);
      EXPECT_EQ(m.moe_ffn, 0);
      EXPECT_EQ(m.dense_layers, 0);
    }
    // Every spelling finds its own preset.
    EXPECT_EQ(find_model_preset(m.name), &m);
    EXPECT_EQ(find_model_preset(m.display), &m) << m.display;
    for (const auto& a : m.aliases) EXPECT_EQ(find_model_preset(a), &m) << a;
  }
}

}  // namespace
}  // namespace attune::recipe
