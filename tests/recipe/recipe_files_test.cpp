// write_recipe_files: the framework file with every edit plus a wrapper, which
// Recipe::load reads back as the same recipe — framework, plan, model,
// hardware, launch and measure settings.
#include "attune/recipe/recipe_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/recipe/recipe.h"
#include "attune/recipe/wrapper_file.h"
#include "attune/util/error.h"
#include "../fixtures/scratch_dir.h"

namespace attune::recipe {
namespace {

namespace fs = std::filesystem;

const char* kMegatronScript = R"(#!/bin/bash
# A small Megatron-LM launch script (recipe_files_test).
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
TP=2
PP=1
MBS=1
GBS=128

ARGS=(
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
    --swiglu
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 1000
    --lr 3e-4
    --bf16
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --sequence-parallel
    --use-distributed-optimizer
)
torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py "${ARGS[@]}"
)";

const char* kMegatronWrapper = R"(# recipe_files_test: a Megatron-LM script on 2 H100 nodes
framework: megatron
config: train.sh
model: llama3-8b
hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}
launch:
  command: [bash, "{config}", --extra]
  workdir: /opt/megatron-lm
  env: {CUDA_DEVICE_MAX_CONNECTIONS: "1", NCCL_DEBUG: WARN}
  container: {image: "nvcr.io/nvidia/nemo:25.09", mounts: ["/lustre:/lustre"]}
  slurm: {partition: gpu, account: llm, qos: high, constraint: h100, exclusive: false, time_limit: 40m}
measure: {steps: 60, skip_first: 10}
)";

const char* kTitanToml = R"(# torchtitan (recipe_files_test)
[job]
description = "small"

[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 2
global_batch_size = 64
seq_len = 8192
steps = 1000

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = "full"
)";

const char* kTitanWrapper = R"(framework: torchtitan
config: titan.toml
hardware: {gpu: h200, nodes: 1, gpus_per_node: 8}
launch:
  env: {TORCH_NCCL_ASYNC_ERROR_HANDLING: "1"}
  slurm: {time_limit: "1:30:00"}
measure: {steps: 25}
)";

class RecipeFilesTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  test::ScratchDir scratch_{"attune_recipe_files"};
  const fs::path& dir_ = scratch_.path();
};

void expect_same_plan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.dialect, b.dialect);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.world, b.world);
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_EQ(a.pp, b.pp);
  EXPECT_EQ(a.cp, b.cp);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.mbs, b.mbs);
  EXPECT_EQ(a.gbs, b.gbs);
  EXPECT_EQ(a.grad_accum, b.grad_accum);
  EXPECT_EQ(a.seq_len, b.seq_len);
  EXPECT_EQ(a.recompute, b.recompute);
  EXPECT_EQ(a.precision, b.precision);
}

void expect_same_launch(const LaunchSettings& a, const LaunchSettings& b) {
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.workdir, b.workdir);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.container_image, b.container_image);
  EXPECT_EQ(a.container_mounts, b.container_mounts);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.account, b.account);
  EXPECT_EQ(a.qos, b.qos);
  EXPECT_EQ(a.constraint, b.constraint);
  EXPECT_EQ(a.exclusive, b.exclusive);
  EXPECT_DOUBLE_EQ(a.time_limit_s, b.time_limit_s);
}

// The written pair loads back as `r`: same framework, plan, model, hardware,
// launch and measure, and the framework file holds the document's text.
void expect_loads_back(const Recipe& r, const WrittenRecipe& w) {
  const Recipe back = Recipe::load(w.wrapper);
  EXPECT_EQ(back.framework(), r.framework());
  EXPECT_EQ(back.dialect(), r.dialect());
  EXPECT_EQ(back.config_path(), w.config);
  EXPECT_EQ(back.wrapper_path(), w.wrapper);
  expect_same_plan(back.plan(), r.plan());
  ASSERT_EQ(back.model().has_value(), r.model().has_value());
  if (r.model()) {
    EXPECT_EQ(back.model()->name, r.model()->name);
  }
  EXPECT_EQ(back.hardware().gpu, r.hardware().gpu);
  EXPECT_EQ(back.hardware().nodes, r.hardware().nodes);
  EXPECT_EQ(back.hardware().gpus_per_node, r.hardware().gpus_per_node);
  expect_same_launch(back.launch(), r.launch());
  EXPECT_EQ(back.measure().steps, r.measure().steps);
  EXPECT_EQ(back.measure().skip_first, r.measure().skip_first);
  EXPECT_EQ(back.document().text(), r.document().text());
}

