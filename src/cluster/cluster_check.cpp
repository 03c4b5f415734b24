#include "attune/cluster/cluster_check.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "attune/cluster/backend_registry.h"
#include "attune/cluster/slurm/sbatch_script.h"
#include "attune/cluster/slurm/slurm_state.h"
#include "attune/util/subprocess.h"
#include "attune/util/text.h"

namespace attune::cluster {

namespace {

// A partition as sinfo describes it: the GRES, features and CPUs of its nodes.
struct PartitionInfo {
  std::set<std::string> gres;      // "gpu:h100:8"
  std::set<std::string> features;  // "h100"
  int cpus = 0;                    // the most any node has
};

class Checker {
 public:
  Checker(const ClusterDefinition& def, const CheckContext& c) : def_(def), c_(c) {
    if (!def.slurm_conf.empty()) env_["SLURM_CONF"] = def.slurm_conf;
  }

  std::vector<CheckItem> run() {
    const RunTraits t = run_traits(def_);
    if (t.in_process) {
      add("simulator", CheckLevel::Ok, "runs in-process; nothing to reach");
      return items_;
    }
    if (t.one_machine) {
      check_local_gpus();
    } else if (t.scheduled && check_slurm_conf() && check_commands() && check_controller()) {
      const auto found = partitions();
      check_partitions(found);
      check_constraint(found);
      check_account();
      check_accounting();
      check_request();
    }
    if (t.needs_attune_binary) check_attune_binary();
    if (t.emulated) check_emulators();
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
            (def_.name.rfind("mock", 0) == 0 ? " (start the mock cluster: eval \"$(bash scripts/mock-slurm/start.sh)\")" : ""));
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
    const ProcessResult r = call({"sinfo", "-h", "-o", "%R|%G|%f|%c"});
    if (r.exit_code != 0) return out;
    for (const auto& line : split_lines(r.out)) {
      const auto parts = split(line, '|');
      if (parts.size() < 4) continue;
      PartitionInfo& p = out[std::string(trim(parts[0]))];
      for (const auto& g : split(parts[1], ',')) p.gres.emplace(trim(g));
      for (const auto& f : split(parts[2], ',')) p.features.emplace(trim(f));
      p.cpus = std::max(p.cpus, std::atoi(std::string(trim(parts[3])).c_str()));
    }
    return out;
  }

  // A typed gres request (--gpus-per-node=h100:8) needs the type in a node's gres.
  static bool has_gres_type(const PartitionInfo& p, const std::string& gpu) {
    for (const auto& g : p.gres) {
      if (g.starts_with("gpu:" + gpu + ":") || g == "gpu:" + gpu || g.starts_with("gpu:" + gpu + "(")) return true;
    }
    return false;
  }

  void check_partitions(const std::map<std::string, PartitionInfo>& found) {
    std::string known;
    for (const auto& [name, info] : found) known += (known.empty() ? "" : ", ") + name;
    std::map<std::string, std::string> wanted = def_.partitions;
    if (!def_.partition.empty()) wanted.emplace(def_.partition, "");
    for (const auto& [name, gpu] : wanted) {
      const auto it = found.find(name);
      if (it == found.end()) {
        add("partition " + name, CheckLevel::Fail, "no such partition (the cluster has: " + known + ")");
      } else if (!gpu.empty() && def_.typed_gres && !has_gres_type(it->second, gpu)) {
        add("partition " + name, CheckLevel::Fail,
            fmt::format("runs ask for --gpus-per-node={}:N, but no node's gres has the type {} (gres {}; features "
                        "{}): name the type the gres uses in partitions:, or set typed_gres: false",
                        gpu, gpu, join(it->second.gres, ","), join(it->second.features, ",")));
      } else {
        add("partition " + name, CheckLevel::Ok,
            fmt::format("gres {}{}", join(it->second.gres, ","), gpu.empty() ? "" : "; GPU type " + gpu));
      }
    }
  }

