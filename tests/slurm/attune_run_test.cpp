// `attune run` and `attune cluster check` against the mock Slurm (label
// slurm): the attune binary launches the example recipe on the built-in
// `mock` cluster, whose jobs run `attune sim job` at 60x. Runs complete and
// are diagnosed on one and two nodes; Ctrl-C cancels the job; a second attune
// in the run directory is refused while the first runs; attune killed with
// SIGKILL mid-run and started again re-attaches to the same job and finishes
// it without launching a second one, and the directory refuses any other
// request.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/util/file.h"
#include "attune/util/subprocess.h"
#include "attune/util/text.h"
#include "mock_slurm.h"

namespace attune {
namespace {

using Clock = std::chrono::steady_clock;


class AttuneRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ATTUNE_NEED_MOCK_SLURM();
    std::string pattern = "/tmp/attune-run-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  ProcessResult attune(std::vector<std::string> args, double timeout_s = 240) {
    args.insert(args.begin(), ATTUNE_BINARY);
    ProcessOptions o;
    o.timeout_s = timeout_s;
    return run_process(args, o);
  }

  // The example wrapper with its measure.steps set (what a run measures is
  // the wrapper's), beside the example's launch script.
  std::string wrapper(int steps) {
    const std::string path = std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/llama3-8b.attune.yaml";
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string from = "measure: {steps: 60,";
    const auto at = text.find(from);
    if (at == std::string::npos) ADD_FAILURE() << path << " no longer says " << from;
    else text.replace(at, from.size(), "measure: {steps: " + std::to_string(steps) + ",");
    const auto config = text.find("config: ");
    if (config != std::string::npos) text.insert(config + 8, std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/");
    const std::string out = (std::filesystem::path(dir_) / ("llama3-8b-" + std::to_string(steps) + ".attune.yaml")).string();
    std::ofstream(out) << text;
    return out;
  }

  std::vector<std::string> run_args(const std::string& run_dir, int steps, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"run", wrapper(steps), "--cluster", "mock", "--run-dir", run_dir, "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  // Starts attune in the background; its pid.
  pid_t start_attune(const std::vector<std::string>& args, const std::string& out_path) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<std::string> argv = args;
      argv.insert(argv.begin(), ATTUNE_BINARY);
      std::vector<char*> c;
      for (auto& s : argv) c.push_back(s.data());
      c.push_back(nullptr);
      ::execv(ATTUNE_BINARY, c.data());
      ::_exit(127);
    }
    return pid;
  }

  // A Slurm tool's first output line, trimmed.
  static std::string first_line(const std::string& out) {
    const auto lines = split_lines(out);
    return lines.empty() ? "" : std::string(trim(lines.front()));
  }

  // The journal's records (one JSON object per line).
  static std::vector<nlohmann::json> journal(const std::string& run_dir) {
    std::vector<nlohmann::json> out;
    std::ifstream in(run_dir + "/journal.jsonl");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    }
    return out;
  }

  // Waits (bounded) until squeue shows the run's job RUNNING; its job id.
  static std::string wait_running_job(const std::string& run_dir, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      for (const auto& r : journal(run_dir)) {
        if (r.value("event", "") != "launched") continue;
        const std::string id = r.at("id");
        const ProcessResult q = run_process({"squeue", "-h", "-j", id, "-o", "%T"});
        if (q.ok() && first_line(q.out) == "RUNNING") return id;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return "";
  }

  static std::string sacct_field(const std::string& id, const std::string& field) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      const ProcessResult r = run_process({"sacct", "-X", "-n", "-P", "-j", id, "-o", field});
      if (r.ok() && !first_line(r.out).empty()) return first_line(r.out);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(AttuneRunTest, OneNodeRunCompletesAndIsDiagnosed) {
  const std::string run_dir = (dir_ / "one").string();
  const ProcessResult r = attune(run_args(run_dir, 12));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cluster"], "mock");
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["nodes"], 1);
  // 12 simulated steps of ~33 s plus start-up: minutes of simulated time.
  const double elapsed = j["elapsed_s"];
  EXPECT_GT(elapsed, 300);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 8 * elapsed / 3600, 1e-9);
  EXPECT_EQ(j["diagnosis"]["framework"], "megatron");
  EXPECT_EQ(j["diagnosis"]["steps"], 12);
  EXPECT_GT(j["diagnosis"]["throughput"]["tokens_per_s_per_gpu"].get<double>(), 1000);
  // The job Slurm ran was the batch script beside the log, on an H100 node.
  EXPECT_EQ(sacct_field(j["id"], "State"), "COMPLETED");
  EXPECT_TRUE(std::filesystem::exists(run_dir + "/run.log.sbatch"));
  EXPECT_NE(sacct_field(j["id"], "NodeList").find("h100-"), std::string::npos);
}

