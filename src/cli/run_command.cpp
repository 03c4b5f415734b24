// `attune run RECIPE --cluster NAME`: one run of the recipe as it is
// (campaign/single_run.h does the work: gate, journal, launch or re-attach,
// watch, diagnose); this file parses the flags, turns Ctrl-C into a cancel,
// and prints progress and the result.
#include <csignal>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "attune/campaign/single_run.h"
#include "attune/cli/commands.h"
#include "attune/cli/diagnosis_output.h"
#include "attune/cli/flag_checks.h"
#include "attune/cli/interrupt_flag.h"

namespace attune::cli {

namespace {

struct RunArgs {
  campaign::SingleRunRequest request;
  bool json = false;
};

// Runs a printing hook so that output nobody reads any more (EPIPE: the
// reader of a pipe went away) never stops attune following its run.
template <class F>
void quietly(F&& print) {
  try {
    print();
  } catch (const std::exception&) {
  }
}

std::string duration_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

void print_started(const campaign::SingleRunResult& r) {
  const auto& s = r.spec;
  fmt::print(stderr, "attune run: {} {} on {} ({}), {} x {} {}, time limit {}\n",
             r.reattached ? "re-attached to" : "launched", r.id.cluster + ":" + r.id.id, r.cluster.name,
             r.cluster.backend, s.nodes, s.gpus_per_node, s.gpu.empty() ? "GPUs" : s.gpu, duration_text(s.time_limit_s));
  if (r.already_ended) fmt::print(stderr, "attune run: the journal in {} says this run already ended\n", r.run_dir);
}

void print_result(const campaign::SingleRunResult& r) {
  const auto& s = r.status;
  fmt::print("run         {}:{} ({})\n", r.id.cluster, r.id.id, r.spec.name);
  fmt::print("ended       {}{} after {}, {:.3f} GPU-hours charged\n", to_string(s.state),
             s.reason.empty() ? "" : " (" + s.reason + ")", duration_text(s.elapsed_s),
             cluster::gpu_hours(r.spec, s.elapsed_s));
  fmt::print("log         {}\n", r.spec.log_path);
  if (r.diagnosis) {
    print_diagnosis(*r.diagnosis);
  } else {
    fmt::print("diagnosis   none: the run left no log\n");
  }
}

int run_run(const RunArgs& a) {
  InterruptFlag interrupt;
  campaign::SingleRunHooks hooks;
  hooks.interrupted = [&] { return interrupt.raised(); };
  hooks.on_started = [](const campaign::SingleRunResult& r) { quietly([&] { print_started(r); }); };
  hooks.on_progress = [](const cluster::WatchProgress& p, const cluster::RunSpec& spec) {
    quietly([&] {
      fmt::print(stderr, "  {:<10} step {}/{}  elapsed {}\n", to_string(p.state), p.steps, spec.steps,
                 duration_text(p.elapsed_s));
    });
  };
  hooks.on_note = [](const std::string& line) { quietly([&] { fmt::print(stderr, "attune run: {}\n", line); }); };
  const campaign::SingleRunResult r = campaign::run_single(a.request, hooks);
  // The run is journalled by now: a result nobody reads still exits with the run's status.
  quietly([&] {
    if (a.json) print_json(campaign::to_json(r));
    else print_result(r);
  });
  return r.status.state == cluster::RunState::Completed ? 0 : 1;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  campaign::SingleRunRequest& q = args->request;
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Launch one run of RECIPE as it is on a cluster, wait for it (a hang watchdog cancels a run whose log shows no new "
      "step for too long; a real run is stopped once it has logged the steps to measure), and print how it ended, the "
      "GPU-hours it was charged and the diagnosis of its log. Exit "
      "status 0 when the run completed, 1 when it did not. Ctrl-C cancels the run. Running the same command with the "
      "same --run-dir after attune was killed re-attaches to the run instead of launching it again");
  cmd->add_option("RECIPE", q.file,
                  "Recipe file, attune wrapper file, or scenario file or directory (on the sim cluster, or a mock "
                  "cluster, a scenario runs under its hidden truth)")
      ->required();
  add_recipe_options(*cmd, q.options);
  cmd->add_option("--cluster", q.cluster,
                  "Cluster to run on, by name: the built-in sim (simulator, instant), local (this machine) or mock "
                  "(the mock Slurm), or one defined in the clusters file")
      ->capture_default_str();
  cmd->add_option("--clusters", q.clusters_file,
                  "Cluster definitions (YAML; default ~/.config/attune/clusters.yaml when it exists)")
      ->check(existing_file());
  cmd->add_option("--run-dir", q.run_dir,
                  "Directory for the run: the recipe as launched, the batch script, the log and the journal (default "
                  "attune-runs/<recipe>-<time>). Must be visible from every node of the cluster");
  cmd->add_option("--budget-gpu-hours", q.budget_gpu_hours,
                  "GPU-hours the run may spend: its time limit is cut to what this pays for")
      ->check(positive_number());
  cmd->add_flag("--to-end", q.to_end,
                "Let a real run go on to its own end (or its time limit) instead of stopping it after the steps to "
                "measure");
  cmd->add_option("--hang-factor", q.hang_factor,
                  "A run is a hang when no new step came for this many times its expected step time (at least 120 s)")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--startup-allowance", q.startup_allowance_s,
                  "Seconds a run may take before its first step (start-up, compilation, data loading) before the "
                  "watchdog calls it a hang")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "Print {cluster, backend, run, id, reattached, state, reason, elapsed_s, gpu_hours, time_limit_s, "
                "nodes, gpus_per_node, log, run_dir, diagnosis} as JSON");
  cmd->callback([args]() { command_status() = run_run(*args); });
}

}  // namespace attune::cli