  // --constraint is sent only when the definition asks for it: the feature
  // must then exist on a node of the partition runs go to.
  void check_constraint(const std::map<std::string, PartitionInfo>& found) {
    if (def_.constraint.empty()) return;
    const auto it = found.find(def_.partition);
    std::set<std::string> features;
    if (it != found.end()) {
      features = it->second.features;
    } else {
      for (const auto& [name, info] : found) features.insert(info.features.begin(), info.features.end());
    }
    // A constraint expression: the features named in it, without operators and counts.
    std::string word;
    std::vector<std::string> missing;
    for (const char c : def_.constraint + "&") {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') {
        word += c;
        continue;
      }
      if (!word.empty() && !std::isdigit(static_cast<unsigned char>(word[0])) && !features.count(word))
        missing.push_back(word);
      word.clear();
    }
    if (missing.empty()) add("constraint", CheckLevel::Ok, def_.constraint + " (a feature of the partition's nodes)");
    else
      add("constraint", CheckLevel::Fail,
          fmt::format("no node{} has the feature {} (features: {}): runs would be refused", 
                      def_.partition.empty() ? "" : " of partition " + def_.partition, join_list(missing),
                      join(features, ",")));
  }

  // The request a run would get, printed as sbatch and srun receive it, and
  // tried with `sbatch --test-only` (Slurm validates it; nothing is submitted).
  void check_request() {
    RunSpec spec;
    spec.name = "attune-cluster-check";
    spec.nodes = 1;
    spec.gpus_per_node = 8;
    spec.log_path = "/tmp/attune-cluster-check/run.log";
    spec.command = {"<the recipe's launch command>"};
    spec.time_limit_s = 600;
    SbatchJob job;
    try {
      job = sbatch_job(spec, def_);
    } catch (const ClusterError& e) {
      add("request", CheckLevel::Fail, e.what());
      return;
    }
    std::string argv = "sbatch";
    for (const auto& o : job.options) argv += " " + o;
    add("sbatch argv", CheckLevel::Ok, argv + " run.log.sbatch");
    for (const auto& line : split_lines(job.script)) {
      if (line.starts_with("srun ") || line.starts_with("exec srun ")) add("srun argv", CheckLevel::Ok, std::string(line));
    }
    std::vector<std::string> test = {"sbatch", "--test-only"};
    for (const auto& o : job.options) {
      if (o != "--parsable" && !o.starts_with("--output=") && !o.starts_with("--error=")) test.push_back(o);
    }
    test.push_back("--output=/dev/null");
    test.push_back("--wrap=true");
    const ProcessResult r = call(test);
    if (r.exit_code == 0) add("request", CheckLevel::Ok, "sbatch --test-only accepts it: " + first_line(r.err));
    else add("request", CheckLevel::Fail, explain_sbatch_refusal(r.err.empty() ? r.failure() : r.err, job, def_.name));
  }

  void check_emulators() {
    const std::string dir = emulators_dir(def_);
    std::error_code ec;
    const bool ok = !dir.empty() && std::filesystem::is_regular_file(dir + "/bin/torchrun", ec) &&
                    ::access((dir + "/bin/torchrun").c_str(), X_OK) == 0;
    if (ok) add("emulators", CheckLevel::Ok, "torchrun and python resolve to the framework emulators in " + dir + "/bin");
    else add("emulators", CheckLevel::Fail, "payload emulate, but '" + dir + "/bin/torchrun' is not there: set emulators:");
  }

  static std::string join_list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
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
    const std::string what = def_.payload == Payload::Sim ? "jobs run " + b + " sim job" : "the emulators time steps with " + b;
    if (!b.empty() && std::filesystem::is_regular_file(b, ec) && ::access(b.c_str(), X_OK) == 0) add("payload", CheckLevel::Ok, what);
    else add("payload", CheckLevel::Fail, "the payload needs the attune binary, but '" + b + "' is not executable");
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
