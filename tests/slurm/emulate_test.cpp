// The framework emulators through the mock Slurm (label slurm): the real
// corpus recipes launched by `attune run` as each framework's users launch
// them — the exact batch script, srun, torchrun and entry point, with
// `torchrun` and `python` resolved to the emulators of tools/emulators — each
// measured, or failed as the real framework fails it; and a campaign of five
// trials per framework. Across all of them: no run recorded completed with no
// step, no process of a run left once attune returns, and no sbatch option
// the cluster definition and the recipe did not ask for.
//
// The corpus is third-party data, read from $ATTUNE_CORPUS (skipped without it).
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/util/file.h"
#include "attune/util/text.h"
#include "mock_slurm.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kSource = ATTUNE_SOURCE_DIR;

std::string corpus() {
  const char* c = std::getenv("ATTUNE_CORPUS");
  return c && *c ? std::string(c) + "/recipes" : "";
}

// One recipe as its users launch it.
struct Case {
  std::string name;       // the run's directory and wrapper name
  std::string framework;
  std::string config;     // relative to the corpus's recipes/, or absolute
  std::string model;      // the model preset, when the file does not say
  int nodes = 1;
  std::string gpu = "h100";
  int gpus_per_node = 8;
  std::string launch;     // the wrapper's launch: section body (indented two spaces)
  int steps = 3;          // measure.steps
  std::string cluster = "emu";
  std::string version;    // the wrapper's framework_version ("" : none)
  // "" : the run measures (completed, steps in its log); else the run fails
  // and this text is in its reason or its log (the framework's own error).
  std::string fails_with;
  // attune refuses the launch (exit 2) with this text: nothing is submitted.
  std::string refused_with;

  Case(std::string name_, std::string framework_, std::string config_, std::string model_, std::string launch_)
      : name(std::move(name_)), framework(std::move(framework_)), config(std::move(config_)),
        model(std::move(model_)), launch(std::move(launch_)) {}
  Case& fails(std::string text) {
    fails_with = std::move(text);
    return *this;
  }
  Case& refused(std::string text) {
    refused_with = std::move(text);
    return *this;
  }
  Case& declares(std::string v) {
    version = std::move(v);
    return *this;
  }
  Case& on(int nodes_, std::string gpu_ = "h100", int gpus_per_node_ = 8) {
    nodes = nodes_;
    gpu = std::move(gpu_);
    gpus_per_node = gpus_per_node_;
    return *this;
  }
};

// A process started now and waited for later: its exit status and output.
struct Child {
  pid_t pid = -1;
  std::string out;  // file holding stdout and stderr
  int status = -1;
};

