// Each framework's launch contract (recipe/framework_launch.h): the command
// its users run, the environment its process needs, what runs before
// training, and the recipes that cannot be launched as written, refused with
// the key to set.
#include "attune/recipe/framework_launch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attune/recipe/recipe.h"
#include "attune/recipe/recipe_files.h"
#include "attune/recipe/run_hardware.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "../fixtures/scratch_dir.h"

namespace attune::recipe {
namespace {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

const char* kCiYaml = R"(ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
  NVTE_ALLOW_NONDETERMINISTIC_ALGO: 1
TEST_TYPE: "release"
MODEL_ARGS:
  --num-layers: 32
  --hidden-size: 4096
  --num-attention-heads: 32
  --seq-length: 4096
  --max-position-embeddings: 4096
  --micro-batch-size: 1
  --global-batch-size: 64
  --tensor-model-parallel-size: 1
  --pipeline-model-parallel-size: 1
  --use-distributed-optimizer: true
  --overlap-grad-reduce: true
  --moe-layer-freq: ([0]*3+[1]*29)
  --pipeline-model-parallel-layout: "Et*7|t*7mL"
  --recompute-modules: "[core_attn mlp]"
  --wandb-exp-name: ""
  --lr: 3.0e-4
  --save: ${CHECKPOINT_SAVE_PATH}
  --data-path: $DATA_PATH/my_text_document
  --bf16: true
)";

const char* kScript = R"(#!/bin/bash
GPUS_PER_NODE=8
NUM_NODES=1
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \
  --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16
)";

const char* kHf = R"(run:
  name: hf-llama
  results_dir: ${base_results_dir}/${.name}
  model_type: hf
trainer:
  devices: 8
  num_nodes: 1
  precision: bf16
  max_steps: 50
exp_manager:
  exp_dir: /fsx/exp
  checkpoint_dir: ${recipes.exp_manager.exp_dir}/checkpoints/
  wandb_logger_kwargs: {"save_dir" : "${recipes.exp_manager.exp_dir}"}
  resume: null
  none_text: ${recipes.exp_manager.resume}/x
use_smp_model: True
distributed_backend: nccl
model:
  model_type: llama_v3
  train_batch_size: 2
  tensor_model_parallel_degree: 1
  shard_degree: 8
  max_context_width: 8192
  max_position_embeddings: ${.max_context_width}
  num_hidden_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  precision: ${recipes.trainer.precision}
  lr_decay_iters: ${recipes.trainer.max_steps}
  quoted: "007"
  data:
    use_synthetic_data: True
)";

class FrameworkLaunchTest : public ::testing::Test {
 protected:
  // The recipe file `name` with `text`, behind a wrapper with `extra` lines.
  Recipe load(const std::string& name, const std::string& text, const std::string& framework,
              const std::string& extra = "", const std::string& hardware = "{gpu: h100, nodes: 1, gpus_per_node: 8}") {
    scratch_.write(name, text);
    return Recipe::load(scratch_.write(name + ".attune.yaml", "framework: " + framework + "\nconfig: " + name +
                                                                  "\nmodel: llama3-8b\nhardware: " + hardware + "\n" +
                                                                  extra));
  }
  WrittenRecipe written(const Recipe& r) { return write_recipe_files(r, (scratch_.path() / "run").string()); }
  FrameworkLaunch launch(const Recipe& r) { return framework_launch(r, written(r)); }
  // The InputError a launch of `r` raises ("" when there is none), with its key.
  std::string refusal(const Recipe& r, std::string* key = nullptr) {
    try {
      launch(r);
    } catch (const InputError& e) {
      if (key) *key = e.key();
      return e.what();
    }
    return "";
  }
  std::string run(const std::string& name) const { return (scratch_.path() / "run" / name).string(); }

  test::ScratchDir scratch_{"attune_framework_launch"};
};

// ---------------------------------------------------------------- Megatron-LM

