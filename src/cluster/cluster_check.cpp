#include "attune/cluster/cluster_check.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "attune/util/subprocess.h"
#include "attune/util/text.h"

namespace attune::cluster {

namespace {

// A partition as sinfo describes it: the GRES and features of its nodes.
struct PartitionInfo {
  std::set<std::string> gres;      // "gpu:h100:8"
  std::set<std::string> features;  // "h100"
};

class Checker {
 public:
  Checker(const ClusterDefinition& def, const CheckContext& c) : def_(def), c_(c) {
    if (!def.slurm_conf.empty()) env_["SLURM_CONF"] = def.slurm_conf;
  }

  std::vector<CheckItem> run() {
    if (def_.backend == "sim") {
      add("simulator", CheckLevel::Ok, "runs in-process; nothing to reach");
      return items_;
    }
    if (def_.backend == "local") {
      check_local_gpus();
    } else if (def_.backend == "slurm" && check_slurm_conf() && check_commands() && check_controller()) {
      check_partitions();
      check_account();
      check_accounting();
    }
    if (def_.payload == "sim") check_attune_binary();
    return items_;
  }

 private:
  void add(std::string what, CheckLevel level, std::string detail) {
    items_.push_back({std::move(what), level, std::move(detail)});
  }

  ProcessResult call(const std::vector<std::string>& argv) {
    ProcessOptions o;
    o.timeout_s = c_.command_timeout_s;
    o.env = env_;
    return run_process(argv, o);
  }

  static std::string first_line(const std::string& text) {
    const auto lines = split_lines(text);
    return lines.empty() ? "" : std::string(trim(lines.front()));
  }

  void check_local_gpus() {
    const ProcessResult r = call({"nvidia-smi", "-L"});
    if (r.exit_code != 0) {
      add("gpus", CheckLevel::Warn, "nvidia-smi did not answer (" + r.failure() + "): runs will see no GPU");
      return;
    }
    int n = 0;
    for (const auto& line : split_lines(r.out)) n += line.starts_with("GPU ") ? 1 : 0;
    add("gpus", CheckLevel::Ok, fmt::format("{} GPU(s): {}", n, first_line(r.out)));
  }

  bool check_slurm_conf() {
    if (def_.slurm_conf.empty()) {
      add("slurm.conf", CheckLevel::Ok, "the environment's (SLURM_CONF or Slurm's default)");
      return true;
    }
    if (std::filesystem::exists(def_.slurm_conf)) {
      add("slurm.conf", CheckLevel::Ok, def_.slurm_conf);
      return true;
    }
    add("slurm.conf", CheckLevel::Fail,
        def_.slurm_conf + " does not exist" +
            (def_.name == "mock" ? " (start the mock cluster: eval \"$(bash scripts/mock-slurm/start.sh)\")" : ""));
    return false;
  }

  bool check_commands() {
    bool ok = true;
    for (const char* program : {"sbatch", "squeue", "sacct", "scontrol", "scancel", "sinfo"}) {
      const ProcessResult r = call({program, "--version"});
      if (r.exit_code == 0) {
        add(program, CheckLevel::Ok, first_line(r.out));
      } else {
        add(program, CheckLevel::Fail, r.failure() + ": install the Slurm client commands (Debian: slurm-client)");
        ok = false;
      }
    }
    return ok;
  }

  bool check_controller() {
    const ProcessResult r = call({"scontrol", "ping"});
    const std::string said = first_line(r.out);
    if (r.exit_code == 0 && contains_lower(said, "is up")) {
      add("controller", CheckLevel::Ok, said);
      return true;
    }
    add("controller", CheckLevel::Fail, "slurmctld does not answer: " + (said.empty() ? r.failure() : said));
    return false;
  }

  std::map<std::string, PartitionInfo> partitions() {
    std::map<std::string, PartitionInfo> out;
    const ProcessResult r = call({"sinfo", "-h", "-o", "%R|%G|%f"});
    if (r.exit_code != 0) return out;
    for (const auto& line : split_lines(r.out)) {
      const auto parts = split(line, '|');
      if (parts.size() < 3) continue;
      PartitionInfo& p = out[std::string(trim(parts[0]))];
      for (const auto& g : split(parts[1], ',')) p.gres.emplace(trim(g));
      for (const auto& f : split(parts[2], ',')) p.features.emplace(trim(f));
    }
    return out;
  }

