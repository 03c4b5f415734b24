#include "attune/cluster/sim/sim_cluster.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attune/sim/run_log.h"
#include "attune/sim/step_model.h"
#include "attune/util/file.h"

namespace attune::cluster {

namespace {

// Thrown from the log writer's clock when the run reaches its time limit:
// the lines printed so far are the log a killed run leaves.
struct TimeLimitReached {};

RunState state_of(const std::string& failure) {
  if (failure.empty()) return RunState::Completed;
  if (failure == "node_failure") return RunState::NodeFail;
  return RunState::Failed;
}

// Writes the run's log, cut at the time limit or where the watchdog would
// have cancelled a stalled run; returns its status.
RunStatus simulate(const sim::Workload& w, const sim::Prediction& p, sim::RunOptions o, const RunSpec& spec,
                   const SimWatchdog& watchdog, std::ostringstream& out) {
  RunStatus status;
  std::streamoff last_offset = 0;
  o.before_lines = [&](double simulated_s) {
    if (simulated_s > spec.time_limit_s) throw TimeLimitReached{};
    last_offset = out.tellp();
  };
  sim::RunOutcome run;
  try {
    run = sim::write_run_log(w, p, o, out);
  } catch (const TimeLimitReached&) {
    status.state = RunState::Timeout;
    status.elapsed_s = spec.time_limit_s;
    status.reason = "ran past its time limit of " + std::to_string(static_cast<long>(spec.time_limit_s)) + " s";
    return status;
  }
  status.elapsed_s = run.elapsed_s;
  status.state = state_of(run.failure);
  if (run.stalled_at_s >= 0) {
    // No new step since stalled_at: attune's watchdog cancels the run once
    // the silence outlasts its threshold, unless NCCL's own timeout came first.
    double threshold = std::max(watchdog.min_hang_s, watchdog.hang_factor * spec.expected_step_s);
    if (run.failed_at_step <= 1) threshold += watchdog.startup_allowance_s;
    if (run.stalled_at_s + threshold < run.elapsed_s && run.stalled_at_s + threshold <= spec.time_limit_s) {
      std::string text = out.str();
      text.resize(static_cast<std::size_t>(last_offset));
      out.str(text);
      out.seekp(0, std::ios::end);
      status.state = RunState::Hang;
      status.elapsed_s = run.stalled_at_s + threshold;
      status.reason = "no new step for " + std::to_string(static_cast<long>(threshold)) + " s (expected step time " +
                      std::to_string(spec.expected_step_s) + " s)";
      return status;
    }
  }
  if (!run.failure.empty()) {
    status.reason = run.failure;
    if (!p.ok && !p.error.empty()) status.reason += ": " + p.error;
    if (run.failed_at_step > 0) status.reason += " at step " + std::to_string(run.failed_at_step);
  }
  return status;
}

// Beside the log: how the run ended, so a restarted attune can attach to it.
std::string status_path(const RunSpec& spec) { return spec.log_path + ".status.json"; }

nlohmann::json status_json(const std::string& id, const RunStatus& s) {
  nlohmann::json j = run_status_json(s);
  j["id"] = id;
  return j;
}

}  // namespace

SimCluster::SimCluster(sim::Perturbation truth, std::uint64_t campaign_seed, SimWatchdog watchdog)
    : truth_(std::move(truth)), seed_(campaign_seed), watchdog_(watchdog) {}

RunId SimCluster::submit(const Launch& launch) {
  require_prepared_for(launch, kBackend);
  const RunSpec& spec = launch.spec();
  if (spec.log_path.empty()) throw ClusterError("run '" + spec.name + "': no log path");
  const sim::Workload w = sim::workload_from_recipe(launch.recipe());
  const sim::Prediction p = sim::predict(w, truth_);
  while (runs_.count(std::to_string(next_))) ++next_;  // ids attached after a restart stay taken
  const long n = next_++;
  const std::string id = std::to_string(n);
  std::ostringstream text;
  // Each launch of a campaign draws its own noise, reproducibly from the campaign's seed.
  const RunStatus status =
      simulate(w, p, sim::run_options(w, p, truth_, spec.noise_seed ? spec.noise_seed : launch_seed(seed_, n), spec.steps), spec, watchdog_, text);
  std::filesystem::path log(spec.log_path);
  if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
  write_file_atomic(spec.log_path, text.str(), spec.durable);
  if (spec.durable) write_file_atomic(status_path(spec), status_json(id, status).dump() + "\n");
  runs_[id] = Run{spec, status};
  return RunId{name(), id};
}

const SimCluster::Run& SimCluster::find(const RunId& id) const {
  const auto it = runs_.find(id.id);
  if (id.cluster != name() || it == runs_.end()) throw ClusterError("no simulated run " + id.cluster + ":" + id.id);
  return it->second;
}

RunStatus SimCluster::poll(const RunId& id) { return find(id).status; }

// A simulated run is over by the time submit returns: nothing to cancel.
void SimCluster::cancel(const RunId& id) { find(id); }

std::string SimCluster::log(const RunId& id) { return read_run_log(name() + ":" + id.id, find(id).spec.log_path); }

// Simulated runs end inside submit; after a restart the status file beside
// the log says how.
void SimCluster::attach(const RunId& id, const RunSpec& spec) {
  if (id.cluster != name()) throw ClusterError("run " + id.cluster + ":" + id.id + " is not a simulated run");
  if (runs_.count(id.id)) return;
  const std::string path = status_path(spec);
  if (!std::filesystem::exists(path))
    throw ClusterError("simulated run sim:" + id.id + " is gone (no " + path + ")");
  try {
    const RunStatus status = run_status_from_json(nlohmann::json::parse(read_file(path)));
    runs_[id.id] = Run{spec, status};
  } catch (const std::exception& e) {  // JSON syntax, or a field of the wrong kind (InputError)
    throw ClusterError(path + ": not a run status (" + e.what() + ")");
  }
}

// The status file beside the log names the run that wrote it.
std::optional<RunId> SimCluster::find_run(const RunSpec& spec) {
  for (const auto& [id, run] : runs_) {
    if (run.spec.name == spec.name && run.spec.log_path == spec.log_path) return RunId{name(), id};
  }
  const std::string path = status_path(spec);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return RunId{name(), nlohmann::json::parse(read_file(path)).at("id").get<std::string>()};
  } catch (const nlohmann::json::exception& e) {
    throw ClusterError(path + ": not a run status (" + e.what() + ")");
  }
}

}  // namespace attune::cluster
