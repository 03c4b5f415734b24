// prepare_launch: from an approved recipe and a cluster definition to the
// Launch — the run directory written, the command per framework and cluster
// kind, the Slurm request copied from the wrapper, steps and time limit (cut
// by the budget), the caller's step estimate, the same spec when prepared
// again, and the checks that refuse what cannot launch.
#include "attune/cluster/backend_registry.h"
#include "attune/cluster/launch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "attune/cluster/run.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "../fixtures/llama3_8b_script.h"
#include "../fixtures/scratch_dir.h"

namespace attune::cluster {
namespace {

namespace fs = std::filesystem;
using recipe::Recipe;

const std::string kScript = test::llama3_8b_script(8, 2);


const char* kTitan = R"([model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 2
seq_len = 8192
steps = 1000

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
)";

const char* kHyperPod = R"(run:
  model_type: hf
trainer:
  devices: 8
  num_nodes: 1
  precision: bf16
use_smp_model: True
model:
  train_batch_size: 2
  tensor_model_parallel_degree: 2
  context_parallel_degree: 1
  shard_degree: 4
  activation_checkpointing: False
  max_context_width: 8192
  num_hidden_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  num_key_value_heads: 8
)";

constexpr const char* kHardware = "hardware: {gpu: h100, nodes: 1, gpus_per_node: 8}\n";

const char* kFullLaunch = R"(launch:
  workdir: /opt/megatron-lm
  env: {CUDA_DEVICE_MAX_CONNECTIONS: "1", NCCL_DEBUG: WARN}
  container: {image: "nvcr.io/nvidia/nemo:25.09", mounts: ["/lustre:/lustre", "/data:/data:ro"]}
  slurm: {partition: h100, account: llm, qos: high, constraint: h100, exclusive: false, time_limit: 40m}
measure: {steps: 60, skip_first: 10}
)";

ClusterDefinition definition(const std::string& name, const std::string& backend, const std::string& payload = "command",
                             double time_scale = 1) {
  ClusterDefinition d;
  d.name = name;
  d.backend = backend;
  d.payload = find_payload(payload)->payload;
  d.time_scale = time_scale;
  return d;
}

ClusterDefinition sim() { return definition("sim", "sim"); }
ClusterDefinition local() { return definition("local", "local"); }
ClusterDefinition slurm() { return definition("p5", "slurm"); }
ClusterDefinition mock() { return definition("mock", "slurm", "sim", 60); }

class LaunchTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }
  // The Megatron script behind a wrapper with `extra` (launch, measure, ...).
  // Without a launch section of its own, the script runs in a Megatron-LM checkout.
  Recipe megatron(const std::string& extra = "", const std::string& hardware = kHardware) {
    write("train.sh", kScript);
    const std::string launch = extra.find("launch:") == std::string::npos ? "launch: {workdir: /opt/megatron-lm}\n" : "";
    return Recipe::load(write("train.attune.yaml",
                              "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n" + hardware + launch + extra));
  }
  Recipe titan(const std::string& extra = "") {
    write("titan.toml", kTitan);
    return Recipe::load(write("titan.attune.yaml", std::string("framework: torchtitan\nconfig: titan.toml\n") +
                                                       kHardware + extra));
  }
  Recipe hyperpod(const std::string& extra = "") {
    write("hf.yaml", kHyperPod);
    return Recipe::load(
        write("hf.attune.yaml", std::string("framework: hyperpod\nconfig: hf.yaml\nmodel: llama3-8b\n") + kHardware + extra));
  }
  // Only an approved recipe launches: the gate approves each as it is.
  static Launch prepare(const Recipe& r, const ClusterDefinition& c, const LaunchRequest& q) {
    return prepare_launch(gate::CorrectnessGate{}.approve(r, r), c, q);
  }
  static RunSpec prepared(const Recipe& r, const ClusterDefinition& c, const LaunchRequest& q) {
    return prepare(r, c, q).spec();
  }
  LaunchRequest request() const {
    LaunchRequest q;
    q.run_name = "attune-test-0001";
    q.run_dir = run_dir().string();
    q.attune_binary = "/opt/attune/bin/attune";
    q.seed = 7;
    return q;
  }
  fs::path run_dir() const { return scratch_.path() / "run"; }
  std::string written(const std::string& name) const { return (run_dir() / name).string(); }

  test::ScratchDir scratch_{"attune_launch"};
};