TEST_F(RecipeFilesTest, MegatronScriptWithAnEditLoadsBackTheSame) {
  write("train.sh", kMegatronScript);
  Recipe r = Recipe::load(write("train.attune.yaml", kMegatronWrapper));
  ASSERT_EQ(r.framework(), Framework::Megatron);
  ASSERT_EQ(r.dialect(), "script");
  EXPECT_EQ(r.plan().world, 16);
  EXPECT_EQ(r.plan().mbs, 1);
  const EditResult e = r.set("mbs", "2");
  EXPECT_EQ(e.after.mbs, 2);
  ASSERT_EQ(r.plan().mbs, 2);
  EXPECT_EQ(r.plan().gbs, 128);  // the global batch is kept: grad accumulation follows

  const fs::path out = dir_ / "run" / "nested";  // created by write_recipe_files
  const WrittenRecipe w = write_recipe_files(r, out.string());
  EXPECT_EQ(w.config, (out / "train.sh").string());
  EXPECT_EQ(w.wrapper, (out / "train.attune.yaml").string());
  ASSERT_TRUE(fs::exists(w.config));
  ASSERT_TRUE(fs::exists(w.wrapper));
  EXPECT_EQ(read(w.config), r.document().text());
  EXPECT_NE(read(w.config).find("MBS=2"), std::string::npos) << read(w.config);
  EXPECT_TRUE(is_wrapper_file(read(w.wrapper)));

  expect_loads_back(r, w);
  const Recipe back = Recipe::load(w.wrapper);
  const Plan p = back.plan();
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.pp, 1);
  EXPECT_EQ(p.mbs, 2);
  EXPECT_EQ(p.gbs, 128);
  EXPECT_EQ(p.world, 16);
  EXPECT_EQ(back.hardware_source(), "wrapper");
  EXPECT_EQ(back.launch().command, (std::vector<std::string>{"bash", "{config}", "--extra"}));
  EXPECT_FALSE(back.launch().exclusive);
  EXPECT_DOUBLE_EQ(back.launch().time_limit_s, 2400);
  EXPECT_EQ(back.measure().steps, 60);
  EXPECT_EQ(back.measure().skip_first, 10);
  // The source files are untouched.
  EXPECT_EQ(read((dir_ / "src" / "train.sh").string()), kMegatronScript);
}

TEST_F(RecipeFilesTest, AnEditWrittenOverItsWrapperGoesIntoTheFileTheWrapperNames) {
  const std::string config = write("train.sh", kMegatronScript);
  const std::string wrapper = write("train.attune.yaml", kMegatronWrapper);
  Recipe r = Recipe::load(wrapper);
  EXPECT_EQ(edited_config_destination(r, wrapper), config);
  const std::string elsewhere = (dir_ / "out.sh").string();
  EXPECT_EQ(edited_config_destination(r, elsewhere), elsewhere);
  Recipe plain = Recipe::load(config);
  EXPECT_EQ(edited_config_destination(plain, config), config);
}

