#include "attune/recipe/framework_launch.h"

#include <filesystem>

#include "adapters/adapters.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::recipe {

namespace {

// What each contract is written for; docs/frameworks.md cites the source of every fact.
const LaunchContract kContracts[] = {
    {Framework::Megatron,
     "launch script: bash SCRIPT [launch.args] in the Megatron-LM checkout; CI YAML: torchrun pretrain_gpt.py with "
     "MODEL_ARGS as flags and ENV_VARS exported",
     "Megatron-LM d98e8a6 (2026-08-22, after core_v0.19.0)", "the last rank prints every --log-interval iterations"},
    {Framework::AutoModel, "torchrun -m nemo_automodel.cli.app CONFIG",
     "NeMo AutoModel 0.5.0 (main 36044ad, 2026-08-22)", "rank 0 prints every step, on stderr"},
    {Framework::Torchtitan,
     "TOML: torchrun -m torchtitan.train --job.config_file CONFIG; Python configs: the wrapper's command with "
     "--module/--config and --section.key overrides",
     "torchtitan v0.2.2 (TOML, 238fa99) and main b5bcd76 (Python configs)",
     "every rank prints step 1 and every metrics.log_freq steps"},
    {Framework::HyperPod,
     "the recipe resolved as the HyperPod launcher resolves it, handed to the training adapter: torchrun "
     "examples/<model>/<model>_pretrain.py --config-path=DIR --config-name=NAME, SLURM_NTASKS unset",
     "HyperPod recipes v1 (bb4da66) and HEAD 2631995; training adapter 0f91fdd (v1.4.0)",
     "global rank 0's progress bar, refreshed every step"},
    {Framework::Axolotl,
     "axolotl preprocess CONFIG once (datasets to tokenise), then torchrun -m axolotl.cli.train CONFIG with a "
     "30-minute rendezvous join timeout",
     "Axolotl 0.18.0 (067b021, 2026-07-24)", "global rank 0 prints a step dict every logging_steps"},
    {Framework::Bridge,
     "torchrun scripts/training/run_recipe.py --recipe launch.recipe ++KEY=VALUE... (the override file's leaves), or "
     "the per-example script the wrapper's command names",
     "Megatron-Bridge 0.7.0 (main 067f987, 2026-08-22)", "the last rank prints every logger.log_interval iterations"},
};

}  // namespace

const LaunchContract& launch_contract(Framework framework) {
  for (const auto& c : kContracts) {
    if (c.framework == framework) return c;
  }
  return kContracts[0];
}

std::vector<std::string> fill_placeholders(std::vector<std::string> argv, const WrittenRecipe& files) {
  const std::filesystem::path launched(files.launched);
  const std::pair<std::string, std::string> fills[] = {
      {"{config}", files.launched},
      {"{config_dir}", launched.parent_path().string()},
      {"{config_name}", launched.filename().string()},
      {"{run_dir}", files.dir},
  };
  for (auto& a : argv) {
    for (const auto& [key, value] : fills) {
      for (std::size_t at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size()))
        a.replace(at, key.size(), value);
    }
  }
  return argv;
}

std::string required_workdir(const Recipe& recipe, const std::string& what_needs_it) {
  const std::string& w = recipe.launch().workdir;
  if (!w.empty()) return w;
  throw InputError({recipe.wrapper_path().empty() ? recipe.config_path() : recipe.wrapper_path(), 0, 0},
                   "launch.workdir",
                   what_needs_it + ": set launch.workdir in the attune wrapper to that directory on the cluster");
}

FrameworkLaunch framework_launch(const Recipe& recipe, const WrittenRecipe& files) {
  FrameworkLaunch fl = recipe.adapter().launch(recipe, files);
  const LaunchSettings& l = recipe.launch();
  // The user's command takes placeholders; the contract's holds the paths
  // already (a recipe's value is never rewritten).
  if (!l.command.empty()) fl.command = fill_placeholders(l.command, files);
  else fl.command.insert(fl.command.end(), l.args.begin(), l.args.end());
  for (const auto& [name, value] : l.env) fl.env[name] = value;  // the user's own, over the contract's
  if (!l.workdir.empty()) fl.workdir = l.workdir;
  return fl;
}

std::optional<LaunchedFile> Adapter::launched_file(const Recipe&, const std::string&) const { return std::nullopt; }

}  // namespace attune::recipe