// ---------------------------------------------------------------- every cluster

TEST_F(LaunchTest, SimWritesTheRunDirectoryAndTheSpec) {
  const Recipe r = megatron(kFullLaunch);
  LaunchRequest q = request();
  q.expected_step_s = 1.5;
  const Launch l = prepare(r, sim(), q);
  const RunSpec& s = l.spec();
  EXPECT_EQ(l.cluster_name(), "sim");
  EXPECT_EQ(l.backend(), "sim");
  EXPECT_EQ(l.recipe().document().text(), r.document().text());  // the approved recipe travels with it
  EXPECT_EQ(s.name, "attune-test-0001");
  EXPECT_TRUE(fs::exists(written("train.sh")));
  EXPECT_TRUE(fs::exists(written("train.attune.yaml")));
  EXPECT_EQ(s.log_path, written("run.log"));
  EXPECT_TRUE(fs::path(s.log_path).is_absolute());
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.gpu, "h100");
  EXPECT_EQ(s.steps, 60);
  EXPECT_DOUBLE_EQ(s.time_limit_s, 2400);
  EXPECT_DOUBLE_EQ(s.expected_step_s, 1.5);
  EXPECT_TRUE(s.command.empty());  // in-process: nothing is executed
  // The Slurm request is copied on every cluster (the journal keeps it).
  EXPECT_EQ(s.partition, "h100");
  EXPECT_FALSE(s.exclusive);

  // The written wrapper is the recipe as launched.
  const Recipe back = Recipe::load(written("train.attune.yaml"));
  EXPECT_EQ(back.plan().tp, r.plan().tp);
  EXPECT_EQ(back.plan().gbs, r.plan().gbs);
  EXPECT_EQ(back.measure().steps, 60);
  EXPECT_DOUBLE_EQ(back.launch().time_limit_s, 2400);
}

TEST_F(LaunchTest, HardwareComesFromTheRecipe) {
  const RunSpec s = prepared(megatron("", "hardware: {gpu: b200, nodes: 2, gpus_per_node: 4}\n"), sim(), request());
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.gpu, "b200");
}

TEST_F(LaunchTest, NoHardwareMeansOneNodeOfEightAnyGpu) {
  const Recipe r = Recipe::load(write("train.sh", kScript));
  const RunSpec s = prepared(r, sim(), request());
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.gpu, "");
  EXPECT_EQ(s.expected_step_s, 0);  // the request has no estimate
}

TEST_F(LaunchTest, StepsFromMeasureThenRequestThenFifty) {
  EXPECT_EQ(prepared(megatron(kFullLaunch), sim(), request()).steps, 60);
  LaunchRequest q = request();
  q.steps = 7;
  EXPECT_EQ(prepared(megatron(kFullLaunch), sim(), q).steps, 7);
  EXPECT_EQ(prepared(megatron(), sim(), request()).steps, 50);
  EXPECT_EQ(prepared(megatron("measure: {skip_first: 5}\n"), sim(), request()).steps, 50);
}

TEST_F(LaunchTest, TimeLimitFromRecipeElseDefaultCutByBudget) {
  // The recipe's.
  EXPECT_DOUBLE_EQ(prepared(megatron(kFullLaunch), sim(), request()).time_limit_s, 2400);
  // None stated: the request's default (2 h unless told).
  EXPECT_DOUBLE_EQ(prepared(megatron(), sim(), request()).time_limit_s, 7200);
  LaunchRequest q = request();
  q.default_time_limit_s = 1234;
  EXPECT_DOUBLE_EQ(prepared(megatron(), sim(), q).time_limit_s, 1234);
  // 4 GPU-hours on 8 GPUs pay for 30 min.
  q = request();
  q.budget_gpu_hours = 4;
  EXPECT_DOUBLE_EQ(prepared(megatron(kFullLaunch), sim(), q).time_limit_s, 1800);
  EXPECT_DOUBLE_EQ(prepared(megatron(), sim(), q).time_limit_s, 1800);
  // ... on 16 GPUs, 15 min.
  EXPECT_DOUBLE_EQ(
      prepared(megatron("", "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"), slurm(), q).time_limit_s, 900);
  // A budget that pays for more leaves the recipe's limit.
  q.budget_gpu_hours = 100;
  EXPECT_DOUBLE_EQ(prepared(megatron(kFullLaunch), sim(), q).time_limit_s, 2400);
  // The mock's limit is in simulated seconds too (the cluster divides by its scale).
  q.budget_gpu_hours = 4;
  EXPECT_DOUBLE_EQ(prepared(megatron(kFullLaunch), mock(), q).time_limit_s, 1800);
}