TEST_F(RecipeFilesTest, TorchtitanTomlWithAnEditLoadsBackTheSame) {
  write("titan.toml", kTitanToml);
  Recipe r = Recipe::load(write("titan.attune.yaml", kTitanWrapper));
  ASSERT_EQ(r.framework(), Framework::Torchtitan);
  EXPECT_EQ(r.plan().mbs, 2);
  EXPECT_EQ(r.plan().gbs, 64);
  r.set("mbs", "4");
  ASSERT_EQ(r.plan().mbs, 4);
  EXPECT_EQ(r.plan().gbs, 64);

  const WrittenRecipe w = write_recipe_files(r, (dir_ / "out").string());
  EXPECT_EQ(fs::path(w.config).filename(), "titan.toml");
  EXPECT_EQ(fs::path(w.wrapper).filename(), "titan.attune.yaml");
  EXPECT_EQ(read(w.config), r.document().text());
  EXPECT_NE(read(w.config).find("local_batch_size = 4"), std::string::npos) << read(w.config);
  expect_loads_back(r, w);
  const Recipe back = Recipe::load(w.wrapper);
  EXPECT_EQ(back.framework(), Framework::Torchtitan);
  EXPECT_EQ(back.plan().world, 8);
  EXPECT_EQ(back.hardware().gpu, "h200");
  ASSERT_TRUE(back.model());
  EXPECT_EQ(back.model()->name, "llama3-8b");  // from the file itself: no model in the wrapper
  EXPECT_EQ(back.launch().env.at("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_DOUBLE_EQ(back.launch().time_limit_s, 5400);
  EXPECT_EQ(back.measure().steps, 25);
}

TEST_F(RecipeFilesTest, RecipeWithoutAWrapperWritesOneCarryingTheFlags) {
  RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware.gpu = "H100";  // normalised on the way
  o.hardware.nodes = 2;
  o.hardware.gpus_per_node = 8;
  Recipe r = Recipe::load(write("train.sh", kMegatronScript), o);
  EXPECT_TRUE(r.wrapper_path().empty());
  const WrittenRecipe w = write_recipe_files(r, (dir_ / "out").string());

  const WrapperFile wf = parse_wrapper_file(w.wrapper, read(w.wrapper));
  EXPECT_EQ(wf.framework, "megatron");
  EXPECT_EQ(wf.config, w.config);
  EXPECT_EQ(wf.model, "llama3-8b");
  EXPECT_EQ(wf.hardware.gpu, "h100");
  EXPECT_EQ(wf.hardware.nodes, 2);
  EXPECT_EQ(wf.hardware.gpus_per_node, 8);
  EXPECT_TRUE(wf.launch.command.empty());
  EXPECT_EQ(wf.measure.steps, 0);

  expect_loads_back(r, w);
  const Recipe back = Recipe::load(w.wrapper);  // no flags now: the wrapper carries them
  EXPECT_EQ(back.plan().world, 16);
  EXPECT_EQ(back.hardware().gpu, "h100");
  ASSERT_TRUE(back.model());
  EXPECT_EQ(back.model()->name, "llama3-8b");
}

TEST_F(RecipeFilesTest, RecipeWithNothingBesideItWritesAMinimalWrapper) {
  Recipe r = Recipe::load(write("titan.toml", kTitanToml));
  const WrittenRecipe w = write_recipe_files(r, (dir_ / "out").string());
  const WrapperFile wf = parse_wrapper_file(w.wrapper, read(w.wrapper));
  EXPECT_EQ(wf.framework, "torchtitan");
  EXPECT_TRUE(wf.model.empty());
  EXPECT_EQ(wf.hardware.nodes, 0);
  EXPECT_EQ(read(w.wrapper).find("launch:"), std::string::npos) << read(w.wrapper);
  EXPECT_EQ(read(w.wrapper).find("measure:"), std::string::npos) << read(w.wrapper);
  expect_loads_back(r, w);
}

TEST_F(RecipeFilesTest, FrameworkForcedByFlagIsWrittenDown) {
  RecipeOptions o;
  o.framework = "megatron-lm";
  o.hardware.gpu = "b200";
  Recipe r = Recipe::load(write("run.sh", kMegatronScript), o);
  const WrittenRecipe w = write_recipe_files(r, (dir_ / "out").string());
  const WrapperFile wf = parse_wrapper_file(w.wrapper, read(w.wrapper));
  EXPECT_EQ(wf.framework, "megatron");
  EXPECT_EQ(wf.hardware.gpu, "b200");
  expect_loads_back(r, w);
}

// A declared framework version is carried as written ("25.04" stays text)
// into every wrapper attune writes; an empty one is refused, naming the key.
TEST_F(RecipeFilesTest, TheDeclaredFrameworkVersionIsCarriedAsWritten) {
  write("titan.toml", kTitanToml);
  const std::string wrapper = write("titan.attune.yaml", "framework: torchtitan\nframework_version: 25.10\nconfig: titan.toml\n");
  const Recipe r = Recipe::load(wrapper);
  EXPECT_EQ(r.options().framework_version, "25.10");
  const WrittenRecipe w = write_recipe_files(r, (dir_ / "out").string());
  EXPECT_EQ(parse_wrapper_file(w.wrapper, read(w.wrapper)).framework_version, "25.10") << read(w.wrapper);
  EXPECT_TRUE(Recipe::load(write("plain.toml", kTitanToml)).options().framework_version.empty());
  try {
    parse_wrapper_file("bad.attune.yaml", "framework: torchtitan\nframework_version: \"\"\nconfig: titan.toml\n");
    ADD_FAILURE() << "an empty version was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "framework_version");
    EXPECT_EQ(e.where().line, 2);
  }
}

TEST_F(RecipeFilesTest, WritingAgainReplacesBothFiles) {
  write("train.sh", kMegatronScript);
  Recipe r = Recipe::load(write("train.attune.yaml", kMegatronWrapper));
  const std::string out = (dir_ / "out").string();
  write_recipe_files(r, out);
  r.set("mbs", "4");
  const WrittenRecipe w = write_recipe_files(r, out);
  EXPECT_EQ(read(w.config), r.document().text());
  EXPECT_EQ(Recipe::load(w.wrapper).plan().mbs, 4);
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 2);  // no temporary left behind
}

TEST_F(RecipeFilesTest, UnwritableDirectoryThrows) {
  Recipe r = Recipe::load(write("titan.toml", kTitanToml));
  const fs::path blocker = dir_ / "file";
  std::ofstream(blocker) << "not a directory";
  EXPECT_THROW(write_recipe_files(r, (blocker / "sub").string()), std::runtime_error);
}

}  // namespace
}  // namespace attune::recipe