// tests/functional_tests/shell_test_utils/_run_training.sh: `true` is the bare
// flag, "" drops the entry, a parenthesised value and one with a space or '|'
// is one argument, a bracketed one several, $VARs are the harness's paths;
// ENV_VARS are exported over the harness's NCCL defaults.
TEST_F(FrameworkLaunchTest, MegatronCiYamlLaunchesAsTheCiHarness) {
  const Recipe r = load("model_config.yaml", kCiYaml, "megatron",
                        "launch: {workdir: /opt/megatron-lm, env: {DATA_PATH: /data}}\n");
  const FrameworkLaunch fl = launch(r);
  const Argv expected = {"torchrun", "pretrain_gpt.py", "--num-layers", "32", "--hidden-size", "4096",
                         "--num-attention-heads", "32", "--seq-length", "4096", "--max-position-embeddings", "4096",
                         "--micro-batch-size", "1", "--global-batch-size", "64", "--tensor-model-parallel-size", "1",
                         "--pipeline-model-parallel-size", "1", "--use-distributed-optimizer", "--overlap-grad-reduce",
                         "--moe-layer-freq", "([0]*3+[1]*29)", "--pipeline-model-parallel-layout", "Et*7|t*7mL",
                         "--recompute-modules", "core_attn", "mlp", "--lr", "3.0e-4", "--save",
                         run("checkpoints"), "--data-path", "/data/my_text_document", "--bf16"};
  EXPECT_EQ(fl.command, expected);
  EXPECT_EQ(fl.workdir, "/opt/megatron-lm");
  EXPECT_EQ(fl.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  EXPECT_EQ(fl.env.at("NVTE_ALLOW_NONDETERMINISTIC_ALGO"), "1");
  EXPECT_EQ(fl.env.at("NCCL_ALGO"), "Ring");  // the harness's default
  EXPECT_EQ(fl.env.at("CHECKPOINT_SAVE_PATH"), run("checkpoints"));
  EXPECT_EQ(fl.env.at("DATA_PATH"), "/data");
}

TEST_F(FrameworkLaunchTest, MegatronCiYamlWithAnUnsetVariableIsRefused) {
  std::string key;
  const std::string e =
      refusal(load("model_config.yaml", kCiYaml, "megatron", "launch: {workdir: /opt/megatron-lm}\n"), &key);
  EXPECT_EQ(key, "MODEL_ARGS.--data-path");
  EXPECT_NE(e.find("$DATA_PATH is not set"), std::string::npos) << e;
  EXPECT_NE(e.find("launch.env"), std::string::npos) << e;
}

// `recipe set` writes a flag turned off as no flag: the harness would pass
// `--flag false`, which Megatron's argparse refuses.
TEST_F(FrameworkLaunchTest, MegatronCiYamlFlagTurnedOffIsLeftOut) {
  Recipe r = load("model_config.yaml", kCiYaml, "megatron", "launch: {workdir: /x, env: {DATA_PATH: /d}}\n");
  r.set("--overlap-grad-reduce", "false");
  EXPECT_EQ(r.document().text().find("--overlap-grad-reduce"), std::string::npos);
  const Argv argv = launch(r).command;
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "false"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--overlap-grad-reduce"), 0);
  r.set("--overlap-grad-reduce", "true");
  const Argv on = launch(r).command;
  EXPECT_EQ(std::count(on.begin(), on.end(), "--overlap-grad-reduce"), 1);
}

TEST_F(FrameworkLaunchTest, MegatronScriptRunsInTheCheckoutWithItsArguments) {
  const Recipe r = load("train.sh", kScript, "megatron", "launch: {workdir: /opt/megatron-lm, args: [/ckpt, /tb]}\n");
  const FrameworkLaunch fl = launch(r);
  EXPECT_EQ(fl.command, (Argv{"bash", run("train.sh"), "/ckpt", "/tb"}));
  EXPECT_EQ(fl.workdir, "/opt/megatron-lm");
  std::string key;
  const std::string e = refusal(load("train.sh", kScript, "megatron"), &key);
  EXPECT_EQ(key, "launch.workdir");
  EXPECT_NE(e.find("pretrain_gpt.py from the Megatron-LM checkout"), std::string::npos) << e;
}

// A script that submits its own job or step would run outside the job attune watches.
TEST_F(FrameworkLaunchTest, MegatronScriptThatSubmitsJobsIsRefused) {
  for (const std::string submit : {"sbatch <<EOF\n#!/bin/bash\nEOF\n", "srun --mpi=pmix python pretrain_gpt.py\n",
                                   "if true; then salloc -N 2; fi\n"}) {
    std::string key;
    const std::string e =
        refusal(load("train.sh", std::string(kScript) + submit, "megatron", "launch: {workdir: /x}\n"), &key);
    EXPECT_NE(e.find("runs `"), std::string::npos) << submit << e;
    EXPECT_NE(e.find("outside the run attune launches"), std::string::npos) << e;
  }
  // The word elsewhere is no command.
  EXPECT_EQ(refusal(load("train.sh", std::string(kScript) + "echo use srun for steps\n", "megatron",
                         "launch: {workdir: /x}\n")),
            "");
}

// NUM_NODES=1 in the script, two nodes in the wrapper: each node's torchrun
// would read 1. The launched script says 2, by an edit the gate sees.
TEST_F(FrameworkLaunchTest, ALiteralNodeCountIsSetToTheRuns) {
  const Recipe r =
      load("train.sh", kScript, "megatron", "launch: {workdir: /x}\n", "{gpu: h100, nodes: 2, gpus_per_node: 8}");
  std::vector<EditResult> edits;
  const Recipe as_run = with_run_hardware(r, &edits);
  ASSERT_EQ(edits.size(), 1u);
  EXPECT_EQ(edits[0].lever, "nodes");
  EXPECT_NE(as_run.document().text().find("\nNUM_NODES=2\n"), std::string::npos) << as_run.document().text();
  EXPECT_NE(as_run.document().text().find("\nGPUS_PER_NODE=8\n"), std::string::npos);
  // Agreeing, or left to the run: unchanged.
  const Recipe one = load("one.sh", kScript, "megatron", "launch: {workdir: /x}\n");
  EXPECT_EQ(with_run_hardware(one).document().text(), one.document().text());
  std::string runtime = kScript;
  runtime.replace(runtime.find("NUM_NODES=1"), 11, "NUM_NODES=${SLURM_NNODES:-1}");
  const Recipe from_slurm =
      load("slurm.sh", runtime, "megatron", "launch: {workdir: /x}\n", "{gpu: h100, nodes: 2, gpus_per_node: 8}");
  EXPECT_EQ(with_run_hardware(from_slurm).document().text(), from_slurm.document().text());
}

// ---------------------------------------------------------------- Megatron-Bridge

TEST_F(FrameworkLaunchTest, BridgeRunsTheNamedRecipeWithTheFilesSettingsAsOverrides) {
  const std::string yaml = R"(train:
  train_iters: 100
  global_batch_size: 64
  micro_batch_size: 1
model:
  tensor_model_parallel_size: 2
  seq_length: 4096
checkpoint:
  save: ./checkpoints/it's here
optimizer:
  betas: [0.9, 0.95]
env_vars:
  NCCL_ALGO: Ring
logger:
  log_interval: 10
)";
  const Recipe r = load("bridge.yaml", yaml, "bridge",
                        "launch: {workdir: /opt/Megatron-Bridge, recipe: llama3_8b_pretrain_config}\n");
  const FrameworkLaunch fl = launch(r);
  const Argv expected = {"torchrun",
                         "scripts/training/run_recipe.py",
                         "--recipe",
                         "llama3_8b_pretrain_config",
                         "++train.train_iters=100",
                         "++train.global_batch_size=64",
                         "++train.micro_batch_size=1",
                         "++model.tensor_model_parallel_size=2",
                         "++model.seq_length=4096",
                         "++checkpoint.save='./checkpoints/it\\'s here'",
                         "++optimizer.betas=[0.9,0.95]",
                         "++env_vars.NCCL_ALGO='Ring'",
                         "++logger.log_interval=10"};
  EXPECT_EQ(fl.command, expected);
  // Without a recipe name nor a command, the file says too little.
  std::string key;
  const std::string e = refusal(load("b.yaml", yaml, "bridge", "launch: {workdir: /opt/Megatron-Bridge}\n"), &key);
  EXPECT_EQ(key, "launch.recipe");
  EXPECT_NE(e.find("02_pretrain_with_yaml.py"), std::string::npos) << e;
  // The per-example script the user names takes the file itself.
  const Recipe script = load("c.yaml", yaml, "bridge",
                             "launch:\n  command: [torchrun, tutorials/recipes/llama/02_pretrain_with_yaml.py, "
                             "--config-file, \"{config}\"]\n");
  EXPECT_EQ(launch(script).command,
            (Argv{"torchrun", "tutorials/recipes/llama/02_pretrain_with_yaml.py", "--config-file", run("c.yaml")}));
}

