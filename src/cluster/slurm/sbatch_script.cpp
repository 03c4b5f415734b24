#include "attune/cluster/slurm/sbatch_script.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "attune/cluster/cluster.h"
#include "attune/util/shell_quote.h"

namespace attune::cluster {

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// Refuses a value that goes into an sbatch/srun option.
void check_option_value(const RunSpec& spec, std::string_view setting, std::string_view value) {
  for (const char c : value) {
    if (is_control(c))
      throw ClusterError(fmt::format("run '{}': {} contains a control character", spec.name, setting));
  }
}

// Refuses a value that only goes into the script (quoted): NUL is the one byte
// a shell word cannot hold.
void check_script_value(const RunSpec& spec, std::string_view setting, std::string_view value) {
  if (value.find('\0') != std::string_view::npos)
    throw ClusterError(fmt::format("run '{}': {} contains a NUL byte", spec.name, setting));
}

bool is_env_name(std::string_view name) {
  if (name.empty()) return false;
  const auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(name[0])) return false;
  for (const char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_plain_name(std::string_view name) {
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}


// The rendezvous of one launcher per node: attune's fixed text, with the GPU
// count and the port the only values in it (ints).
std::string per_node_rendezvous(int gpus_per_node, int rendezvous_port) {
  const std::string port = rendezvous_port > 0 ? std::to_string(rendezvous_port) : "$((20000 + SLURM_JOB_ID % 20000))";
  return fmt::format(R"(# One launcher per node: rendezvous from Slurm's allocation (torchrun reads PET_*).
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR
export MASTER_PORT={}
export NNODES=$SLURM_JOB_NUM_NODES
export GPUS_PER_NODE={}
export PET_NNODES=$NNODES
export PET_NPROC_PER_NODE=$GPUS_PER_NODE
export PET_RDZV_BACKEND=c10d
export PET_RDZV_ENDPOINT=$MASTER_ADDR:$MASTER_PORT
export PET_RDZV_ID=$SLURM_JOB_ID
)",
                     port, gpus_per_node);
}

// The names the rendezvous above exports, which a container's image must not override.
const char* const kRendezvousNames[] = {"MASTER_ADDR", "MASTER_PORT", "NNODES", "GPUS_PER_NODE", "PET_NNODES",
                                        "PET_NPROC_PER_NODE", "PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_RDZV_ID"};

// pyxis's options for every srun of the job: the image, its mounts with the
// run directory at its own path (the recipe and the log live there), the
// working directory inside the image, the home directory's mount, and the
// variables whose values the job's, not the image's, must be.
std::string container_options(const RunSpec& spec, const ClusterDefinition& def, const std::string& run_dir) {
  std::string out = " --container-image=" + shell_quote(spec.container_image);
  std::vector<std::string> mounts = spec.container_mounts;
  if (!run_dir.empty()) mounts.push_back(run_dir + ":" + run_dir);
  std::string joined;
  for (const auto& m : mounts) joined += (joined.empty() ? "" : ",") + m;
  out += " --container-mounts=" + shell_quote(joined);
  if (!spec.workdir.empty()) out += " --container-workdir=" + shell_quote(spec.workdir);
  if (!def.mount_home) out += " --no-container-mount-home";
  std::vector<std::string> names;
  for (const auto& [name, value] : spec.env) names.push_back(name);
  if (spec.per_node) names.insert(names.end(), std::begin(kRendezvousNames), std::end(kRendezvousNames));
  std::string env;
  for (const auto& n : names) env += (env.empty() ? "" : ",") + n;
  if (!env.empty()) out += " --container-env=" + shell_quote(env);
  return out;
}

// The options every srun of the job takes: CPUs per task (since Slurm 22.05
// srun no longer inherits sbatch's) and the cluster's own srun arguments.
std::string srun_options(const ClusterDefinition& def) {
  std::string out;
  if (def.cpus_per_task > 0) out += fmt::format(" --cpus-per-task={}", def.cpus_per_task);
  for (const auto& a : def.srun_args) out += " " + shell_quote(a);
  return out;
}

}  // namespace

