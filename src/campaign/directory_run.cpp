#include "attune/campaign/directory_run.h"

#include <filesystem>

#include <fmt/format.h>

#include "attune/campaign/step_estimate.h"
#include "attune/cluster/backend_registry.h"
#include "attune/cluster/launch.h"
#include "attune/cluster/run_journal.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;

}  // namespace

cluster::LaunchRequest launch_request_for(const DirectoryRunRequest& q, const gate::ApprovedRecipe& approved) {
  cluster::LaunchRequest l;
  l.run_name = q.run_name;
  l.run_dir = q.run_dir;
  l.budget_gpu_hours = q.budget_gpu_hours;
  l.steps = q.steps;
  l.expected_step_s = expected_step_line_gap_s(approved.recipe());
  l.attune_binary = current_executable("attune");
  l.truth_file = q.truth_file;
  l.seed = q.seed;
  l.durable = q.durable;
  return l;
}

namespace {

void submit(cluster::Cluster& cluster, cluster::RunJournal& journal, const cluster::Launch& l,
            const cluster::ClusterDefinition& def, const std::string& recipe_file, DirectoryRunResult& r) {
  r.spec = l.spec();
  journal.launching(r.spec.name, def.name, r.spec, recipe_file);
  r.id = cluster.submit(l);
  journal.launched(r.spec.name, r.id);
}

// The journal's run, adopted: re-attached, reported as ended, or submitted
// when attune died before the cluster got it. False when the journal is empty.
bool adopt(cluster::Cluster& cluster, cluster::RunJournal& journal, const gate::ApprovedRecipe& approved,
           const cluster::ClusterDefinition& def, const DirectoryRunRequest& q, const DirectoryRunHooks& hooks,
           DirectoryRunResult& r) {
  const auto entries = journal.entries();
  if (entries.empty()) return false;
  const cluster::JournalEntry& last = entries.back();
  if (last.cluster != def.name)
    throw InputError({journal.path(), 0, 0}, "--run-dir",
                     fmt::format("this directory holds run {} on cluster '{}', not '{}'", last.run, last.cluster, def.name));
  r.id = {def.name, last.id};
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
      journal.launched(last.run, r.id);
    } else {
      if (hooks.on_note) hooks.on_note(fmt::format("run {} was never submitted; submitting it now", last.run));
      // Prepared again from the approved recipe under the journalled name and
      // directory: the same spec and files, journalled again as what is now submitted.
      cluster::LaunchRequest again = launch_request_for(q, approved);
      again.run_name = last.run;
      submit(cluster, journal, cluster::prepare_launch(approved, def, again), def, last.recipe, r);
      r.reattached = false;
      return true;
    }
  }
  try {
    cluster.attach(r.id, r.spec);
  } catch (const cluster::ClusterError& e) {
    // The cluster was right; the run is what cannot be followed.
    throw InputError({journal.path(), 0, 0}, "",
                     fmt::format("run {} ({}:{}) cannot be followed: {}. Its log stays in {}; use another --run-dir "
                                 "to launch the recipe again",
                                 last.run, r.id.cluster, r.id.id, e.what(), r.spec.log_path));
  }
  return true;
}

cluster::RunStatus follow(cluster::Cluster& cluster, const cluster::ClusterDefinition& def, const DirectoryRunRequest& q,
                          const DirectoryRunHooks& hooks, const DirectoryRunResult& r) {
  cluster::WatchOptions o;
  o.time_scale = def.time_scale;
  o.hang_factor = q.hang_factor;
  o.startup_allowance_s = q.startup_allowance_s;
  // A real run is a measurement: stopped once its log shows the steps to
  // measure. A simulated payload prints exactly those steps by itself.
  if (!q.to_end && !cluster::run_traits(def).prints_own_steps) o.stop_after_steps = r.spec.steps;
  if (hooks.interrupted) o.interrupted = hooks.interrupted;
  o.clock = hooks.clock;
  if (hooks.on_progress) o.on_progress = [&](const cluster::WatchProgress& p) { hooks.on_progress(p, r.spec); };
  return cluster::watch_run(cluster, r.id, r.spec, o);
}

}  // namespace

DirectoryRunResult run_in_directory(cluster::Cluster& cluster, const cluster::ClusterDefinition& def,
                                    const gate::ApprovedRecipe& approved, const DirectoryRunRequest& q,
                                    const DirectoryRunHooks& hooks) {
  DirectoryRunResult r;
  cluster::RunJournal journal((fs::path(q.run_dir) / "journal.jsonl").string(), q.durable);
  if (!adopt(cluster, journal, approved, def, q, hooks, r))
    submit(cluster, journal, cluster::prepare_launch(approved, def, launch_request_for(q, approved)), def, q.recipe_file, r);
  if (hooks.on_started) hooks.on_started(r);
  if (!r.already_ended) {
    r.status = follow(cluster, def, q, hooks, r);
    journal.finished(r.spec.name, r.status);
  }
  r.gpu_hours = cluster::gpu_hours(r.spec, r.status.elapsed_s);
  std::error_code ec;
  if (fs::exists(r.spec.log_path, ec) && fs::file_size(r.spec.log_path, ec) > 0) {
    try {
      diagnose::DiagnoseOptions o = diagnose::options_for_recipe(approved.recipe());
      o.log_bytes = r.status.measured_log_bytes;  // what was measured, not the stop's aftermath
      r.diagnosis = diagnose::diagnose_logs({r.spec.log_path}, o);
    } catch (const InputError& e) {
      // A crashed job can leave a log that is no text (a node's zero-filled
      // tail): the run is then judged by its scheduler state alone.
      if (hooks.on_note) hooks.on_note(std::string("the run's log cannot be read: ") + e.what());
    }
  }
  return r;
}

}  // namespace attune::campaign
