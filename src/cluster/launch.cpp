#include "attune/cluster/launch.h"

#include <cctype>
#include <cmath>
#include <map>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "attune/recipe/recipe_files.h"
#include "attune/util/error.h"

namespace attune::cluster {

namespace {

std::vector<std::string> with_config(std::vector<std::string> argv, const std::string& config) {
  for (auto& a : argv) {
    for (std::size_t at = a.find("{config}"); at != std::string::npos; at = a.find("{config}", at + config.size()))
      a.replace(at, 8, config);
  }
  return argv;
}

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

// The variables a launch script reads its node count and GPUs per node from
// (`--nnodes $NUM_NODES`, `--nproc_per_node $PROCESSES_PER_NODE`): each gets
// the run's value, since the job's own environment names them NNODES and
// GPUS_PER_NODE. Slurm's own variables are Slurm's to set.
void export_node_variables(const recipe::Recipe& r, const RunSpec& s, std::map<std::string, std::string>& env) {
  auto names_in = [](const std::string& raw) {
    std::vector<std::string> out;
    for (std::size_t at = raw.find('$'); at != std::string::npos; at = raw.find('$', at + 1)) {
      std::size_t b = at + 1 + (at + 1 < raw.size() && raw[at + 1] == '{');
      std::size_t e = b;
      while (e < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[e])) || raw[e] == '_')) ++e;
      if (e > b && !std::isdigit(static_cast<unsigned char>(raw[b]))) out.push_back(raw.substr(b, e - b));
    }
    return out;
  };
  for (const auto& [lever, value] : {std::pair{"nodes", s.nodes}, std::pair{"gpus_per_node", s.gpus_per_node}}) {
    auto e = r.find_named(lever);
    if (!e) continue;
    for (const auto& name : names_in(e->raw)) {
      if (name.rfind("SLURM_", 0) != 0) env.emplace(name, std::to_string(value));
    }
  }
}

}  // namespace

std::vector<std::string> default_launch_command(const recipe::Recipe& r) {
  using recipe::Framework;
  switch (r.framework()) {
    case Framework::Megatron:
      if (r.dialect() == "script") return {"bash", "{config}"};
      return {"torchrun", "pretrain_gpt.py", "--yaml-cfg", "{config}"};
    case Framework::Bridge: return {"torchrun", "scripts/training/run_recipe.py", "--config-file", "{config}"};
    case Framework::Torchtitan: return {"torchrun", "-m", "torchtitan.train", "--job.config_file", "{config}"};
    case Framework::AutoModel: return {"torchrun", "-m", "nemo_automodel.cli.app", "{config}"};
    case Framework::Axolotl: return {"torchrun", "-m", "axolotl.cli.train", "{config}"};
    case Framework::HyperPod: return {};
  }
  return {};
}

Launch prepare_launch(const gate::ApprovedRecipe& approved, const ClusterDefinition& cluster, const LaunchRequest& q) {
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

  if (cluster.payload == "sim") {
    // A mock cluster: the job prints the log the framework would, at the
    // simulated pace divided by the time scale. Nothing of the recipe's own
    // launch runs, so its container and environment are not asked for.
    s.command = sim_job_command(q, files.wrapper, cluster.time_scale, s.steps);
    s.per_node = false;
    s.workdir = dir;
    return Launch(approved, std::move(s), cluster.name, cluster.backend);
  }
  // In-process: nothing is executed.
  if (cluster.backend == "sim") return Launch(approved, std::move(s), cluster.name, cluster.backend);

  const std::vector<std::string> argv = l.command.empty() ? default_launch_command(recipe) : l.command;
  if (argv.empty())
    throw InputError({recipe.wrapper_path(), 0, 0}, "launch.command",
                     fmt::format("{} recipes have no standard launch; say the command in the wrapper's launch.command",
                                 recipe::framework_title(recipe.framework())));
  s.command = with_config(argv, files.config);
  s.env = l.env;
  export_node_variables(recipe, s, s.env);
  s.workdir = l.workdir;
  s.container_image = l.container_image;
  s.container_mounts = l.container_mounts;
  s.per_node = cluster.backend == "slurm";
  if (cluster.backend == "local") {
    if (s.nodes > 1)
      throw InputError({recipe.wrapper_path(), 0, 0}, "hardware.nodes",
                       fmt::format("cluster '{}' is this one machine; the recipe asks for {} nodes", cluster.name, s.nodes));
    // One node here: torchrun's own defaults for a single node.
    s.env.emplace("PET_NPROC_PER_NODE", std::to_string(s.gpus_per_node));
    s.env.emplace("PET_NNODES", "1");
  }
  return Launch(approved, std::move(s), cluster.name, cluster.backend);
}

}  // namespace attune::cluster
