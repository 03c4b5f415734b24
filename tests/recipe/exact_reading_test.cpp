// What the recipe reader does with values it cannot read exactly: a layout
// number that is not one is an error naming its key and line; one only the run
// knows (`$(nproc)`, an environment variable, `read`) is reported as unknown,
// never replaced by a default; a flag given twice is read as argparse reads
// it (the last on the command line wins).
#include <gtest/gtest.h>

#include <string>

#include "attune/recipe/recipe.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

RecipeOptions one_node() {
  RecipeOptions o;
  o.hardware.nodes = 1;
  o.hardware.gpus_per_node = 8;
  o.hardware.gpu = "h100";
  return o;
}

std::string script(const std::string& tp = "2", const std::string& gbs = "256", const std::string& seq = "4096",
                   const std::string& before_args = "", const std::string& launch_tail = "") {
  return "#!/bin/bash\nTP=" + tp + "\nMBS=1\nGBS=" + gbs + "\n" + before_args + R"(ARGS=(
  --tensor-model-parallel-size $TP
  --micro-batch-size $MBS
  --global-batch-size $GBS
  --seq-length )" + seq + R"(
  --num-layers 32 --hidden-size 4096 --num-attention-heads 32
  --lr 3e-4
  --bf16
)
)" + std::string("torchrun --nproc_per_node 8 pretrain_gpt.py ${ARGS[@]}") + launch_tail + "\n";
}

