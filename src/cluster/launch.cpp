#include "attune/cluster/launch.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "attune/cluster/backend_registry.h"
#include "attune/recipe/framework_launch.h"
#include "attune/recipe/recipe_files.h"
#include "attune/util/error.h"

namespace attune::cluster {

namespace {

std::vector<std::string> sim_job_command(const LaunchRequest& q, const std::string& wrapper, double time_scale,
                                         int steps) {
  if (q.attune_binary.empty()) throw InputError({}, "--cluster", "a cluster with payload sim needs the attune binary");
  std::vector<std::string> argv = {q.attune_binary, "sim", "job", wrapper, "--time-scale", fmt::format("{}", time_scale),
                                   "--steps", std::to_string(steps), "--seed", std::to_string(q.seed ? q.seed : 1)};
  if (!q.truth_file.empty()) {
    argv.push_back("--truth-file");
    argv.push_back(std::filesystem::absolute(q.truth_file).string());
  }
  return argv;
}

// The emulate payload: torchrun and python resolve to the framework
// emulators, which time each step by the simulator for the recipe as written
// to the run directory (tools/emulators/attune_emulators/harness.py).
void add_emulator_environment(const ClusterDefinition& cluster, const LaunchRequest& q, const recipe::Recipe& recipe,
                              const recipe::WrittenRecipe& files, RunSpec& s) {
  const std::string dir = emulators_dir(cluster);
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir + "/bin", ec))
    throw InputError({}, "--cluster",
                     fmt::format("cluster '{}' runs the framework emulators, but '{}' holds no emulators (set "
                                 "emulators: in the cluster definition, or ATTUNE_TOOLS_DIR)",
                                 cluster.name, dir + "/bin"));
  if (q.attune_binary.empty()) throw InputError({}, "--cluster", "a cluster with payload emulate needs the attune binary");
  const char* path = std::getenv("PATH");
  const auto existing = s.env.find("PATH");
  const std::string rest = existing != s.env.end() ? existing->second : path && *path ? path : "/usr/bin:/bin";
  s.env["PATH"] = std::filesystem::absolute(dir + "/bin").lexically_normal().string() + ":" + rest;
  s.env["ATTUNE_EMULATE_ATTUNE"] = q.attune_binary;
  s.env["ATTUNE_EMULATE_RECIPE"] = files.wrapper;
  s.env["ATTUNE_EMULATE_TIME_SCALE"] = fmt::format("{}", cluster.time_scale);
  s.env["ATTUNE_EMULATE_SEED"] = std::to_string(q.seed ? q.seed : 1);
  s.env["ATTUNE_EMULATE_GPUS"] = std::to_string(s.gpus_per_node);
  if (!q.truth_file.empty()) s.env["ATTUNE_EMULATE_TRUTH"] = std::filesystem::absolute(q.truth_file).string();
  // The version the wrapper declares is the one the mock has installed
  // (unless the cluster's environment names one).
  if (!recipe.options().framework_version.empty())
    s.env["ATTUNE_EMULATE_FRAMEWORK_VERSION"] = recipe.options().framework_version;
}

// The recipe's own launch: the framework's contract (recipe/framework_launch.h)
// under the cluster's environment, which the recipe's overrides.
void add_recipe_launch(const recipe::Recipe& recipe, const ClusterDefinition& cluster, const RunTraits& traits,
                       const recipe::WrittenRecipe& files, RunSpec& s) {
  const recipe::LaunchSettings& l = recipe.launch();
  const recipe::FrameworkLaunch fl = recipe::framework_launch(recipe, files);
  if (fl.command.empty())
    throw InputError({recipe.wrapper_path(), 0, 0}, "launch.command",
                     fmt::format("{} recipes have no standard launch; say the command in the wrapper's launch.command",
                                 recipe::framework_title(recipe.framework())));
  s.command = fl.command;
  s.env = cluster.env;
  for (const auto& [name, value] : fl.env) s.env[name] = value;
  s.unset_env = fl.unset_env;
  s.prepare = fl.prepare;
  // A framework started as a module needs no checkout: it starts in the run
  // directory, where whatever it writes relative to its working directory
  // (torchtitan's ./outputs, AutoModel's checkpoints/) stays the run's own.
  s.workdir = fl.workdir.empty() ? files.dir : fl.workdir;
  s.container_image = l.container_image;
  s.container_mounts = l.container_mounts;
  s.per_node = traits.per_node;
  if (traits.one_machine) {
    if (s.nodes > 1)
      throw InputError({recipe.wrapper_path(), 0, 0}, "hardware.nodes",
                       fmt::format("cluster '{}' is this one machine; the recipe asks for {} nodes", cluster.name,
                                   s.nodes));
    // One node here: torchrun's own defaults for a single node.
    s.env.emplace("PET_NPROC_PER_NODE", std::to_string(s.gpus_per_node));
    s.env.emplace("PET_NNODES", "1");
  }
}

}  // namespace

Launch prepare_launch(const gate::ApprovedRecipe& approved, const ClusterDefinition& cluster, const LaunchRequest& q) {
  const RunTraits traits = run_traits(cluster);
  const recipe::Recipe& recipe = approved.recipe();
  const recipe::LaunchSettings& l = recipe.launch();
  const recipe::Hardware& hw = recipe.hardware();
  const std::string dir = std::filesystem::absolute(q.run_dir).string();
  const recipe::WrittenRecipe files = recipe::write_recipe_files(recipe, dir, q.durable);

  RunSpec s;
  s.name = q.run_name;
  // The plan's hardware: the flags' or the wrapper's, else the recipe file's own (a HyperPod recipe's nodes).
  const recipe::Plan plan = recipe.plan();
  s.nodes = plan.nodes > 0 ? plan.nodes : hw.nodes > 0 ? hw.nodes : 1;
  s.gpus_per_node = plan.gpus_per_node > 0 ? plan.gpus_per_node : hw.gpus_per_node > 0 ? hw.gpus_per_node : 8;
  s.gpu = !plan.gpu.empty() ? plan.gpu : hw.gpu;
  s.log_path = (std::filesystem::path(dir) / "run.log").string();
  s.steps = q.steps > 0 ? q.steps : recipe.measure().steps > 0 ? recipe.measure().steps : 50;
  s.expected_step_s = q.expected_step_s > 0 && std::isfinite(q.expected_step_s) ? q.expected_step_s : 0;
  s.noise_seed = q.seed;
  s.durable = q.durable;
  s.time_limit_s = run_time_limit_s(l.time_limit_s > 0 ? l.time_limit_s : q.default_time_limit_s, q.budget_gpu_hours,
                                    s.nodes, s.gpus_per_node);
  s.partition = l.partition;
  s.account = l.account;
  s.qos = l.qos;
  s.constraint = l.constraint;
  s.exclusive = l.exclusive;

  const std::string backend(traits.backend->name);
  if (traits.in_process) return Launch(approved, std::move(s), cluster.name, backend);  // nothing is executed
  if (!traits.runs_recipe_command) {
    // A mock cluster's `attune sim job`: the log the framework would print, at
    // the simulated pace divided by the time scale. Nothing of the recipe's
    // own launch runs, so its container and environment are not asked for.
    s.command = sim_job_command(q, files.wrapper, cluster.time_scale, s.steps);
    s.per_node = false;
    s.workdir = dir;
    return Launch(approved, std::move(s), cluster.name, backend);
  }
  add_recipe_launch(recipe, cluster, traits, files, s);
  if (traits.emulated) add_emulator_environment(cluster, q, recipe, files, s);
  return Launch(approved, std::move(s), cluster.name, backend);
}

}  // namespace attune::cluster