Child spawn(const std::vector<std::string>& args, const std::string& out) {
  Child c;
  c.out = out;
  c.pid = fork();
  if (c.pid == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv = {const_cast<char*>(ATTUNE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(ATTUNE_BINARY, argv.data());
    _exit(127);
  }
  return c;
}

void wait_for(Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The processes alive now whose environment names something under `dir`
// (every process of an emulated run has ATTUNE_EMULATE_RECIPE in its run directory).
std::vector<std::string> processes_under(const std::string& dir) {
  std::vector<std::string> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  // The wrapper inside `dir`: the directory ends at a separator, so the runs
  // of meg-llama3-8b-fsdp are not taken for meg-llama3-8b's.
  const std::string needle = "ATTUNE_EMULATE_RECIPE=" + dir + "/";
  while (const dirent* e = ::readdir(proc)) {
    const std::string pid = e->d_name;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + pid + "/environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(needle) == std::string::npos) continue;
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    std::getline(stat, line);
    if (line.find(") Z ") != std::string::npos) continue;  // exited, not yet reaped by its parent
    std::ifstream cmd("/proc/" + pid + "/cmdline", std::ios::binary);
    std::string argv((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    for (char& ch : argv) ch = ch == '\0' ? ' ' : ch;
    out.push_back(pid + ": " + argv);
  }
  ::closedir(proc);
  return out;
}

class EmulateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ATTUNE_NEED_MOCK_SLURM();
    if (corpus().empty() || !fs::is_directory(corpus())) GTEST_SKIP() << "ATTUNE_CORPUS is not set";
    std::string pattern = "/tmp/attune-emulate-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    const char* conf = std::getenv("SLURM_CONF");
    std::ofstream(dir_ + "/clusters.yaml") << R"(clusters:
  emu:
    backend: slurm
    partition: gpu
    account: attune
    partitions: {h100: h100, h200: h200, b200: b200}
    rendezvous_port: job
    time_scale: 60
    payload: emulate
    emulators: )" << kSource << R"(/tools/emulators
    env: {ATTUNE_EMULATE_TORCHTITAN_VERSION: "0.2.2"}
    slurm_conf: )" << conf << R"(
  emu-titan-main:
    backend: slurm
    partition: gpu
    account: attune
    partitions: {h100: h100, h200: h200, b200: b200}
    rendezvous_port: job
    time_scale: 60
    payload: emulate
    emulators: )" << kSource << R"(/tools/emulators
    slurm_conf: )" << conf << "\n";
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // A copy of the emulators' framework checkouts for one run (a run writes
  // its checkpoints and logs where its working directory is).
  std::string checkout(const std::string& name, const std::string& framework_dir) {
    const fs::path to = fs::path(dir_) / "co" / name;
    fs::create_directories(to);
    fs::copy(kSource + "/tools/emulators/checkouts/" + framework_dir, to / framework_dir,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return (to / framework_dir).string();
  }

  // A user's copy of HyperPod's 8B recipe for the mock's two nodes, with the
  // experiment directory and data (synthetic) the recipe leaves to its user.
  // (Without `complete`, only the node count: what the recipe leaves null stays null.)
  std::string hyperpod_user_copy(const std::string& name, bool complete = true) {
    std::string text = read_file(corpus() + "/hyperpod/hf_llama3_8b_seq8k_gpu_p5x16_pretrain.yaml");
    std::vector<std::pair<std::string, std::string>> edits = {{"  num_nodes: 16", "  num_nodes: 2"},
                                                              {"  shard_degree: 64", "  shard_degree: 8"}};
    if (complete) {
      edits.push_back({"  exp_dir: null", "  exp_dir: " + dir_ + "/" + name + "-exp"});
      edits.push_back({"    use_synthetic_data: False", "    use_synthetic_data: True"});
    }
    for (const auto& [from, to] : edits) {
      const auto at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    const std::string path = dir_ + "/" + name + ".yaml";
    std::ofstream(path) << text;
    return path;
  }

  std::string wrapper(const Case& c) {
    std::string config = c.config;
    if (!config.empty() && config[0] != '/') config = corpus() + "/" + config;
    std::string launch = c.launch;
    for (std::size_t at = launch.find("@CO@"); at != std::string::npos; at = launch.find("@CO@"))
      launch.replace(at, 4, (fs::path(dir_) / "co" / c.name).string());
    const std::string path = dir_ + "/" + c.name + ".attune.yaml";
    std::ofstream(path) << "framework: " << c.framework << "\n"
                        << (config.empty() ? "" : "config: " + config + "\n")
                        << (c.version.empty() ? "" : "framework_version: " + c.version + "\n")
                        << (c.model.empty() ? "" : "model: " + c.model + "\n") << "hardware: {gpu: " << c.gpu
                        << ", nodes: " << c.nodes << ", gpus_per_node: " << c.gpus_per_node << "}\n"
                        << (launch.empty() ? "" : "launch:\n" + launch) << "measure: {steps: " << c.steps << "}\n";
    return path;
  }

  // Launches every case at once (the mock has 2 nodes of each GPU type: the
  // scheduler queues the rest) and checks each.
  void run_all(const std::vector<Case>& cases) {
    std::vector<Child> children;
    for (const Case& c : cases) {
      const std::string w = wrapper(c);
      children.push_back(spawn({"run", w, "--cluster", c.cluster, "--clusters", dir_ + "/clusters.yaml", "--run-dir",
                                dir_ + "/runs/" + c.name, "--json"},
                               dir_ + "/" + c.name + ".out"));
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
      wait_for(children[i]);
      check(cases[i], children[i]);
    }
  }

  void check(const Case& c, const Child& child) {
    SCOPED_TRACE(c.name);
    const std::string out = read_file(child.out);
    const std::string run_dir = dir_ + "/runs/" + c.name;
    if (!c.refused_with.empty()) {
      EXPECT_EQ(child.status, 2) << out;
      EXPECT_NE(out.find(c.refused_with), std::string::npos) << out;
      EXPECT_FALSE(fs::exists(run_dir + "/run.log.sbatch")) << "submitted";
      return;
    }
    const auto json_at = out.find("{\n");
    ASSERT_NE(json_at, std::string::npos) << out;
    const auto j = nlohmann::json::parse(out.substr(json_at));
    const std::string log = fs::exists(run_dir + "/run.log") ? read_file(run_dir + "/run.log") : "";
    if (c.fails_with.empty()) {
      EXPECT_EQ(child.status, 0) << out << "\n--- run.log ---\n" << log;
      EXPECT_EQ(j["state"], "completed") << j["reason"];
      EXPECT_GE(j["diagnosis"]["steps"].get<double>(), 1) << log;
      EXPECT_TRUE(j["diagnosis"]["failure"].is_null()) << j["diagnosis"]["failure"];
      EXPECT_GT(j["diagnosis"]["throughput"]["step_time_s"].get<double>(), 0);
    } else {
      EXPECT_EQ(child.status, 1) << out;
      EXPECT_NE(j["state"], "completed");
      const std::string reason = j["reason"].get<std::string>();
      EXPECT_TRUE(reason.find(c.fails_with) != std::string::npos || log.find(c.fails_with) != std::string::npos)
          << "expected '" << c.fails_with << "' in the reason (" << reason << ") or the log:\n" << log;
    }
    expect_nothing_left(run_dir);
    expect_only_options_asked_for(run_dir);
  }

  // attune returns once the job is over: no process of the run may remain.
  void expect_nothing_left(const std::string& run_dir) {
    // Slurm ends a cancelled step's processes within KillWait (5 s on the mock).
    std::vector<std::string> left;
    for (int i = 0; i < 100; ++i) {
      left = processes_under(run_dir);
      if (left.empty()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "processes of " << run_dir << " still alive: " << left.front();
  }

  // The batch script lists the sbatch options it was submitted with: only
  // those the definition and the recipe asked for.
  void expect_only_options_asked_for(const std::string& run_dir) {
    const std::string script = run_dir + "/run.log.sbatch";
    if (!fs::exists(script)) return;  // refused before submission
    static const std::set<std::string> asked = {"--parsable", "--job-name", "--nodes", "--gpus-per-node",
                                                "--partition", "--account", "--time", "--exclusive",
                                                "--no-requeue", "--output", "--error", "--open-mode", "--chdir"};
    for (const auto& line : split_lines(read_file(script))) {
      if (line.rfind("#   --", 0) != 0) continue;
      const std::string option(line.substr(4, line.find('=') == std::string_view::npos ? std::string_view::npos
                                                                                         : line.find('=') - 4));
      EXPECT_TRUE(asked.count(option)) << "sent " << option << " (" << script << ")";
    }
  }

  std::string dir_;
};

TEST_F(EmulateTest, MegatronBridgeRecipesLaunchAsTheirUsersLaunchThem) {
  const std::string tutorial = "  workdir: @CO@/megatron-bridge/tutorials/recipes/llama\n";
  const std::string checkout_root = "  workdir: @CO@/megatron-bridge\n";
  std::vector<Case> cases = {
      Case("bridge-pretrain", "bridge", "megatron-bridge/llama32_1b_pretrain.yaml", "llama3.2-1b",
           "  command: [torchrun, 02_pretrain_with_yaml.py, --config-file, \"{config}\"]\n" + tutorial),
      Case("bridge-finetune", "bridge", "megatron-bridge/llama32_1b_finetune.yaml", "llama3.2-1b",
           "  command: [torchrun, 03_finetune_with_yaml.py, --config-file, \"{config}\"]\n" + tutorial)
          .fails("Pretrained checkpoint ./checkpoints/llama32_1b does not exist"),
      Case("bridge-quantized", "bridge", "megatron-bridge/quantized_llama3_8b_pretrain_override_example.yaml",
           "llama3-8b",
           "  command: [torchrun, examples/quantization/pretrain_quantized_llama3_8b.py, --config-file, "
           "\"{config}\"]\n" + checkout_root)
          .fails("<path to the quantized checkpoint> does not exist"),
  };
  for (const Case& c : cases) checkout(c.name, "megatron-bridge");
  run_all(cases);
}

// torchtitan main's Python configs, as its README runs them: the named
// config under command-line overrides.
const char* kTitanMainCommand =
    "  command: [torchrun, -m, torchtitan.train, --module, llama3, --config, llama3_8b, --training.steps, \"100\",\n"
    "            --metrics.log-freq, \"1\", activation-checkpoint:full]\n";

// torchtitan v0.2.2 (TOML) on `emu`; the Python-config generation refuses a
// TOML as its parser does, and runs a recipe kept as its command line.
TEST_F(EmulateTest, TorchtitanRecipesLaunchAsTheirUsersLaunchThem) {
  std::vector<Case> cases = {
      Case("titan-llama3-8b", "torchtitan", "torchtitan/llama3_8b.toml", "", ""),
      Case("titan-llama3-70b", "torchtitan", "torchtitan/llama3_70b.toml", "", "").on(2, "h200"),
      // 405B in FP8 needs more GPUs than the mock has: the emulated H200s run out of memory.
      Case("titan-llama3-405b", "torchtitan", "torchtitan/llama3_405b.toml", "", "")
          .on(2, "h200")
          .fails("CUDA out of memory"),
      Case("titan-main-refuses-toml", "torchtitan", "torchtitan/llama3_8b.toml", "", "").fails("--module is required"),
      // The same TOML where the wrapper declares the version installed.
      Case("titan-declared-0.2.2", "torchtitan", "torchtitan/llama3_8b.toml", "", "").declares("0.2.2"),
      // The Python-config generation: the recipe is the command line.
      Case("titan-main-python-config", "torchtitan", "", "", kTitanMainCommand),
  };
  for (std::size_t i = cases.size() - 3; i < cases.size(); ++i) cases[i].cluster = "emu-titan-main";
  run_all(cases);
}

// Axolotl: `axolotl preprocess` once, then torchrun -m axolotl.cli.train; a
// recipe refused by Axolotl's config validation fails with pydantic's error.
TEST_F(EmulateTest, AxolotlRecipesLaunchAsTheirUsersLaunchThem) {
  std::vector<Case> cases = {
      Case("axolotl-fft-8b", "axolotl", "axolotl/fft-8b-liger-fsdp.yaml", "", ""),
      Case("axolotl-gpt-oss-20b", "axolotl", "axolotl/gpt-oss-20b-fft-fsdp2.yaml", "", ""),
      Case("axolotl-hsdp-tp", "axolotl", "axolotl/llama-3_1-8b-hsdp-tp.yaml", "", "").on(2, "h200"),
      Case("axolotl-alst", "axolotl", "axolotl/llama3-8b-fsdp2-alst.yaml", "", "").on(1, "b200"),
      Case("axolotl-qlora-70b", "axolotl", "axolotl/qlora-fsdp-70b.yaml", "", ""),
      Case("axolotl-fsdp-tp-cp", "axolotl", "axolotl/qwen3-8b-fsdp-tp-cp.yaml", "", ""),
      Case("axolotl-qwen3-moe-4gpu", "axolotl", "axolotl/qwen3_30ba3b_ep_fsdp_fft_4gpu.yaml", "", "")
          .on(1, "h100", 4)
          .fails("1 validation error for AxolotlConfigWCapabilities"),
  };
  run_all(cases);
  // The preprocessing ran once, before the training, in the same job.
  const std::string log = read_file(dir_ + "/runs/axolotl-fft-8b/run.log");
  EXPECT_LT(log.find("axolotl.cli.preprocess"), log.find("axolotl.cli.train")) << log.substr(0, 3000);
}

// Megatron-LM: the example scripts run with bash from the checkout with their
// positional arguments; the CI configs converted as Megatron's CI converts
// them. The 8B example needs more than the simulated H100's 79 GiB by a
// hair (80.1 GiB predicted), so it runs on H200s; the 175B and Mixtral
// examples need more GPUs than the mock has (attune refuses their layouts).
TEST_F(EmulateTest, MegatronLmRecipesLaunchAsTheirUsersLaunchThem) {
  const std::string co = "  workdir: @CO@/megatron-lm\n";
  const std::string ci_env =
      "  env: {DATA_BLEND: @CO@/data/blend, DATA_PATH: @CO@/data, WANDB_EXPERIMENT: attune, WANDB_SAVE_PATH: @CO@/wandb}\n";
  const std::string ci_15b = dir_ + "/gpt3_15b_8t_release.yaml";
  {
    std::string text = read_file(corpus() + "/megatron-lm/functional_tests/gpt3_15b_8t_release/model_config.yaml");
    const auto at = text.find("--log-interval: 100");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 19, "--log-interval: 1");
    std::ofstream(ci_15b) << text;
  }
  std::vector<Case> cases = {
      Case("meg-llama3-8b", "megatron", "megatron-lm/train_llama3_8b_h100_fp8.sh", "llama3-8b",
           co + "  args: [@CO@/ckpt/llama3, @CO@/tb/llama3]\n")
          .on(1, "h200"),
      Case("meg-llama3-8b-fsdp", "megatron", "megatron-lm/train_llama3_8b_fsdp_h100_fp8.sh", "llama3-8b",
           co + "  args: [@CO@/ckpt/fsdp, @CO@/tb/fsdp]\n  env: {USE_UV: \"0\"}\n"),
      Case("meg-gpt3-175b", "megatron", "megatron-lm/train_gpt3_175b_distributed.sh", "",
           co + "  args: [@CO@/ckpt/175b, @CO@/tb/175b, @CO@/vocab.json, @CO@/merges.txt, @CO@/data/text]\n")
          .on(2, "b200")
          .refused("world size 16 must be divisible by tp*pp*cp = 128"),
      Case("meg-mixtral", "megatron", "megatron-lm/train_mixtral_8x7b_distributed.sh", "",
           co + "  args: [@CO@/ckpt/mixtral, @CO@/tokenizer.model, @CO@/data/text]\n")
          .on(1, "b200")
          .refused("world size 8 must be divisible by etp*ep*pp = 32"),
      Case("meg-sbatch", "megatron", "megatron-lm/sbatch_mfsdp_deepseek_v3.sh", "", co).refused("sbatch"),
      // Its pipeline size is the world size the environment gives.
      Case("meg-gpt-oss-02-train", "megatron", "megatron-lm/02_train.sh", "", co).refused("known only at run time"),
      // Logs every 100 iterations of about a minute: measured from a copy that logs each.
      Case("meg-ci-15b", "megatron", ci_15b, "", co + ci_env),
      Case("meg-ci-deepseek-proxy", "megatron",
           "megatron-lm/functional_tests/deepseekv3_proxy_flex_tp2pp2emp16etp1cp1_gb_200_release/model_config.yaml", "",
           co + ci_env)
          .on(2, "h200"),
  };
  for (const Case& c : cases) checkout(c.name, "megatron-lm");
  run_all(cases);
}

// NeMo AutoModel under torchrun, as slurm.sub runs it.
TEST_F(EmulateTest, AutoModelRecipesLaunchAsTheirUsersLaunchThem) {
  std::vector<Case> cases = {
      Case("am-hellaswag-fp8", "automodel", "automodel/llama3_1_8b_hellaswag_fp8.yaml", "", ""),
      Case("am-70b-benchmark", "automodel", "automodel/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml", "", "")
          .on(2, "h200"),
      // The simulator counts optimizer state for every weight (PEFT trains few):
      // its memory fits on two nodes, not one.
      Case("am-70b-peft-pp", "automodel", "automodel/llama_3_3_70b_instruct_squad_peft_pp.yaml", "", "").on(2, "b200"),
      Case("am-qwen3-moe", "automodel", "automodel/qwen3_moe_30b_te_mxfp8_gb200.yaml", "", "").on(1, "b200"),
      // 32 nodes of 8: attune refuses its layout on the mock's.
      Case("am-deepseek-v3", "automodel", "automodel/deepseek_v3_te_deepep.yaml", "", "")
          .on(1, "b200")
          .refused("world size 8 must be divisible by etp*ep*pp = 256"),
      // Batches padded to their longest sample: no step time to simulate.
      Case("am-squad", "automodel", "automodel/llama3_2_1b_squad.yaml", "", "").fails("states no sequence length"),
  };
  run_all(cases);
}

// SageMaker HyperPod: the recipe resolved as the launcher resolves it and
// handed to the training adapter's entry script. As shipped it names no
// experiment directory or data, so the adapter's config check stops it (and
// exits 0: a failed run); a user's copy that says them runs.
TEST_F(EmulateTest, HyperPodRecipesLaunchAsTheirUsersLaunchThem) {
  const std::string co = "  workdir: @CO@/hyperpod-adapter\n";
  const std::string copy = hyperpod_user_copy("hp-llama3-8b");
  std::vector<Case> cases = {
      Case("hp-llama3-8b", "hyperpod", copy, "llama3-8b", co).on(2, "h100"),
      // 16 nodes of 8: attune refuses its layout on the mock's.
      Case("hp-as-shipped", "hyperpod", "hyperpod/hf_llama3_8b_seq8k_gpu_p5x16_pretrain.yaml", "llama3-8b", co)
          .on(2, "h200")
          .refused("world size 16 must be divisible by shard_degree*tp*ep = 128"),
      // For two nodes, with its experiment directory and data still unsaid: the
      // adapter's config check logs the errors and exits 0 without a step.
      Case("hp-no-exp-dir", "hyperpod", hyperpod_user_copy("hp-no-exp-dir", false), "llama3-8b", co)
          .on(2, "b200")
          .fails("exited before its first step"),
      Case("hp-checkpointless", "hyperpod", "hyperpod/checkpointless_llama3_70b_pretrain.yaml", "llama3-70b", co)
          .refused("checkpointless"),
  };
  for (const Case& c : cases) checkout(c.name, "hyperpod-adapter");
  run_all(cases);
}

// A campaign of five trials per framework, each from a corpus recipe as its
// users launch it, all at once on the mock.
TEST_F(EmulateTest, AFiveTrialCampaignPerFramework) {
  std::vector<Case> campaigns = {
      Case("camp-titan", "torchtitan", "torchtitan/llama3_8b.toml", "", ""),
      Case("camp-titan-main", "torchtitan", "", "", kTitanMainCommand).on(1, "b200"),
      Case("camp-axolotl", "axolotl", "axolotl/fft-8b-liger-fsdp.yaml", "", "").on(1, "h200"),
      Case("camp-megatron", "megatron", "megatron-lm/train_llama3_8b_h100_fp8.sh", "llama3-8b",
           "  workdir: @CO@/megatron-lm\n  args: [@CO@/ckpt/llama3, @CO@/tb/llama3]\n")
          .on(1, "h200"),
      Case("camp-automodel", "automodel", "automodel/llama3_1_8b_hellaswag_fp8.yaml", "", "").on(1, "b200"),
  };
  campaigns[1].cluster = "emu-titan-main";
  checkout("camp-megatron", "megatron-lm");
  const std::string hyperpod = hyperpod_user_copy("camp-hyperpod");
  campaigns.push_back(Case("camp-hyperpod", "hyperpod", hyperpod, "llama3-8b", "  workdir: @CO@/hyperpod-adapter\n").on(2));
  checkout("camp-hyperpod", "hyperpod-adapter");
  // Megatron-Bridge's tutorial saves to ./checkpoints and every later run
  // resumes from it: the campaign's copy saves nothing (a run's side effects
  // are the measurement's to turn off).
  const std::string bridge = dir_ + "/llama32_1b_pretrain.yaml";
  {
    std::string text = read_file(corpus() + "/megatron-bridge/llama32_1b_pretrain.yaml");
    for (const char* key : {"  save: ", "  load: "}) {
      const auto at = text.find(key);
      ASSERT_NE(at, std::string::npos) << key;
      text.replace(at, text.find('\n', at) - at, std::string(key) + "null");
    }
    std::ofstream(bridge) << text;
  }
  campaigns.push_back(Case("camp-bridge", "bridge", bridge, "llama3.2-1b",
                           "  command: [torchrun, 02_pretrain_with_yaml.py, --config-file, \"{config}\"]\n"
                           "  workdir: @CO@/megatron-bridge/tutorials/recipes/llama\n")
                          .on(1, "b200"));
  checkout("camp-bridge", "megatron-bridge");
  std::vector<Child> children;
  for (const Case& c : campaigns)
    children.push_back(spawn({"tune", wrapper(c), "--cluster", c.cluster, "--clusters", dir_ + "/clusters.yaml", "--out",
                              dir_ + "/camps/" + c.name, "--max-trials", "5", "--seed", "3", "--no-lessons", "--policy", "random", "--budget",
                              "400gpuh"},
                             dir_ + "/" + c.name + ".out"));
  for (std::size_t i = 0; i < campaigns.size(); ++i) {
    wait_for(children[i]);
    SCOPED_TRACE(campaigns[i].name);
    const std::string out = read_file(children[i].out);
    ASSERT_EQ(children[i].status, 0) << out;
    const std::string camp = dir_ + "/camps/" + campaigns[i].name;
    const auto summary = nlohmann::json::parse(read_file(camp + "/summary.json"));
    EXPECT_GE(summary["trials"].get<double>(), 5) << out;
    int measured = 0;
    for (const auto& trial : fs::directory_iterator(camp + "/trials")) {
      for (const auto& run : fs::directory_iterator(trial.path())) {
        if (!fs::exists(run.path() / "journal.jsonl")) continue;
        for (const auto& line : split_lines(read_file((run.path() / "journal.jsonl").string()))) {
          if (line.find("\"finished\"") == std::string_view::npos) continue;
          const auto j = nlohmann::json::parse(line);
          if (j["status"]["state"] != "completed") continue;
          ++measured;
          // Completed means measured: steps in the part of the log the measurement covers.
          const std::string log = read_file((run.path() / "run.log").string());
          const std::uint64_t bytes = j["status"].value("measured_log_bytes", std::uint64_t{0});
          EXPECT_NE((bytes ? log.substr(0, bytes) : log).find("step"), std::string::npos) << run.path();
        }
        expect_only_options_asked_for(run.path().string());
      }
    }
    EXPECT_GE(measured, 3) << out;  // the baseline twice and at least one trial measured
    expect_nothing_left(camp);
  }
}

}  // namespace
}  // namespace attune