long long sbatch_time_minutes(double time_limit_s, double time_scale) {
  if (!(time_limit_s > 0)) return 0;
  if (!(time_scale > 0) || !std::isfinite(time_scale)) time_scale = 1;
  const double minutes = std::ceil(time_limit_s / time_scale / 60.0 - 1e-9);
  // Slurm's limit is a 32-bit count of minutes; anything beyond is "infinite" anyway.
  constexpr double kMax = 365.0 * 24 * 60 * 100;
  if (!(minutes < kMax)) return static_cast<long long>(kMax);
  return std::max(1LL, static_cast<long long>(minutes));
}

std::string slurm_filename(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

SbatchJob sbatch_job(const RunSpec& spec, const ClusterDefinition& def) {
  // ------------------------------------------------------------ checks
  check_option_value(spec, "name", spec.name);
  if (spec.name.empty()) throw ClusterError("a run needs a name (its Slurm job name)");
  if (spec.command.empty()) throw ClusterError(fmt::format("run '{}': no command to launch", spec.name));
  if (spec.command[0].empty()) throw ClusterError(fmt::format("run '{}': the command's program is empty", spec.name));
  if (spec.command[0][0] == '-')
    throw ClusterError(fmt::format("run '{}': the command's program '{}' starts with '-'", spec.name, spec.command[0]));
  if (spec.log_path.empty()) throw ClusterError(fmt::format("run '{}': no log path", spec.name));
  if (spec.nodes < 1)
    throw ClusterError(fmt::format("run '{}': nodes must be at least 1 (got {})", spec.name, spec.nodes));
  if (spec.gpus_per_node < 1)
    throw ClusterError(
        fmt::format("run '{}': gpus_per_node must be at least 1 (got {})", spec.name, spec.gpus_per_node));
  if (std::isnan(spec.time_limit_s) || std::isinf(spec.time_limit_s))
    throw ClusterError(fmt::format("run '{}': time_limit_s is not a finite number", spec.name));

  SbatchRequest req;
  req.run = spec.name;
  req.partition = spec.partition.empty() ? def.partition : spec.partition;
  req.account = spec.account.empty() ? def.account : spec.account;
  req.qos = spec.qos.empty() ? def.qos : spec.qos;
  req.nodes = spec.nodes;
  req.gpus_per_node = spec.gpus_per_node;
  req.gpu = spec.gpu;
  if (req.gpu.empty()) {
    if (const auto it = def.partitions.find(req.partition); it != def.partitions.end()) req.gpu = it->second;
  }
  // Sent only when asked for: a node feature is the cluster's vocabulary, not
  // a GPU type's (typed gres already asks for the GPUs).
  req.constraint = spec.constraint.empty() ? def.constraint : spec.constraint;
  req.time_minutes = sbatch_time_minutes(spec.time_limit_s, def.time_scale);

  check_option_value(spec, "partition", req.partition);
  check_option_value(spec, "account", req.account);
  check_option_value(spec, "qos", req.qos);
  check_option_value(spec, "gpu", req.gpu);
  check_option_value(spec, "constraint", req.constraint);
  check_option_value(spec, "log_path", spec.log_path);
  check_option_value(spec, "workdir", spec.workdir);
  check_option_value(spec, "container_image", spec.container_image);
  for (const auto& m : spec.container_mounts) check_option_value(spec, "container_mounts", m);
  if (!is_plain_name(req.gpu))
    throw ClusterError(fmt::format("run '{}': gpu '{}' is not a GPU type name (letters, digits, '_', '-', '.')",
                                   spec.name, req.gpu));
  if (spec.log_path.find('\\') != std::string::npos)
    throw ClusterError(fmt::format(
        "run '{}': log_path '{}' contains a backslash, which Slurm's --output cannot express", spec.name,
        spec.log_path));
  for (std::size_t i = 0; i < spec.command.size(); ++i)
    check_script_value(spec, fmt::format("command argument {}", i), spec.command[i]);
  for (const auto& name : spec.unset_env) {
    if (!is_env_name(name))
      throw ClusterError(fmt::format("run '{}': unset_env name '{}' is not a valid variable name", spec.name, name));
  }
  for (const auto& step : spec.prepare) {
    if (step.empty() || step[0].empty() || step[0][0] == '-')
      throw ClusterError(fmt::format("run '{}': a command to run before training has no program", spec.name));
    for (const auto& a : step) check_script_value(spec, "a command run before training", a);
  }
  for (const auto& [key, value] : spec.env) {
    if (!is_env_name(key))
      throw ClusterError(fmt::format("run '{}': env name '{}' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)",
                                     spec.name, key));
    check_script_value(spec, fmt::format("env {}", key), value);
  }
  const bool container = !spec.container_image.empty();
  if (container && def.container != "pyxis")
    throw ClusterError(fmt::format(
        "run '{}': container_image '{}' needs a cluster with container: pyxis (cluster '{}' has container: {})",
        spec.name, spec.container_image, def.name, def.container.empty() ? "none" : def.container));
  if (!container && !spec.container_mounts.empty())
    throw ClusterError(fmt::format("run '{}': container_mounts needs a container_image", spec.name));
  for (const auto& m : spec.container_mounts) {
    if (m.find(',') != std::string::npos)
      throw ClusterError(fmt::format("run '{}': container_mounts entry '{}' contains a comma", spec.name, m));
    if (m.empty()) throw ClusterError(fmt::format("run '{}': container_mounts has an empty entry", spec.name));
  }

  // ------------------------------------------------------------ options
  SbatchJob job;
  auto& o = job.options;
  o.push_back("--parsable");
  o.push_back("--job-name=" + spec.name);
  o.push_back(fmt::format("--nodes={}", spec.nodes));
  if (!req.gpu.empty() && def.typed_gres) {
    o.push_back(fmt::format("--gpus-per-node={}:{}", req.gpu, spec.gpus_per_node));
  } else {
    o.push_back(fmt::format("--gpus-per-node={}", spec.gpus_per_node));
  }
  if (!req.constraint.empty()) o.push_back("--constraint=" + req.constraint);
  if (!req.partition.empty()) o.push_back("--partition=" + req.partition);
  if (!req.account.empty()) o.push_back("--account=" + req.account);
  if (!req.qos.empty()) o.push_back("--qos=" + req.qos);
  if (req.time_minutes > 0) o.push_back(fmt::format("--time={}", req.time_minutes));
  if (def.cpus_per_task > 0) o.push_back(fmt::format("--cpus-per-task={}", def.cpus_per_task));
  if (spec.exclusive) o.push_back("--exclusive");
  o.push_back("--no-requeue");
  o.push_back("--output=" + slurm_filename(spec.log_path));
  o.push_back("--error=" + slurm_filename(spec.log_path));
  o.push_back("--open-mode=append");
  // A container's working directory is inside its image: srun's, not the batch script's.
  if (!spec.workdir.empty() && !container) o.push_back("--chdir=" + spec.workdir);
  for (const auto& a : def.sbatch_args) o.push_back(a);

  // ------------------------------------------------------------ script
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# attune run '{}': submitted as `sbatch OPTIONS <this file>` with these options\n", spec.name);
  s += "# (on sbatch's command line, not as SBATCH directives in this file):\n";
  for (const auto& opt : o) s += "#   " + opt + "\n";
  s += "set -u\n";
  for (const auto& [key, value] : spec.env) s += "export " + key + "=" + shell_quote(value) + "\n";
  if (!spec.workdir.empty() && !container) s += "cd -- " + shell_quote(spec.workdir) + " || exit 1\n";

  const std::string run_dir = std::filesystem::path(spec.log_path).parent_path().string();
  const std::string container_flags = container ? container_options(spec, def, run_dir) : "";
  const std::string srun_flags = srun_options(def);
  if (spec.per_node) {
    s += per_node_rendezvous(spec.gpus_per_node, def.rendezvous_port);
    for (const auto& step : spec.prepare) {
      s += "# Before training, once:\n";
      s += "srun --nodes=1 --ntasks=1" + srun_flags + container_flags + " " + quoted_words(step) + " || exit $?\n";
    }
    std::string unset;
    for (const auto& name : spec.unset_env) unset += "unset " + name + "; ";
    s += "srun --ntasks-per-node=1 --kill-on-bad-exit=1" + srun_flags + container_flags + " bash -c 'export NODE_RANK=$SLURM_NODEID; " +
         unset + "exec \"$@\"' attune-launch " + quoted_words(spec.command) + "\n";
  } else if (container) {
    s += "exec srun --nodes=1 --ntasks=1" + srun_flags + container_flags + " " + quoted_words(spec.command) + "\n";
  } else {
    s += "exec " + quoted_words(spec.command) + "\n";
  }
  job.script = std::move(s);
  job.request = std::move(req);
  return job;
}

}  // namespace attune::cluster
