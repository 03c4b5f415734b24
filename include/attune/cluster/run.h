// Run: one launched training run as a cluster reports it — its id, the spec
// it was launched with (nodes, GPUs, time limit, command, environment, where
// its log goes) and its state. Every backend maps its own states (Slurm's
// PENDING ... PREEMPTED, a child's exit status, the simulator's prediction)
// onto RunState, so the campaign never sees a backend's vocabulary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::cluster {

enum class RunState {
  Pending,
  Running,
  Completed,
  Failed,       // the program exited non-zero (the log says why: OOM, NCCL, ...)
  Cancelled,
  Timeout,      // ran past its time limit
  NodeFail,
  OutOfMemory,  // the scheduler killed it for host memory
  Preempted,
  Hang,         // no new step for too long: cancelled by the watchdog
};

std::string to_string(RunState s);  // "completed", "node_fail", ...
bool is_final(RunState s);          // everything but Pending and Running

// Which cluster ran it and the backend's own id (a Slurm job id, a local
// process id, a simulator sequence number).
struct RunId {
  std::string cluster;
  std::string id;
};

struct RunSpec {
  std::string name = "attune";          // job name; unique per run (find_run looks runs up by it)
  int nodes = 1;
  int gpus_per_node = 8;
  std::string gpu;                      // h100 | h200 | b200 ("" = any)
  double time_limit_s = 3600;           // simulated seconds on a cluster with a time_scale
  std::string log_path;                 // where the run's log is written
  std::vector<std::string> command;     // argv of the launch (local, slurm); never run through a shell
  std::map<std::string, std::string> env;
  std::vector<std::string> unset_env;   // removed from the command's environment (HyperPod: SLURM_NTASKS)
  // Commands run once, on one node, before the launch (Axolotl's preprocess);
  // the run fails when one does.
  std::vector<std::vector<std::string>> prepare;
  std::string workdir;                  // where the command starts ("" = attune's working directory)
  int steps = 50;                       // steps a simulated run prints
  double expected_step_s = 0;           // between two step lines of the log, for the hang watchdog (0 = unknown)
  // Simulated clusters: the seed of this launch's noise, so a campaign
  // resumed after a crash draws what it would have (0 = the backend draws
  // from its campaign seed and its own launch count).
  std::uint64_t noise_seed = 0;
  // false: an in-process simulated cluster writes the log without fsync and
  // no status file (which only a restarted attune reads): a run nothing will
  // re-attach to. Not journalled: a run re-attached to is a durable one.
  bool durable = true;

  // Slurm only ("" = the cluster's default / Slurm's default).
  std::string partition;
  std::string account;
  std::string qos;
  std::string constraint;               // --constraint (the GPU type's feature when "" and gpu is set)
  bool exclusive = true;                // --exclusive: whole nodes, as training runs need
  std::string container_image;          // pyxis/enroot: srun --container-image
  std::vector<std::string> container_mounts;  // srun --container-mounts, "src:dst[:flags]"
  // true: the command runs once per node under srun (a torchrun per node);
  // false: once, in the batch script itself (a mock cluster's `attune sim job`).
  bool per_node = true;
};

struct RunStatus {
  RunState state = RunState::Pending;
  std::string reason;                   // the backend's words for a final state
  double elapsed_s = 0;                 // wall time charged so far (start-up included)
  // A run attune stopped once it had measured enough: the bytes of its log
  // the measurement covers (0 = the whole log). What the run printed after
  // that is the stop's aftermath (a launcher's report of SIGTERM), no
  // failure of the run.
  std::uint64_t measured_log_bytes = 0;
};

// GPU-hours a run is charged: nodes x GPUs per node x elapsed, failed runs too.
double gpu_hours(const RunSpec& spec, double elapsed_s);
// The time limit a run gets: the recipe's, cut to what `budget_gpu_hours`
// left can pay for on spec's GPUs (budget < 0: no budget).
double run_time_limit_s(double recipe_limit_s, double budget_gpu_hours, int nodes, int gpus_per_node);

// The seed launch `n` (1-based) of a campaign with seed `campaign_seed` draws
// its noise from: the sim backend's runs and a mock cluster's `attune sim job`
// alike, so launch k of a campaign always draws the same and nearby seeds or
// launches draw unrelated noise.
std::uint64_t launch_seed(std::uint64_t campaign_seed, long n);

// RunSpec and RunStatus as JSON, every field (the journal's records,
// a simulated run's status file). Reading: absent keys keep RunSpec's defaults, unknown keys are
// ignored; a value of the wrong type is an InputError whose key names the
// field. Non-finite numbers are written as the strings "inf", "-inf", "nan".
// Strings are written as UTF-8; invalid bytes are replaced (U+FFFD).
nlohmann::json run_spec_json(const RunSpec& spec);
RunSpec run_spec_from_json(const nlohmann::json& j);
nlohmann::json run_status_json(const RunStatus& status);
RunStatus run_status_from_json(const nlohmann::json& j);
// The RunState whose to_string() is `name`; nullopt if none.
std::optional<RunState> run_state_from_string(std::string_view name);

// The run's log as far as it is written: "" before it exists; ClusterError
// naming `run` (e.g. "local:42") when it cannot be read. Every backend whose
// log is a file reads it with this.
std::string read_run_log(const std::string& run, const std::string& path);

}  // namespace attune::cluster