// A script that reads its node count from a variable of its own name gets the
// run's count in that variable: the job exports NNODES, and NUM_NODES would
// otherwise fall back to the script's default of one node on each node.
TEST_F(LaunchTest, TheScriptsOwnNodeVariablesCarryTheRunsCounts) {
  std::string text = kScript;
  text.replace(text.find("torchrun --nproc_per_node 8"), 27,
               "NUM_NODES=${NUM_NODES:-1}\ntorchrun --nnodes $NUM_NODES --nproc_per_node ${PROCS:-8}");
  write("train.sh", text);
  Recipe r = Recipe::load(write("train.attune.yaml", "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n"
                                                     "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"
                                                     "launch: {workdir: /opt/megatron-lm}\n"));
  RunSpec s = prepared(r, slurm(), request());
  EXPECT_EQ(s.env["NUM_NODES"], "2");
  EXPECT_EQ(s.env["PROCS"], "8");
  // The wrapper's own environment wins over what attune derives.
  Recipe pinned = Recipe::load(write("pinned.attune.yaml", "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n"
                                                           "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"
                                                           "launch: {workdir: /x, env: {NUM_NODES: \"3\"}}\n"));
  EXPECT_EQ(prepared(pinned, slurm(), request()).env["NUM_NODES"], "3");
}

// The cluster module predicts nothing: the step time is the caller's
// estimate, and one that is not a positive number is "unknown".
TEST_F(LaunchTest, ExpectedStepTimeIsTheRequests) {
  LaunchRequest q = request();
  q.expected_step_s = 2.5;
  EXPECT_DOUBLE_EQ(prepared(megatron(), slurm(), q).expected_step_s, 2.5);
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    q.expected_step_s = bad;
    EXPECT_EQ(prepared(megatron(), slurm(), q).expected_step_s, 0) << bad;
  }
}

// A restarted campaign prepares a journalled run again: the same request and
// approved recipe give the same spec and the same files in the run directory.
TEST_F(LaunchTest, PreparingAgainGivesTheSameSpecAndFiles) {
  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (const ClusterDefinition& c : {sim(), local(), slurm(), mock()}) {
    LaunchRequest q = request();
    q.expected_step_s = 3;
    q.budget_gpu_hours = 4;
    const Recipe r = megatron(kFullLaunch, "hardware: {gpu: h100, nodes: 1, gpus_per_node: 4}\n");
    const RunSpec first = prepared(r, c, q);
    const std::string script = bytes(written("train.sh")), wrapper = bytes(written("train.attune.yaml"));
    ASSERT_FALSE(script.empty());
    fs::remove_all(run_dir());
    const RunSpec again = prepared(r, c, q);
    EXPECT_EQ(run_spec_json(again), run_spec_json(first)) << c.name;
    EXPECT_EQ(bytes(written("train.sh")), script) << c.name;
    EXPECT_EQ(bytes(written("train.attune.yaml")), wrapper) << c.name;
    q.run_name = "attune-test-0002";
    EXPECT_NE(run_spec_json(prepared(r, c, q)), run_spec_json(first)) << c.name;  // the name is the run's
  }
}

// A recipe whose own file says how many nodes (HyperPod's trainer.num_nodes,
// a Megatron script's --nnodes) launches on that many when the wrapper and the
// flags are silent: the plan and the simulator see 4 x 8 GPUs, so Slurm must
// get --nodes=4 and the run be charged for 32 GPUs.
TEST_F(LaunchTest, NodesFromTheFileWhenTheWrapperIsSilent) {
  std::string text = kHyperPod;
  text.replace(text.find("num_nodes: 1"), 12, "num_nodes: 4");
  recipe::RecipeOptions o;
  o.hardware.gpu = "h100";
  const Recipe r = Recipe::load(write("hf4.yaml", text), o);
  ASSERT_EQ(r.plan().nodes, 4);
  ASSERT_EQ(r.plan().world, 32);
  const RunSpec s = prepared(r, sim(), request());
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.gpus_per_node, 8);
}

// ---------------------------------------------------------------- commands

using Argv = std::vector<std::string>;

