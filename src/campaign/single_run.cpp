#include "attune/campaign/single_run.h"

#include <stdlib.h>

#include <cctype>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/campaign/directory_run.h"
#include "attune/campaign/run_names.h"
#include "attune/campaign/sim_target.h"
#include "attune/campaign/step_estimate.h"
#include "attune/cluster/backend_registry.h"
#include "attune/recipe/run_hardware.h"
#include "attune/cluster/launch.h"
#include "attune/cluster/run_journal.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/file_lock.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;

std::string default_run_dir(const std::string& file) { return stamped_dir("attune-runs", file); }

// Unique, and safe as a Slurm job name.
std::string new_run_name(const std::string& file) {
  std::random_device rd;
  return ("attune-" + job_safe(recipe_stem(file))).substr(0, 48) + fmt::format("-{:08x}", rd());
}

// A recipe run as it is still goes through the gate: only an ApprovedRecipe launches.
gate::ApprovedRecipe approve_as_is(const recipe::Recipe& r, const std::string& file) {
  try {
    return gate::CorrectnessGate{}.approve(r, recipe::with_run_hardware(r));
  } catch (const gate::GateRefusal& e) {
    throw InputError({file, 0, 0}, "RECIPE", std::string("the correctness gate refuses it: ") + e.what());
  }
}

// The run this request makes in its directory: a new run gets a new name.
DirectoryRunRequest directory_request(const SingleRunRequest& q, const LaunchTarget& t, const std::string& run_dir,
                                      std::uint64_t campaign_seed) {
  DirectoryRunRequest d;
  d.run_dir = run_dir;
  d.run_name = new_run_name(q.file);
  d.recipe_file = q.file;
  d.budget_gpu_hours = q.budget_gpu_hours;
  d.truth_file = t.truth_file;
  d.seed = cluster::launch_seed(campaign_seed, 1);
  d.hang_factor = q.hang_factor;
  d.startup_allowance_s = q.startup_allowance_s;
  d.to_end = q.to_end;
  return d;
}

// A new directory under the system's temporary directory, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "attune-request-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw InputError({pattern, 0, 0}, "", "cannot create a temporary directory");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every string in `j` with `from` replaced by `to`.
void relocate(nlohmann::json& j, const std::string& from, const std::string& to) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
    j = s;
  } else if (j.is_structured()) {
    for (auto& v : j) relocate(v, from, to);
  }
}

// A simulated payload's noise seed is each invocation's own draw, nobody's
// request: `attune sim job --seed S`, or the emulators' ATTUNE_EMULATE_SEED.
void blank_seed(nlohmann::json& spec) {
  nlohmann::json& command = spec["command"];
  if (command.is_array()) {
    for (std::size_t i = 0; i + 1 < command.size(); ++i)
      if (command[i] == "--seed") command[i + 1] = "";
  }
  nlohmann::json& env = spec["env"];
  if (env.is_object() && env.contains("ATTUNE_EMULATE_SEED")) env["ATTUNE_EMULATE_SEED"] = "";
}

// What the run this request would launch has that the journalled run does
// not: the spec's fields by name, and each file of the recipe as launched
// whose bytes differ. The request is prepared in a scratch directory, so the
// journalled run's own files are never touched; its paths are then read as
// the run directory's.
std::vector<std::string> request_differences(const cluster::JournalEntry& last, const gate::ApprovedRecipe& approved,
                                             const cluster::ClusterDefinition& def, cluster::LaunchRequest request,
                                             const std::string& run_dir) {
  const ScratchDir scratch;
  request.run_name = last.run;
  request.run_dir = scratch.path();
  const cluster::Launch fresh = cluster::prepare_launch(approved, def, request);
  nlohmann::json now = cluster::run_spec_json(fresh.spec());
  nlohmann::json then = cluster::run_spec_json(last.spec);
  relocate(now, fs::absolute(scratch.path()).string(), fs::absolute(run_dir).string());
  if (cluster::run_traits(def).simulated) {
    blank_seed(now);
    blank_seed(then);
  }
  std::vector<std::string> differ;
  for (const auto& [key, value] : now.items())
    if (!then.contains(key) || then[key] != value) differ.push_back(key);
  for (const auto& entry : fs::directory_iterator(scratch.path())) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    const fs::path launched = fs::path(run_dir) / name;
    std::error_code ec;
    if (!fs::is_regular_file(launched, ec) || read_file(launched.string()) != read_file(entry.path().string()))
      differ.push_back("the recipe file " + name);
  }
  return differ;
}