// The InputError's text, or "" when loading succeeds.
std::string load_error(const std::string& name, const std::string& text) {
  try {
    Recipe::from_text(name, text, one_node());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExactReading, ALayoutNumberThatIsNotAWholeNumberIsAnErrorNamingItsKey) {
  for (const char* bad : {"four", "2.5", "'2 4'", "2.0", "2e0"}) {
    std::string err = load_error("train.sh", script(bad));
    EXPECT_NE(err.find("--tensor-model-parallel-size"), std::string::npos) << bad << ": " << err;
    EXPECT_NE(err.find("tp must be a positive whole number"), std::string::npos) << bad << ": " << err;
  }
  EXPECT_NE(load_error("train.sh", script("0")).find("got '0' (written $TP)"), std::string::npos);
}

TEST(ExactReading, ANegativeGlobalBatchOrSequenceLengthIsAnError) {
  EXPECT_NE(load_error("train.sh", script("2", "-256")).find("--global-batch-size"), std::string::npos);
  for (const char* seq : {"0", "-4096", "nan"}) {
    EXPECT_NE(load_error("train.sh", script("2", "256", seq)).find("--seq-length"), std::string::npos) << seq;
  }
}

TEST(ExactReading, TomlAndYamlValuesOfTheWrongTypeAreErrors) {
  const std::string titan = "[training]\nlocal_batch_size = 2\nseq_len = 8192\n[parallelism]\n"
                            "data_parallel_shard_degree = -1\ntensor_parallel_degree = ";
  for (const char* bad : {"\"four\"", "2.5", "[1, 2]"}) {
    std::string err = load_error("titan.toml", titan + bad + "\n");
    EXPECT_NE(err.find("tensor_parallel_degree"), std::string::npos) << bad << ": " << err;
  }
  EXPECT_EQ(load_error("titan.toml", titan + "2\n"), "");
  const std::string automodel = "step_scheduler:\n  global_batch_size: 32\n  local_batch_size: 2\n"
                                "dataset:\n  seq_len: 4096\ndistributed:\n  tp_size: ";
  for (const char* bad : {"{a: 1}", "[1, 2]", "four"}) {
    std::string err = load_error("am.yaml", automodel + bad + "\n");
    EXPECT_NE(err.find("tp_size"), std::string::npos) << bad << ": " << err;
  }
}

TEST(ExactReading, AYamlNumberIsReadAsPyYamlReadsIt) {
  const std::string axolotl = "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\ngradient_accumulation_steps: 4\n"
                              "micro_batch_size: ";
  // YAML 1.1, which every loader of these frameworks resolves integers with.
  const std::pair<const char*, int> read[] = {{"010", 8}, {"0x10", 16}, {"1_0", 10}, {"0b11", 3}, {"1:30", 90}, {"10", 10}};
  for (const auto& [text, value] : read) {
    Recipe r = Recipe::from_text("ax.yaml", axolotl + text + "\n", one_node());
    EXPECT_EQ(r.plan().mbs, value) << text;
  }
  // A string to PyYAML, a number to OmegaConf: no one value to take.
  std::string err = load_error("ax.yaml", axolotl + "1e1\n");
  EXPECT_NE(err.find("micro_batch_size"), std::string::npos) << err;
  EXPECT_NE(err.find("PyYAML"), std::string::npos) << err;
  for (const char* same : {"10", "3.0e-4", "1.5", "true", "bf16", "-1"}) EXPECT_FALSE(yaml_loader_dependent(same)) << same;
  for (const char* differ : {"042", "yes", "Off", "1e-4", "1.0e5", "1_000", "0o17", "1:30"}) {
    EXPECT_TRUE(yaml_loader_dependent(differ)) << differ;
  }
}

TEST(ExactReading, ANumberOnlyTheRunKnowsIsUnknownNotTheDefault) {
  for (const char* tp : {"$(nproc)", "$SLURM_TP", "`cat tp.txt`"}) {
    Recipe r = Recipe::from_text("train.sh", script(tp), one_node());
    Plan p = r.plan();
    ASSERT_EQ(p.unknown.count("tp"), 1u) << tp;
    EXPECT_TRUE(p.gbs_known()) << "an explicit global batch does not depend on TP";
    nlohmann::json j = to_json(p);
    EXPECT_TRUE(j["tp"].is_null()) << tp;
    EXPECT_TRUE(j["dp"].is_null()) << tp;
    bool noted = false;
    for (const auto& n : r.notes()) noted = noted || n.find("known only at run time") != std::string::npos;
    EXPECT_TRUE(noted) << tp;
  }
}

TEST(ExactReading, AVariableWrittenByAConstructTheReaderDoesNotFollowIsUnknown) {
  for (const char* writer : {"read -r TP < tp.txt\n", "printf -v TP '%d' 4\n", "let TP=4\n", "source env.sh\n",
                             "eval \"$SETUP\"\n", "for TP in 1 2; do :; done\n", ": ${TP:=4}\n", "(( TP = 4 ))\n"}) {
    Recipe r = Recipe::from_text("train.sh", script("2", "256", "4096", writer), one_node());
    EXPECT_EQ(r.plan().unknown.count("tp"), 1u) << writer;
  }
  // An assignment after the construct is what the launch reads again.
  Recipe r = Recipe::from_text("train.sh", script("2", "256", "4096", "read -r X < x.txt\n"), one_node());
  EXPECT_TRUE(r.plan().unknown.empty());
  EXPECT_EQ(r.plan().tp, 2);
}

// A variable expanded after the entry script may pass any flag again, and
// argparse keeps the last: what the flags before it say is known only at run
// time, unless the variable's value is known and passes no option.
TEST(ExactReading, AVariableExpandedOnTheLaunchLineMakesTheFlagsBeforeItUnknown) {
  Recipe open = Recipe::from_text("train.sh", script("2", "256", "4096", "", " $EXTRA_ARGS"), one_node());
  EXPECT_EQ(open.plan().unknown.count("tp"), 1u);
  EXPECT_EQ(open.plan().unknown.count("mbs"), 1u);
  Recipe flags = Recipe::from_text("train.sh", script("2", "256", "4096", "EXTRA_ARGS=\"--micro-batch-size 4\"\n", " $EXTRA_ARGS"),
                                   one_node());
  EXPECT_EQ(flags.plan().unknown.count("mbs"), 1u);
  Recipe empty = Recipe::from_text("train.sh", script("2", "256", "4096", "EXTRA_ARGS=\"\"\n", " $EXTRA_ARGS"), one_node());
  EXPECT_TRUE(empty.plan().unknown.empty());
  EXPECT_EQ(empty.plan().tp, 2);
}

TEST(ExactReading, AFlagGivenTwiceIsReadAsArgparseReadsItTheLastOnTheCommandLine) {
  // After the array on the launch line: the launch line's value wins.
  Recipe late = Recipe::from_text("train.sh", script("2", "256", "4096", "", " --micro-batch-size 2"), one_node());
  EXPECT_EQ(late.plan().mbs, 2);
  // Before the array on the launch line: the array's value comes later and wins.
  std::string before = script();
  before.replace(before.find("pretrain_gpt.py ${ARGS[@]}"), 26, "pretrain_gpt.py --micro-batch-size 2 ${ARGS[@]}");
  EXPECT_EQ(Recipe::from_text("train.sh", before, one_node()).plan().mbs, 1);
}

TEST(ExactReading, RecipeDiffSeesASecondFlagThatOverridesTheFirst) {
  Recipe a = Recipe::from_text("a.sh", script(), one_node());
  Recipe b = Recipe::from_text("b.sh", script("2", "256", "4096", "", " --lr 1e-3"), one_node());
  RecipeDiff d = diff_recipes(a, b);
  ASSERT_FALSE(d.empty());
  bool lr = false;
  for (const auto& k : d.keys) lr = lr || k.key == "--lr";
  EXPECT_TRUE(lr);
}

}  // namespace
}  // namespace attune::recipe