// The framework's own launch (recipe/framework_launch.h, tested there) with
// the recipe as written to the run directory.
TEST_F(LaunchTest, DefaultCommandGetsTheWrittenConfig) {
  for (const ClusterDefinition& c : {local(), slurm()}) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(prepared(megatron(), c, request()).command, (Argv{"bash", written("train.sh")}));
    EXPECT_EQ(prepared(titan(), c, request()).command,
              (Argv{"torchrun", "-m", "torchtitan.train", "--job.config_file", written("titan.toml")}));
    // A module needs no checkout: it starts in the run directory, where what
    // it writes relative to its working directory stays the run's.
    EXPECT_EQ(prepared(titan(), c, request()).workdir, run_dir().string());
  }
}

TEST_F(LaunchTest, WrapperCommandWinsWithEveryConfigReplaced) {
  const Recipe r = megatron(
      "launch:\n  command: [python, train.py, \"--cfg={config}\", \"{config}:{config}\", plain]\n");
  const std::string cfg = written("train.sh");
  for (const ClusterDefinition& c : {local(), slurm()}) {
    EXPECT_EQ(prepared(r, c, request()).command,
              (Argv{"python", "train.py", "--cfg=" + cfg, cfg + ":" + cfg, "plain"}))
        << c.name;
  }
}

// HyperPod's recipe is resolved and handed to the training adapter's entry
// script, which lives in the adapter's checkout: without launch.workdir it
// cannot be launched, except in-process or as `attune sim job`.
TEST_F(LaunchTest, HyperPodNeedsTheAdaptersCheckoutExceptOnSim) {
  const Recipe r = hyperpod();
  for (const ClusterDefinition& c : {local(), slurm()}) {
    SCOPED_TRACE(c.name);
    try {
      prepared(r, c, request());
      ADD_FAILURE() << "no InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "launch.workdir");
      EXPECT_EQ(e.where().file, r.wrapper_path());
    }
  }
  EXPECT_TRUE(prepared(r, sim(), request()).command.empty());
  EXPECT_FALSE(prepared(r, mock(), request()).command.empty());  // `attune sim job` needs no command
  const RunSpec s = prepared(hyperpod("launch: {workdir: /opt/adapter}\n"), slurm(), request());
  EXPECT_EQ(s.command, (Argv{"torchrun", "examples/custom_model/custom_pretrain.py",
                             "--config-path=" + run_dir().string(), "--config-name=my-example-run_hydra.yaml"}));
  EXPECT_EQ(s.unset_env, (Argv{"SLURM_NTASKS"}));
  EXPECT_TRUE(fs::exists(written("my-example-run_hydra.yaml")));
  const Recipe with = hyperpod("launch:\n  command: [torchrun, llama_pretrain.py, \"--config-path={config_dir}\", "
                               "\"--config-name={config_name}\"]\n");
  EXPECT_EQ(prepared(with, slurm(), request()).command,
            (Argv{"torchrun", "llama_pretrain.py", "--config-path=" + run_dir().string(),
                  "--config-name=my-example-run_hydra.yaml"}));
}

// The cluster's environment is below the recipe's: the wrapper's launch.env wins.
TEST_F(LaunchTest, TheClustersEnvironmentIsBelowTheRecipes) {
  ClusterDefinition c = slurm();
  c.env = {{"FI_PROVIDER", "efa"}, {"NCCL_DEBUG", "TRACE"}};
  const RunSpec s = prepared(megatron(kFullLaunch), c, request());
  EXPECT_EQ(s.env.at("FI_PROVIDER"), "efa");
  EXPECT_EQ(s.env.at("NCCL_DEBUG"), "WARN");  // the recipe's
}

// Payload emulate: the recipe's own command, with the emulators first on
// PATH and what they need to time the run.
TEST_F(LaunchTest, EmulatePayloadRunsTheRecipesCommandUnderTheEmulators) {
  ClusterDefinition c = definition("mock-emulate", "slurm", "emulate", 600);
  c.emulators = (scratch_.path() / "emu").string();
  fs::create_directories(scratch_.path() / "emu" / "bin");
  LaunchRequest q = request();
  q.truth_file = "truth.yaml";
  const RunSpec s = prepared(megatron(kFullLaunch), c, q);
  EXPECT_EQ(s.command, (Argv{"bash", written("train.sh")}));
  EXPECT_TRUE(s.per_node);
  EXPECT_EQ(s.env.at("PATH").rfind((scratch_.path() / "emu" / "bin").string() + ":", 0), 0u) << s.env.at("PATH");
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_ATTUNE"), "/opt/attune/bin/attune");
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_RECIPE"), written("train.attune.yaml"));
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_TIME_SCALE"), "600");
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_SEED"), "7");
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_GPUS"), "8");
  EXPECT_EQ(s.env.at("ATTUNE_EMULATE_TRUTH"), fs::absolute("truth.yaml").string());
  // Without emulators where the definition says, nothing is launched.
  c.emulators = (scratch_.path() / "none").string();
  EXPECT_THROW(prepared(megatron(kFullLaunch), c, q), InputError);
}

