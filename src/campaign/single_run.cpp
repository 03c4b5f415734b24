#include "attune/campaign/single_run.h"

#include <cctype>
#include <ctime>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "attune/campaign/sim_target.h"
#include "attune/cluster/cluster_factory.h"
#include "attune/cluster/launch.h"
#include "attune/cluster/run_journal.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;

std::string stem_of(const std::string& path) {
  std::string stem = fs::path(path).filename().string();
  for (const char* suffix : {".attune.yaml", ".yaml", ".yml", ".toml", ".sh"}) {
    const std::string s(suffix);
    if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
      stem.resize(stem.size() - s.size());
      break;
    }
  }
  // A scenario file is named for its directory (recipes/scenarios/<name>/scenario.yaml).
  if (stem == "scenario") {
    const std::string dir = fs::path(path).parent_path().filename().string();
    if (!dir.empty()) return dir;
  }
  return stem;
}

std::string default_run_dir(const std::string& file) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return (fs::path("attune-runs") / (stem_of(file) + "-" + stamp)).string();
}

// Unique, and safe as a Slurm job name.
std::string new_run_name(const std::string& file) {
  std::random_device rd;
  std::string name = "attune-";
  for (char c : stem_of(file)) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
  return name.substr(0, 48) + fmt::format("-{:08x}", rd());
}

// A recipe run as it is still goes through the gate: only an ApprovedRecipe launches.
gate::ApprovedRecipe approve_as_is(const recipe::Recipe& r, const std::string& file) {
  try {
    return gate::CorrectnessGate{}.approve(r, r);
  } catch (const gate::GateRefusal& e) {
    throw InputError({file, 0, 0}, "RECIPE", std::string("the correctness gate refuses it: ") + e.what());
  }
}

// The journal's run, adopted: re-attached, reported as ended, or submitted
// when attune died before the cluster got it. False when the journal is empty.
bool adopt(cluster::Cluster& cluster, cluster::RunJournal& journal, const gate::ApprovedRecipe& approved,
           const SingleRunHooks& hooks, SingleRunResult& r) {
  const auto entries = journal.entries();
  if (entries.empty()) return false;
  const cluster::JournalEntry& last = entries.back();
  if (last.cluster != r.cluster.name)
    throw InputError({journal.path(), 0, 0}, "--run-dir",
                     fmt::format("this directory holds run {} on cluster '{}', not '{}'", last.run, last.cluster,
                                 r.cluster.name));
  r.id = {r.cluster.name, last.id};
  r.spec = last.spec;
  r.reattached = true;
  if (last.state != "launching" && last.state != "launched") {
    r.already_ended = true;
    r.status = last.status;
    return true;
  }
  if (last.id.empty()) {  // attune died while submitting: did the cluster get it?
    if (const auto found = cluster.find_run(last.spec)) {
      r.id = *found;
    } else {
      if (hooks.on_note) hooks.on_note(fmt::format("run {} was never submitted; submitting it now", last.run));
      r.id = cluster.submit(approved, last.spec);
      r.reattached = false;
      journal.launched(last.run, r.id);
      return true;
    }
    journal.launched(last.run, r.id);
  }
  cluster.attach(r.id, r.spec);
  return true;
}

void launch(cluster::Cluster& cluster, cluster::RunJournal& journal, const gate::ApprovedRecipe& approved,
            const SingleRunRequest& q, const LaunchTarget& t, std::uint64_t campaign_seed, SingleRunResult& r) {
  cluster::LaunchRequest l;
  l.run_name = new_run_name(q.file);
  l.run_dir = r.run_dir;
  l.budget_gpu_hours = q.budget_gpu_hours;
  l.attune_binary = current_executable("attune");
  l.truth_file = t.truth_file;
  l.seed = cluster::SimCluster::launch_seed(campaign_seed, 1);
  r.spec = cluster::prepare_launch(approved.recipe(), r.cluster, l);
  journal.launching(r.spec.name, r.cluster.name, r.spec, q.file);
  r.id = cluster.submit(approved, r.spec);
  journal.launched(r.spec.name, r.id);
}