// ---------------------------------------------------------------- HyperPod

TEST_F(FrameworkLaunchTest, HyperPodRecipeIsResolvedAndHandedToTheAdapter) {
  const Recipe r = load("hf.yaml", kHf, "hyperpod", "launch: {workdir: /opt/adapter}\n");
  const WrittenRecipe files = written(r);
  EXPECT_EQ(files.launched, run("hf-llama_hydra.yaml"));
  const std::string text = read_file(files.launched);
  for (const char* line : {"  checkpoint_dir: \"/fsx/exp/checkpoints/\"",
                           "    save_dir: /fsx/exp\n", "  none_text: \"None/x\"", "  max_position_embeddings: 8192",
                           "  precision: bf16", "  lr_decay_iters: 50", "  quoted: \"007\""})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  EXPECT_NE(text.find("results_dir: \"" + (scratch_.path() / "run").string() + "/hf-llama\""), std::string::npos) << text;
  EXPECT_EQ(text.find("${"), std::string::npos) << text;
  const FrameworkLaunch fl = framework_launch(r, files);
  EXPECT_EQ(fl.command, (Argv{"torchrun", "examples/llama/llama_pretrain.py", "--config-path=" + (scratch_.path() / "run").string(),
                              "--config-name=hf-llama_hydra.yaml"}));
  EXPECT_EQ(fl.unset_env, (Argv{"SLURM_NTASKS"}));
  EXPECT_EQ(fl.workdir, "/opt/adapter");
  // The launcher's base_results_dir when the wrapper gives one.
  const Recipe based = load("hf2.yaml", kHf, "hyperpod", "launch: {workdir: /a, base_results_dir: /fsx/results}\n");
  EXPECT_NE(read_file(written(based).launched).find("results_dir: \"/fsx/results/hf-llama\""), std::string::npos);
}

