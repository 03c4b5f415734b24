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
  std::string launch;     // the wrapper's launch: section body (indented two spaces)
  int steps = 3;          // measure.steps
  std::string cluster = "emu";
  // "" : the run measures (completed, steps in its log); else the run fails
  // and this text is in its reason or its log (the framework's own error).
  std::string fails_with;

  Case(std::string name_, std::string framework_, std::string config_, std::string model_, std::string launch_)
      : name(std::move(name_)), framework(std::move(framework_)), config(std::move(config_)),
        model(std::move(model_)), launch(std::move(launch_)) {}
  Case& fails(std::string text) {
    fails_with = std::move(text);
    return *this;
  }
  Case& on(int nodes_, std::string gpu_ = "h100") {
    nodes = nodes_;
    gpu = std::move(gpu_);
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
  const std::string needle = "ATTUNE_EMULATE_RECIPE=" + dir;
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

  std::string wrapper(const Case& c) {
    std::string config = c.config;
    if (!config.empty() && config[0] != '/') config = corpus() + "/" + config;
    std::string launch = c.launch;
    for (std::size_t at = launch.find("@CO@"); at != std::string::npos; at = launch.find("@CO@"))
      launch.replace(at, 4, (fs::path(dir_) / "co" / c.name).string());
    const std::string path = dir_ + "/" + c.name + ".attune.yaml";
    std::ofstream(path) << "framework: " << c.framework << "\nconfig: " << config << "\n"
                        << (c.model.empty() ? "" : "model: " + c.model + "\n") << "hardware: {gpu: " << c.gpu
                        << ", nodes: " << c.nodes << ", gpus_per_node: 8}\n"
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

// torchtitan v0.2.2 (TOML) on `emu`; the Python-config generation refuses a
// TOML as its parser does.
TEST_F(EmulateTest, TorchtitanRecipesLaunchAsTheirUsersLaunchThem) {
  std::vector<Case> cases = {
      Case("titan-llama3-8b", "torchtitan", "torchtitan/llama3_8b.toml", "", ""),
      Case("titan-llama3-70b", "torchtitan", "torchtitan/llama3_70b.toml", "", "").on(2, "h200"),
      // 405B in FP8 needs more GPUs than the mock has: the emulated H200s run out of memory.
      Case("titan-llama3-405b", "torchtitan", "torchtitan/llama3_405b.toml", "", "")
          .on(2, "h200")
          .fails("CUDA out of memory"),
      Case("titan-main-refuses-toml", "torchtitan", "torchtitan/llama3_8b.toml", "", "").fails("--module is required"),
  };
  cases.back().cluster = "emu-titan-main";
  run_all(cases);
}

// A campaign of five trials per framework, each from a corpus recipe as its
// users launch it, all at once on the mock.
TEST_F(EmulateTest, AFiveTrialCampaignPerFramework) {
  std::vector<Case> campaigns = {
      Case("camp-titan", "torchtitan", "torchtitan/llama3_8b.toml", "", ""),
  };
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
                           "  workdir: @CO@/megatron-bridge/tutorials/recipes/llama\n"));
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