cluster::RunStatus follow(cluster::Cluster& cluster, const SingleRunRequest& q, const SingleRunHooks& hooks,
                          const SingleRunResult& r) {
  cluster::WatchOptions o;
  o.time_scale = r.cluster.time_scale;
  o.hang_factor = q.hang_factor;
  o.startup_allowance_s = q.startup_allowance_s;
  // A real run is a measurement: stopped once its log shows the steps to
  // measure. A simulated payload prints exactly those steps by itself.
  if (!q.to_end && r.cluster.backend != "sim" && r.cluster.payload != "sim") o.stop_after_steps = r.spec.steps;
  if (hooks.interrupted) o.interrupted = hooks.interrupted;
  if (hooks.on_progress) o.on_progress = [&](const cluster::WatchProgress& p) { hooks.on_progress(p, r.spec); };
  try {
    return cluster::watch_run(cluster, r.id, r.spec, o);
  } catch (const cluster::ClusterError& e) {
    throw InputError({}, "--cluster", fmt::format("lost run {}:{} ({}); run the same command again to re-attach",
                                                  r.id.cluster, r.id.id, e.what()));
  }
}

std::optional<diagnose::Diagnosis> diagnose_run(const cluster::RunSpec& spec, const recipe::Recipe& r) {
  std::error_code ec;
  if (!fs::exists(spec.log_path, ec) || fs::file_size(spec.log_path, ec) == 0) return std::nullopt;
  return diagnose::diagnose_logs({spec.log_path}, diagnose::options_for_recipe(r));
}

}  // namespace

SingleRunResult run_single(const SingleRunRequest& q, const SingleRunHooks& hooks) {
  const bool default_location = q.clusters_file.empty();
  const auto defs = cluster::load_cluster_definitions(
      default_location ? cluster::default_clusters_path() : q.clusters_file, default_location);
  SingleRunResult r;
  r.cluster = cluster::find_cluster(defs, q.cluster);
  const LaunchTarget t = load_launch_target(q.file, q.options);
  const gate::ApprovedRecipe approved = approve_as_is(t.recipe, q.file);
  r.run_dir = q.run_dir.empty() ? default_run_dir(q.file) : q.run_dir;

  cluster::RunJournal journal((fs::path(r.run_dir) / "journal.jsonl").string());
  // A fresh draw of noise per launch: the run's seed is nobody's choice.
  const std::uint64_t seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const auto cluster = cluster::make_cluster(r.cluster, {t.truth_file, seed});
  try {
    if (!adopt(*cluster, journal, approved, hooks, r)) launch(*cluster, journal, approved, q, t, seed, r);
  } catch (const cluster::ClusterError& e) {
    throw InputError({}, "--cluster", e.what());
  }
  if (hooks.on_started) hooks.on_started(r);
  if (!r.already_ended) {
    r.status = follow(*cluster, q, hooks, r);
    journal.finished(r.spec.name, r.status);
  }
  r.diagnosis = diagnose_run(r.spec, t.recipe);
  return r;
}

nlohmann::json to_json(const SingleRunResult& r) {
  return {{"cluster", r.cluster.name},
          {"backend", r.cluster.backend},
          {"run", r.spec.name},
          {"id", r.id.id},
          {"reattached", r.reattached},
          {"state", to_string(r.status.state)},
          {"reason", r.status.reason},
          {"elapsed_s", r.status.elapsed_s},
          {"gpu_hours", cluster::gpu_hours(r.spec, r.status.elapsed_s)},
          {"time_limit_s", r.spec.time_limit_s},
          {"nodes", r.spec.nodes},
          {"gpus_per_node", r.spec.gpus_per_node},
          {"log", r.spec.log_path},
          {"run_dir", r.run_dir},
          {"diagnosis", r.diagnosis ? diagnose::to_json(*r.diagnosis) : nlohmann::json(nullptr)}};
}

}  // namespace attune::campaign