// A used run directory takes only the request its journalled run was
// launched for (same cluster, same recipe bytes, same spec): that request
// re-attaches to the run or reports how it ended; any other would be handed
// the old run's result as its own.
void require_same_request(const cluster::JournalEntry& last, const gate::ApprovedRecipe& approved,
                          const cluster::ClusterDefinition& def, const cluster::LaunchRequest& request,
                          const std::string& run_dir, const std::string& journal_path) {
  if (last.cluster != def.name)
    throw InputError({journal_path, 0, 0}, "--run-dir",
                     fmt::format("this directory holds run {} on cluster '{}', not '{}': use another --run-dir",
                                 last.run, last.cluster, def.name));
  const std::vector<std::string> differ = request_differences(last, approved, def, request, run_dir);
  if (differ.empty()) return;
  throw InputError({journal_path, 0, 0}, "--run-dir",
                   fmt::format("this directory holds run {} of recipe {}, launched with other settings ({} differ); "
                               "the same command re-attaches to it or reports how it ended: use another --run-dir",
                               last.run, last.recipe, fmt::join(differ, ", ")));
}

// The journal's run, adopted: re-attached, reported as ended, or submitted
// when attune died before the cluster got it. False when the journal is empty.
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

  // One attune at a time in a run directory, for the whole run: two would
  // both launch, and share one log.
  long holder = 0;
  const std::optional<FileLock> lock = FileLock::try_lock((fs::path(r.run_dir) / ".lock").string(), &holder);
  if (!lock)
    throw InputError({r.run_dir, 0, 0}, "--run-dir",
                     fmt::format("another attune{} is running in this directory; wait for it to end, or use another "
                                 "--run-dir",
                                 holder > 0 ? fmt::format(" (pid {})", holder) : ""));
  cluster::RunJournal journal((fs::path(r.run_dir) / "journal.jsonl").string());
  // A fresh draw of noise per launch: the run's seed is nobody's choice.
  const std::uint64_t seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const auto cluster = cluster::make_cluster(r.cluster, {t.truth_file, seed});
  const DirectoryRunRequest d = directory_request(q, t, r.run_dir, seed);
  if (const auto entries = journal.entries(); !entries.empty())
    require_same_request(entries.back(), approved, r.cluster, launch_request_for(d, approved), r.run_dir, journal.path());
  DirectoryRunHooks h;
  h.interrupted = hooks.interrupted;
  h.on_progress = hooks.on_progress;
  h.on_note = hooks.on_note;
  if (hooks.on_started) {
    h.on_started = [&](const DirectoryRunResult& started) {
      SingleRunResult now = r;
      now.id = started.id;
      now.spec = started.spec;
      now.reattached = started.reattached;
      now.already_ended = started.already_ended;
      hooks.on_started(now);
    };
  }
  DirectoryRunResult done;
  try {
    done = run_in_directory(*cluster, r.cluster, approved, d, h);
  } catch (const cluster::ClusterError& e) {
    throw InputError({}, "--cluster", fmt::format("{}; run the same command again to re-attach", e.what()));
  }
  r.id = done.id;
  r.spec = done.spec;
  r.status = done.status;
  r.reattached = done.reattached;
  r.already_ended = done.already_ended;
  r.diagnosis = std::move(done.diagnosis);
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