TEST_F(FrameworkLaunchTest, HyperPodInterpolationThatDoesNotResolveIsTheLaunchersError) {
  std::string text = kHf;
  text.replace(text.find("${recipes.trainer.max_steps}"), 28, "${recipes.trainer.max_stepz}");
  scratch_.write("bad.yaml", text);
  const Recipe r = Recipe::load(scratch_.write("bad.attune.yaml", "framework: hyperpod\nconfig: bad.yaml\nmodel: llama3-8b\n"
                                                                   "hardware: {gpu: h100, nodes: 1}\n"));
  try {
    written(r);
    FAIL() << "resolved";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "model.lr_decay_iters");
    EXPECT_NE(std::string(e.what()).find("Interpolation key 'recipes.trainer.max_stepz' not found"), std::string::npos)
        << e.what();
  }
}

TEST_F(FrameworkLaunchTest, HyperPodEntryScriptByModelFamily) {
  for (const auto& [type, script] : std::vector<std::pair<std::string, std::string>>{
           {"mistral", "examples/mistral/mistral_pretrain.py"},
           {"mixtral", "examples/mixtral/mixtral_pretrain.py"},
           {"deepseek_r1", "examples/deepseek/deepseek_pretrain.py"},
           {"gpt_oss", "examples/custom_model/custom_pretrain.py"}}) {
    std::string text = kHf;
    text.replace(text.find("model_type: llama_v3"), 20, "model_type: " + type);
    const Recipe r = load(type + ".yaml", text, "hyperpod", "launch: {workdir: /opt/adapter}\n");
    EXPECT_EQ(launch(r).command.at(1), script) << type;
  }
}

// ---------------------------------------------------------------- the others

TEST_F(FrameworkLaunchTest, TorchtitanAutoModelAndAxolotlRunTheirModules) {
  const Recipe titan = load("t.toml", "[training]\nlocal_batch_size = 1\nseq_len = 8192\n", "torchtitan");
  EXPECT_EQ(launch(titan).command, (Argv{"torchrun", "-m", "torchtitan.train", "--job.config_file", run("t.toml")}));
  const Recipe am = load("am.yaml", "step_scheduler:\n  global_batch_size: 32\n  local_batch_size: 4\n", "automodel",
                         "launch: {env: {PYTORCH_CUDA_ALLOC_CONF: \"expandable_segments:True\"}}\n");
  const FrameworkLaunch a = launch(am);
  EXPECT_EQ(a.command, (Argv{"torchrun", "-m", "nemo_automodel.cli.app", run("am.yaml")}));
  EXPECT_EQ(a.env.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");  // the launch's environment
  const std::string ax = "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\n"
                         "sequence_len: 4096\n";
  const FrameworkLaunch plain = launch(load("ax.yaml", ax, "axolotl"));
  EXPECT_EQ(plain.command, (Argv{"torchrun", "-m", "axolotl.cli.train", run("ax.yaml")}));
  EXPECT_TRUE(plain.prepare.empty());  // nothing to tokenise first
  EXPECT_EQ(plain.env.at("PET_RDZV_CONF"), "join_timeout=1800");
  const FrameworkLaunch with_data =
      launch(load("ax2.yaml", ax + "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n", "axolotl"));
  EXPECT_EQ(with_data.prepare, (std::vector<Argv>{{"axolotl", "preprocess", run("ax2.yaml")}}));
}

TEST_F(FrameworkLaunchTest, TheWrappersCommandAndEnvironmentWin) {
  const Recipe r = load("t.toml", "[training]\nlocal_batch_size = 1\n", "torchtitan",
                        "launch:\n  command: [torchrun, -m, torchtitan.train, --job.config_file, \"{config}\", "
                        "\"--x={config_dir}/{config_name}\", \"{run_dir}\"]\n  env: {NCCL_DEBUG: INFO}\n");
  const FrameworkLaunch fl = launch(r);
  EXPECT_EQ(fl.command, (Argv{"torchrun", "-m", "torchtitan.train", "--job.config_file", run("t.toml"),
                              "--x=" + run("t.toml"), (scratch_.path() / "run").string()}));
  EXPECT_EQ(fl.env.at("NCCL_DEBUG"), "INFO");
}

}  // namespace
}  // namespace attune::recipe
