#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attune/recipe/recipe_diff.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

const char* kBase = R"(model:
  tensor_model_parallel_size: 2
  seq_length: 4096
train:
  global_batch_size: 64
  micro_batch_size: 1
optimizer:
  lr: 1e-4
)";

RecipeOptions two_nodes() {
  RecipeOptions o;
  o.hardware.nodes = 2;
  return o;
}

TEST(RecipeDiff, EqualNumbersWrittenDifferentlyAreNoDifference) {
  std::string other = kBase;
  other.replace(other.find("1e-4"), 4, "0.0001");
  Recipe a = Recipe::from_text("a.yaml", kBase, two_nodes());
  Recipe b = Recipe::from_text("b.yaml", other, two_nodes());
  EXPECT_TRUE(diff_recipes(a, b).empty());
}

TEST(RecipeDiff, KeysAndDerivedValues) {
  Recipe a = Recipe::from_text("a.yaml", kBase, two_nodes());
  Recipe b = a;
  b.set("tp", "4");
  b.set("--no-such-key", "1", /*allow_new_key=*/true);
  RecipeDiff d = diff_recipes(a, b);
  ASSERT_EQ(d.keys.size(), 2u);
  EXPECT_EQ(d.keys[0].key, "model.tensor_model_parallel_size");
  EXPECT_EQ(d.keys[0].lever, "tp");
  EXPECT_EQ(d.keys[0].old_value->text, "2");
  EXPECT_EQ(d.keys[0].new_value->text, "4");
  EXPECT_FALSE(d.keys[1].old_value.has_value());
  bool dp_moved = false;
  for (const auto& x : d.derived) dp_moved |= (x.name == "dp" && x.old_value == "8" && x.new_value == "4");
  EXPECT_TRUE(dp_moved);
  auto j = to_json(d);
  EXPECT_EQ(j["changes"][0]["new"], 4);
}

TEST(RecipeDiff, DifferentFrameworksAreAnError) {
  Recipe a = Recipe::from_text("a.yaml", kBase, two_nodes());
  Recipe b = Recipe::from_text("b.toml", "[training]\nlocal_batch_size = 1\nseq_len = 4096\n", two_nodes());
  EXPECT_THROW(diff_recipes(a, b), InputError);
}

TEST(WrapperFile, SuppliesHardwareAndModel) {
  auto dir = std::filesystem::temp_directory_path() / "attune_wrapper_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "b.yaml") << kBase;
  std::ofstream(dir / "b.attune.yaml") << "framework: bridge\nconfig: b.yaml\nmodel: llama3-8b\n"
                                          "hardware: {gpu: H200, nodes: 4, gpus_per_node: 8}\n";
  Recipe r = Recipe::load((dir / "b.attune.yaml").string());
  EXPECT_EQ(r.config_path(), (dir / "b.yaml").string());
  EXPECT_EQ(r.hardware().gpu, "h200");
  EXPECT_EQ(r.plan().world, 32);
  EXPECT_EQ(r.plan().world_source, "wrapper");
  ASSERT_TRUE(r.model());
  EXPECT_EQ(r.model()->name, "llama3-8b");

  std::ofstream(dir / "bad.attune.yaml") << "framework: bridge\nconfig: b.yaml\nhardware: {gpu: a100}\n";
  try {
    Recipe::load((dir / "bad.attune.yaml").string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "hardware.gpu");
    EXPECT_EQ(e.where().line, 3);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attune::recipe
