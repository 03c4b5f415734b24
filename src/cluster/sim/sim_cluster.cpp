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

// Writes the run's log, cut at the time limit; returns its status.
RunStatus simulate(const sim::Workload& w, const sim::Prediction& p, sim::RunOptions o, const RunSpec& spec,
                   std::ostream& out) {
  RunStatus status;
  o.before_lines = [&](double simulated_s) {
    if (simulated_s > spec.time_limit_s) throw TimeLimitReached{};
  };
  try {
    status.elapsed_s = sim::write_run_log(w, p, o, out);
  } catch (const TimeLimitReached&) {
    status.state = RunState::Timeout;
    status.elapsed_s = spec.time_limit_s;
    status.reason = "ran past its time limit of " + std::to_string(static_cast<long>(spec.time_limit_s)) + " s";
    return status;
  }
  status.state = p.ok ? RunState::Completed : RunState::Failed;
  if (!p.ok) status.reason = p.failure + ": " + p.error;
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

SimCluster::SimCluster(sim::Perturbation truth, std::uint64_t seed) : truth_(std::move(truth)), seed_(seed) {}

RunId SimCluster::submit(const gate::ApprovedRecipe& recipe, const RunSpec& spec) {
  if (spec.log_path.empty()) throw ClusterError("run '" + spec.name + "': no log path");
  const sim::Workload w = sim::workload_from_recipe(recipe.recipe());
  const sim::Prediction p = sim::predict(w, truth_);
  while (runs_.count(std::to_string(next_))) ++next_;  // ids attached after a restart stay taken
  const std::string id = std::to_string(next_++);
  std::ostringstream text;
  // Each run of a campaign draws its own noise, reproducibly from the seed.
  const RunStatus status = simulate(w, p, sim::run_options(truth_, seed_ + static_cast<std::uint64_t>(next_), spec.steps),
                                    spec, text);
  std::filesystem::path log(spec.log_path);
  if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path());
  write_file_atomic(spec.log_path, text.str());
  write_file_atomic(status_path(spec), status_json(id, status).dump() + "\n");
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
