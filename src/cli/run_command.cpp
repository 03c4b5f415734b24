// `attune run RECIPE --cluster NAME`: launches one run of the recipe as it is
// (the gate approves it against itself), follows it with the hang watchdog,
// and prints how it ended and the diagnosis of its log. The run is journalled
// in its directory before it is submitted, so the same command after a crash
// or a kill re-attaches to it instead of launching it twice; Ctrl-C cancels it.
#include <cctype>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "attune/cli/commands.h"
#include "attune/cli/diagnosis_output.h"
#include "attune/cli/sim_target.h"
#include "attune/cluster/cluster_config.h"
#include "attune/cluster/cluster_factory.h"
#include "attune/cluster/launch.h"
#include "attune/cluster/run_journal.h"
#include "attune/cluster/run_watch.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::cli {

namespace {

struct RunArgs {
  std::string file;
  recipe::RecipeOptions options;
  std::string cluster = "sim";
  std::string clusters_file;
  std::string run_dir;
  double budget_gpu_hours = -1;
  double hang_factor = 10;
  double startup_allowance_s = 900;
  bool to_end = false;
  bool json = false;
};

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// SIGINT and SIGTERM set a flag the watch reads (it then cancels the run)
// for as long as this object lives.
class InterruptFlag {
 public:
  InterruptFlag() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptFlag() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  bool raised() const { return g_interrupted != 0; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string duration_text(double s) {
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

std::string stem_of(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  for (const char* suffix : {".attune.yaml", ".yaml", ".yml", ".toml", ".sh"}) {
    const std::string s(suffix);
    if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
      stem.resize(stem.size() - s.size());
      break;
    }
  }
  // A scenario file is named for its directory (recipes/scenarios/<name>/scenario.yaml).
  if (stem == "scenario") {
    const std::string dir = std::filesystem::path(path).parent_path().filename().string();
    if (!dir.empty()) return dir;
  }
  return stem;
}

std::string default_run_dir(const std::string& file) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return (std::filesystem::path("attune-runs") / (stem_of(file) + "-" + stamp)).string();
}

// Unique, and safe as a Slurm job name.
std::string new_run_name(const std::string& file) {
  std::random_device rd;
  std::string name = "attune-";
  for (char c : stem_of(file)) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
  return name.substr(0, 48) + fmt::format("-{:08x}", rd());
}

// The run this command follows: launched now, or re-adopted from the journal.
struct Followed {
  cluster::RunId id;
  cluster::RunSpec spec;
  bool reattached = false;
  std::optional<cluster::RunStatus> finished;  // the journal already has its end
};

Followed launch_or_adopt(cluster::Cluster& cluster, cluster::RunJournal& journal, const cluster::ClusterDefinition& def,
                         const gate::ApprovedRecipe& approved, const RunArgs& a, const LaunchTarget& t,
                         std::uint64_t seed, const std::string& run_dir) {
  const auto entries = journal.entries();
  if (!entries.empty()) {
    const cluster::JournalEntry& last = entries.back();
    if (last.cluster != def.name)
      throw InputError({journal.path(), 0, 0}, "--run-dir",
                       fmt::format("this directory holds run {} on cluster '{}', not '{}'", last.run, last.cluster, def.name));
    Followed f{{def.name, last.id}, last.spec, true, std::nullopt};
    if (last.state != "launching" && last.state != "launched") {
      f.finished = last.status;
      return f;
    }
    if (last.id.empty()) {  // attune died while submitting: did the cluster get it?
      if (const auto found = cluster.find_run(last.spec)) {
        f.id = *found;
        journal.launched(last.run, f.id);
      } else {
        fmt::print(stderr, "attune run: run {} was never submitted; submitting it now\n", last.run);
        f.id = cluster.submit(approved, last.spec);
        journal.launched(last.run, f.id);
        f.reattached = false;
        return f;
      }
    }
    cluster.attach(f.id, f.spec);
    return f;
  }
  cluster::LaunchRequest q;
  q.run_name = new_run_name(a.file);
  q.run_dir = run_dir;
  q.budget_gpu_hours = a.budget_gpu_hours;
  q.attune_binary = current_executable("attune");
  q.truth_file = t.truth_file;
  q.seed = cluster::SimCluster::launch_seed(seed, 1);
  Followed f;
  f.spec = cluster::prepare_launch(approved.recipe(), def, q);
  journal.launching(f.spec.name, def.name, f.spec, a.file);
  f.id = cluster.submit(approved, f.spec);
  journal.launched(f.spec.name, f.id);
  return f;
}

void print_progress(const cluster::WatchProgress& p, const cluster::RunSpec& spec) {
  fmt::print(stderr, "  {:<10} step {}/{}  elapsed {}\n", to_string(p.state), p.steps, spec.steps,
             duration_text(p.elapsed_s));
}

std::optional<diagnose::Diagnosis> diagnose_run(const cluster::RunSpec& spec, const recipe::Recipe& r) {
  std::error_code ec;
  if (!std::filesystem::exists(spec.log_path, ec) || std::filesystem::file_size(spec.log_path, ec) == 0) return std::nullopt;
  return diagnose::diagnose_logs({spec.log_path}, diagnose_options_for(r));
}

nlohmann::json result_json(const cluster::ClusterDefinition& def, const Followed& f, const cluster::RunStatus& s,
                           const std::string& run_dir, const std::optional<diagnose::Diagnosis>& d) {
  return {{"cluster", def.name},
          {"backend", def.backend},
          {"run", f.spec.name},
          {"id", f.id.id},
          {"reattached", f.reattached},
          {"state", to_string(s.state)},
          {"reason", s.reason},
          {"elapsed_s", s.elapsed_s},
          {"gpu_hours", cluster::gpu_hours(f.spec, s.elapsed_s)},
          {"time_limit_s", f.spec.time_limit_s},
          {"nodes", f.spec.nodes},
          {"gpus_per_node", f.spec.gpus_per_node},
          {"log", f.spec.log_path},
          {"run_dir", run_dir},
          {"diagnosis", d ? diagnose::to_json(*d) : nlohmann::json(nullptr)}};
}

void print_result(const Followed& f, const cluster::RunStatus& s, const std::optional<diagnose::Diagnosis>& d) {
  fmt::print("run         {}:{} ({})\n", f.id.cluster, f.id.id, f.spec.name);
  fmt::print("ended       {}{} after {}, {:.3f} GPU-hours charged\n", to_string(s.state),
             s.reason.empty() ? "" : " (" + s.reason + ")", duration_text(s.elapsed_s),
             cluster::gpu_hours(f.spec, s.elapsed_s));
  fmt::print("log         {}\n", f.spec.log_path);
  if (d) {
    print_diagnosis(*d);
  } else {
    fmt::print("diagnosis   none: the run left no log\n");
  }
}

// A recipe run as it is still goes through the gate: only an ApprovedRecipe launches.
gate::ApprovedRecipe approve_as_is(const recipe::Recipe& r, const std::string& file) {
  try {
    return gate::CorrectnessGate{}.approve(r, r);
  } catch (const gate::GateRefusal& e) {
    throw InputError({file, 0, 0}, "RECIPE", std::string("the correctness gate refuses it: ") + e.what());
  }
}

int run_run(const RunArgs& a) {
  const bool default_location = a.clusters_file.empty();
  const auto defs = cluster::load_cluster_definitions(
      default_location ? cluster::default_clusters_path() : a.clusters_file, default_location);
  const cluster::ClusterDefinition& def = cluster::find_cluster(defs, a.cluster);
  const LaunchTarget t = load_launch_target(a.file, a.options);
  const gate::ApprovedRecipe approved = approve_as_is(t.recipe, a.file);
  const std::string run_dir = a.run_dir.empty() ? default_run_dir(a.file) : a.run_dir;

  cluster::RunJournal journal((std::filesystem::path(run_dir) / "journal.jsonl").string());
  // A fresh draw of noise per launch: the run's seed is nobody's choice.
  const std::uint64_t seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const auto cluster = cluster::make_cluster(def, {t.truth_file, seed});
  InterruptFlag interrupt;
  Followed f;
  try {
    f = launch_or_adopt(*cluster, journal, def, approved, a, t, seed, run_dir);
  } catch (const cluster::ClusterError& e) {
    throw InputError({}, "--cluster", e.what());
  }
  fmt::print(stderr, "attune run: {} {} on {} ({}), {} x {} {}, time limit {}\n",
             f.reattached ? "re-attached to" : "launched", f.id.cluster + ":" + f.id.id, def.name, def.backend,
             f.spec.nodes, f.spec.gpus_per_node, f.spec.gpu.empty() ? "GPUs" : f.spec.gpu,
             duration_text(f.spec.time_limit_s));
  cluster::RunStatus status;
  if (f.finished) {
    status = *f.finished;
    fmt::print(stderr, "attune run: the journal in {} says this run already ended\n", run_dir);
  } else {
    cluster::WatchOptions o;
    o.time_scale = def.time_scale;
    o.hang_factor = a.hang_factor;
    o.startup_allowance_s = a.startup_allowance_s;
    // A real run is a measurement: stopped once its log shows the steps to
    // measure. A simulated payload prints exactly those steps by itself.
    if (!a.to_end && def.backend != "sim" && def.payload != "sim") o.stop_after_steps = f.spec.steps;
    o.interrupted = [&] { return interrupt.raised(); };
    o.on_progress = [&](const cluster::WatchProgress& p) { print_progress(p, f.spec); };
    try {
      status = cluster::watch_run(*cluster, f.id, f.spec, o);
    } catch (const cluster::ClusterError& e) {
      throw InputError({}, "--cluster", fmt::format("lost run {}:{} ({}); run the same command again to re-attach",
                                                    f.id.cluster, f.id.id, e.what()));
    }
    journal.finished(f.spec.name, status);
  }
  const auto diagnosis = diagnose_run(f.spec, t.recipe);
  if (a.json) print_json(result_json(def, f, status, run_dir, diagnosis));
  else print_result(f, status, diagnosis);
  return status.state == cluster::RunState::Completed ? 0 : 1;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Launch one run of RECIPE as it is on a cluster, wait for it (a hang watchdog cancels a run whose log shows no new "
      "step for too long; a real run is stopped once it has logged the steps to measure), and print how it ended, the "
      "GPU-hours it was charged and the diagnosis of its log. Exit "
      "status 0 when the run completed, 1 when it did not. Ctrl-C cancels the run. Running the same command with the "
      "same --run-dir after attune was killed re-attaches to the run instead of launching it again");
  cmd->add_option("RECIPE", args->file,
                  "Recipe file, attune wrapper file, or scenario file or directory (on the sim cluster, or a mock "
                  "cluster, a scenario runs under its hidden truth)")
      ->required();
  add_recipe_options(*cmd, args->options);
  cmd->add_option("--cluster", args->cluster,
                  "Cluster to run on, by name: the built-in sim (simulator, instant), local (this machine) or mock "
                  "(the mock Slurm), or one defined in the clusters file")
      ->capture_default_str();
  cmd->add_option("--clusters", args->clusters_file,
                  "Cluster definitions (YAML; default ~/.config/attune/clusters.yaml when it exists)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--run-dir", args->run_dir,
                  "Directory for the run: the recipe as launched, the batch script, the log and the journal (default "
                  "attune-runs/<recipe>-<time>). Must be visible from every node of the cluster");
  cmd->add_option("--budget-gpu-hours", args->budget_gpu_hours,
                  "GPU-hours the run may spend: its time limit is cut to what this pays for")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--to-end", args->to_end,
                "Let a real run go on to its own end (or its time limit) instead of stopping it after the steps to "
                "measure");
  cmd->add_option("--hang-factor", args->hang_factor,
                  "A run is a hang when no new step came for this many times its expected step time (at least 120 s)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--startup-allowance", args->startup_allowance_s,
                  "Seconds a run may take before its first step (start-up, compilation, data loading) before the "
                  "watchdog calls it a hang")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "Print {cluster, backend, run, id, reattached, state, reason, elapsed_s, gpu_hours, time_limit_s, "
                "nodes, gpus_per_node, log, run_dir, diagnosis} as JSON");
  cmd->callback([args]() { command_status() = run_run(*args); });
}

}  // namespace attune::cli