// ---------------------------------------------------------------- local

TEST_F(LaunchTest, LocalIsOneNodeWithTorchrunDefaults) {
  const RunSpec s = prepared(megatron(kFullLaunch, "hardware: {gpu: h100, nodes: 1, gpus_per_node: 4}\n"),
                                   local(), request());
  EXPECT_FALSE(s.per_node);
  EXPECT_EQ(s.env.at("PET_NNODES"), "1");
  EXPECT_EQ(s.env.at("PET_NPROC_PER_NODE"), "4");
  EXPECT_EQ(s.env.at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  EXPECT_EQ(s.env.at("NCCL_DEBUG"), "WARN");
  EXPECT_EQ(s.workdir, "/opt/megatron-lm");
  EXPECT_EQ(s.log_path, written("run.log"));

  try {
    prepared(megatron("", "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"), local(), request());
    ADD_FAILURE() << "no InputError for 2 nodes on local";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "hardware.nodes");
    EXPECT_NE(std::string(e.what()).find("2 nodes"), std::string::npos) << e.what();
  }
  // Other clusters take several nodes.
  EXPECT_EQ(prepared(megatron("", "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"), slurm(), request()).nodes,
            2);
}

TEST_F(LaunchTest, LocalKeepsTheWrappersOwnTorchrunSettings) {
  const RunSpec s = prepared(megatron("launch:\n  workdir: /opt/megatron-lm\n  env: {PET_NPROC_PER_NODE: \"2\"}\n"), local(), request());
  EXPECT_EQ(s.env.at("PET_NPROC_PER_NODE"), "2");
  EXPECT_EQ(s.env.at("PET_NNODES"), "1");
}

// ---------------------------------------------------------------- slurm

TEST_F(LaunchTest, SlurmCopiesTheWrappersRequest) {
  const RunSpec s = prepared(megatron(kFullLaunch), slurm(), request());
  EXPECT_TRUE(s.per_node);
  EXPECT_EQ(s.command, (Argv{"bash", written("train.sh")}));
  EXPECT_EQ(s.env, (std::map<std::string, std::string>{{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"NCCL_DEBUG", "WARN"}}));
  EXPECT_EQ(s.workdir, "/opt/megatron-lm");
  EXPECT_EQ(s.container_image, "nvcr.io/nvidia/nemo:25.09");
  EXPECT_EQ(s.container_mounts, (Argv{"/lustre:/lustre", "/data:/data:ro"}));
  EXPECT_EQ(s.partition, "h100");
  EXPECT_EQ(s.account, "llm");
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.constraint, "h100");
  EXPECT_FALSE(s.exclusive);
  EXPECT_DOUBLE_EQ(s.time_limit_s, 2400);
  EXPECT_EQ(s.steps, 60);
  EXPECT_EQ(s.log_path, written("run.log"));
}

TEST_F(LaunchTest, SlurmDefaultsWhenTheWrapperSaysNothing) {
  const RunSpec s = prepared(megatron(), slurm(), request());
  EXPECT_TRUE(s.per_node);
  EXPECT_TRUE(s.env.empty());  // no torchrun defaults: the batch script sets the rendezvous
  EXPECT_EQ(s.workdir, "/opt/megatron-lm");
  EXPECT_EQ(s.container_image, "");
  EXPECT_EQ(s.partition, "");
  EXPECT_TRUE(s.exclusive);
}

// ---------------------------------------------------------------- payload sim (the mock)