TEST_F(AttuneRunTest, TwoNodeRunCompletesOnTwoNodes) {
  const std::string run_dir = (dir_ / "two").string();
  const ProcessResult r = attune(run_args(run_dir, 8, {"--nodes", "2", "--gpu", "h200"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 16 * j["elapsed_s"].get<double>() / 3600, 1e-9);
  EXPECT_EQ(j["diagnosis"]["steps"], 8);
  EXPECT_EQ(sacct_field(j["id"], "NNodes"), "2");
  EXPECT_EQ(sacct_field(j["id"], "NodeList"), "h200-[1-2]");
}

TEST_F(AttuneRunTest, InterruptCancelsTheJob) {
  const std::string run_dir = (dir_ / "int").string();
  const pid_t pid = start_attune(run_args(run_dir, 200), (dir_ / "int.out").string());
  const std::string id = wait_running_job(run_dir, 120);
  ASSERT_FALSE(id.empty()) << read_file((dir_ / "int.out").string());
  // The directory is locked while the first runs: a second is refused, naming it.
  const ProcessResult second = attune(run_args(run_dir, 200), 60);
  EXPECT_EQ(second.exit_code, 2) << second.out << second.err;
  EXPECT_NE(second.err.find("another attune (pid " + std::to_string(pid) + ")"), std::string::npos) << second.err;
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << read_file((dir_ / "int.out").string());
  EXPECT_EQ(sacct_field(id, "State").rfind("CANCELLED", 0), 0u);
  const auto records = journal(run_dir);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["event"], "finished");
  EXPECT_EQ(records.back()["status"]["state"], "cancelled");
}

TEST_F(AttuneRunTest, KilledAttuneReattachesWithoutLaunchingTwice) {
  const std::string run_dir = (dir_ / "kill").string();
  const auto args = run_args(run_dir, 30);
  const pid_t pid = start_attune(args, (dir_ / "kill.out").string());
  const std::string id = wait_running_job(run_dir, 120);
  ASSERT_FALSE(id.empty()) << read_file((dir_ / "kill.out").string());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  // The job runs on without attune.
  EXPECT_EQ(first_line(run_process({"squeue", "-h", "-j", id, "-o", "%T"}).out), "RUNNING");

  const ProcessResult r = attune(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["id"], id);
  EXPECT_EQ(j["reattached"], true);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["diagnosis"]["steps"], 30);
  EXPECT_NE(r.err.find("re-attached to mock:" + id), std::string::npos) << r.err;
  // One job under the run's name, and one launch in the journal.
  const std::string name = j["run"];
  const ProcessResult jobs = run_process({"sacct", "-X", "-n", "-P", "--name", name, "-S", "now-1hours", "-o", "JobID"});
  EXPECT_EQ(split_lines(jobs.out).size(), 1u) << jobs.out;
  int launches = 0;
  for (const auto& rec : journal(run_dir)) launches += rec["event"] == "launching" ? 1 : 0;
  EXPECT_EQ(launches, 1);

  // Once more: the journal says it ended; nothing is launched.
  const ProcessResult again = attune(args);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already ended"), std::string::npos) << again.err;
  // Another request (other steps, other hardware) is refused, not given this result.
  for (const auto& other : {run_args(run_dir, 31), run_args(run_dir, 30, {"--gpu", "h200"})}) {
    const ProcessResult refused = attune(other, 60);
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("holds run " + name), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("--run-dir"), std::string::npos) << refused.err;
  }
  launches = 0;
  for (const auto& rec : journal(run_dir)) launches += rec["event"] == "launching" ? 1 : 0;
  EXPECT_EQ(launches, 1);
}

TEST_F(AttuneRunTest, SbatchRefusalNamesTheSettingAndLaunchesNothing) {
  const std::string conf = (dir_ / "clusters.yaml").string();
  std::ofstream(conf) << "clusters:\n  strict:\n    backend: slurm\n    account: nosuch\n    time_scale: 60\n"
                         "    payload: sim\n    slurm_conf: "
                      << std::getenv("SLURM_CONF") << "\n";
  const std::string run_dir = (dir_ / "refused").string();
  const ProcessResult r =
      attune({"run", wrapper(5), "--cluster", "strict", "--clusters", conf, "--run-dir", run_dir}, 60);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("account 'nosuch'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Invalid account"), std::string::npos) << r.err;
  // Journalled as launching, never launched: a rerun would find no job and submit again.
  const auto records = journal(run_dir);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["event"], "launching");
}

TEST_F(AttuneRunTest, ClusterCheckPassesOnTheMockAndNamesABadPartition) {
  const ProcessResult ok = attune({"cluster", "check", "mock"}, 60);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("controller"), std::string::npos) << ok.out;
  const std::string conf = (dir_ / "clusters.yaml").string();
  std::ofstream(conf) << "clusters:\n  broken:\n    backend: slurm\n    partition: nosuch\n"
                         "    partitions: {h100: b200}\n    slurm_conf: "
                      << std::getenv("SLURM_CONF") << "\n";
  const ProcessResult bad = attune({"cluster", "check", "broken", "--clusters", conf, "--json"}, 60);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  const auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(j["passed"], false);
  std::string failed, request;
  for (const auto& c : j["checks"]) {
    if (c["level"] == "fail") failed += c["what"].get<std::string>() + ";";
    if (c["what"] == "request") request = c["detail"].get<std::string>();
  }
  // Slurm itself refuses the request a run would get (sbatch --test-only), naming the partition.
  EXPECT_EQ(failed, "partition h100;partition nosuch;request;") << bad.out;
  EXPECT_NE(request.find("partition 'nosuch' does not exist"), std::string::npos) << request;
}

}  // namespace
}  // namespace attune