  static bool has_gpu_type(const PartitionInfo& p, const std::string& gpu) {
    if (p.features.count(gpu)) return true;
    for (const auto& g : p.gres) {
      if (g.starts_with("gpu:" + gpu + ":") || g == "gpu:" + gpu) return true;
    }
    return false;
  }

  void check_partitions() {
    const auto found = partitions();
    std::string known;
    for (const auto& [name, info] : found) known += (known.empty() ? "" : ", ") + name;
    std::map<std::string, std::string> wanted = def_.partitions;
    if (!def_.partition.empty()) wanted.emplace(def_.partition, "");
    for (const auto& [name, gpu] : wanted) {
      const auto it = found.find(name);
      if (it == found.end()) {
        add("partition " + name, CheckLevel::Fail, "no such partition (the cluster has: " + known + ")");
      } else if (!gpu.empty() && !has_gpu_type(it->second, gpu)) {
        add("partition " + name, CheckLevel::Fail,
            fmt::format("no node advertises GPU type {} (gres {}; features {})", gpu, join(it->second.gres, ","),
                        join(it->second.features, ",")));
      } else {
        add("partition " + name, CheckLevel::Ok,
            fmt::format("gres {}{}", join(it->second.gres, ","), gpu.empty() ? "" : "; GPU type " + gpu));
      }
    }
  }

  void check_account() {
    if (def_.account.empty()) return;
    const ProcessResult r = call({"sacctmgr", "-n", "-P", "show", "account", def_.account, "format=account"});
    if (r.exit_code != 0) {
      add("account " + def_.account, CheckLevel::Warn, "not checked: sacctmgr failed (" + r.failure() + ")");
    } else if (trim(first_line(r.out)) == def_.account) {
      add("account " + def_.account, CheckLevel::Ok, "exists");
    } else {
      add("account " + def_.account, CheckLevel::Fail, "no such account in Slurm's accounting");
    }
  }

  void check_accounting() {
    const ProcessResult r = call({"sacct", "-X", "-n", "-P", "-S", "now-1hours", "-o", "JobID"});
    if (r.exit_code == 0) add("accounting", CheckLevel::Ok, "sacct answers");
    else add("accounting", CheckLevel::Warn, "sacct does not answer (" + r.failure() +
                                                "): runs older than the controller's MinJobAge are found only through "
                                                "the job completion log");
  }

  void check_attune_binary() {
    const std::string& b = c_.attune_binary;
    std::error_code ec;
    if (!b.empty() && std::filesystem::is_regular_file(b, ec) && ::access(b.c_str(), X_OK) == 0) add("payload", CheckLevel::Ok, "jobs run " + b + " sim job");
    else add("payload", CheckLevel::Fail, "jobs run `attune sim job` but the attune binary '" + b + "' is not executable");
  }

  static std::string join(const std::set<std::string>& items, const char* sep) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
  }

  const ClusterDefinition& def_;
  const CheckContext& c_;
  std::map<std::string, std::string> env_;
  std::vector<CheckItem> items_;
};

}  // namespace

std::vector<CheckItem> check_cluster(const ClusterDefinition& def, const CheckContext& context) {
  return Checker(def, context).run();
}

bool check_passed(const std::vector<CheckItem>& items) {
  for (const auto& i : items) {
    if (i.level == CheckLevel::Fail) return false;
  }
  return true;
}

std::string to_string(CheckLevel level) {
  switch (level) {
    case CheckLevel::Ok: return "ok";
    case CheckLevel::Warn: return "warn";
    case CheckLevel::Fail: return "FAIL";
  }
  return "?";
}

nlohmann::json to_json(const std::vector<CheckItem>& items) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& i : items)
    j.push_back({{"what", i.what}, {"level", i.level == CheckLevel::Fail ? "fail" : to_string(i.level)}, {"detail", i.detail}});
  return j;
}

}  // namespace attune::cluster