TEST_F(LaunchTest, MockRunsAttuneSimJobOnTheWrittenWrapper) {
  LaunchRequest q = request();
  const RunSpec s = prepared(megatron(kFullLaunch), mock(), q);
  EXPECT_EQ(s.command, (Argv{"/opt/attune/bin/attune", "sim", "job", written("train.attune.yaml"), "--time-scale", "60",
                             "--steps", "60", "--seed", "7"}));
  EXPECT_FALSE(s.per_node);
  EXPECT_EQ(s.workdir, run_dir().string());
  EXPECT_TRUE(s.env.empty());  // the recipe's own launch does not run
  EXPECT_TRUE(s.container_image.empty());
  EXPECT_EQ(s.partition, "h100");  // the Slurm request still applies
  EXPECT_DOUBLE_EQ(s.time_limit_s, 2400);
  EXPECT_EQ(s.log_path, written("run.log"));
  ASSERT_TRUE(fs::exists(written("train.attune.yaml")));
  EXPECT_EQ(Recipe::load(written("train.attune.yaml")).measure().steps, 60);
}

TEST_F(LaunchTest, MockPassesStepsSeedAndAnAbsoluteTruthFile) {
  LaunchRequest q = request();
  q.steps = 12;
  q.seed = 42;
  const fs::path perturb = scratch_.path() / "src" / "truth.yaml";
  std::ofstream(perturb) << "gemm: 0.9\n";
  // A relative path becomes absolute: the job runs in the run directory.
  q.truth_file = fs::relative(perturb, fs::current_path()).string();
  const RunSpec s = prepared(megatron(), mock(), q);
  EXPECT_EQ(s.command, (Argv{"/opt/attune/bin/attune", "sim", "job", written("train.attune.yaml"), "--time-scale", "60",
                             "--steps", "12", "--seed", "42", "--truth-file", fs::absolute(q.truth_file).string()}));
  EXPECT_TRUE(fs::path(s.command.back()).is_absolute());
  EXPECT_TRUE(fs::equivalent(s.command.back(), perturb));
}

TEST_F(LaunchTest, MockTimeScaleIsWrittenPlainly) {
  EXPECT_EQ(prepared(megatron(), definition("m", "slurm", "sim", 2.5), request()).command[5], "2.5");
  EXPECT_EQ(prepared(megatron(), definition("m", "local", "sim", 1000), request()).command[5], "1000");
}

TEST_F(LaunchTest, PayloadSimNeedsTheAttuneBinary) {
  LaunchRequest q = request();
  q.attune_binary.clear();
  EXPECT_THROW(prepared(megatron(), mock(), q), InputError);
}

// ---------------------------------------------------------------- run_time_limit_s

TEST(LaunchRunTimeLimit, EdgeCases) {
  // No budget (< 0): the recipe's limit, whatever it is.
  EXPECT_DOUBLE_EQ(run_time_limit_s(3600, -1, 1, 8), 3600);
  EXPECT_DOUBLE_EQ(run_time_limit_s(0, -1, 1, 8), 0);
  EXPECT_DOUBLE_EQ(run_time_limit_s(3600, -0.001, 1, 8), 3600);
  // Budget: the shorter of the two.
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 4, 1, 8), 1800);
  EXPECT_DOUBLE_EQ(run_time_limit_s(1000, 4, 1, 8), 1000);
  EXPECT_DOUBLE_EQ(run_time_limit_s(1800, 4, 1, 8), 1800);
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 1, 1, 8), 450);
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 4, 2, 8), 900);
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 0.5, 1, 1), 1800);
  // No recipe limit: what the budget pays for.
  EXPECT_DOUBLE_EQ(run_time_limit_s(0, 4, 1, 8), 1800);
  // Nothing left: no time.
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 0, 1, 8), 0);
  // Unknown GPUs: the budget cannot be turned into time.
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 4, 0, 8), 7200);
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 4, 1, 0), 7200);
  EXPECT_DOUBLE_EQ(run_time_limit_s(7200, 4, -1, 8), 7200);
}

TEST(LaunchRunTimeLimit, TheLimitSpendsTheBudgetExactly) {
  RunSpec s;
  s.nodes = 2;
  s.gpus_per_node = 8;
  for (double budget : {0.25, 1.0, 3.7, 16.0}) {
    const double limit = run_time_limit_s(1e9, budget, s.nodes, s.gpus_per_node);
    EXPECT_NEAR(gpu_hours(s, limit), budget, 1e-9) << budget;
  }
  EXPECT_DOUBLE_EQ(gpu_hours(s, 0), 0);
  EXPECT_DOUBLE_EQ(gpu_hours(s, 3600), 16);
}

}  // namespace
}  // namespace attune::cluster
