// FrameworkLaunch: how a recipe's framework is started, as that framework's
// own users start it — the launch contract each framework adapter owns:
// the entry point and how the config reaches it, the versions the contract is
// written for, what the process needs in its environment, what must run
// before training, and how the framework logs. docs/frameworks.md states each
// contract with the framework file and version every fact comes from.
//
// The cluster module asks for the launch of a recipe it has written to a run
// directory and adds only what the cluster decides (the rendezvous, the
// scheduler's request, a mock cluster's emulators). The wrapper's
// `launch.command` replaces the contract's argv (with `{config}`,
// `{config_dir}`, `{config_name}` and `{run_dir}` filled in); its
// `launch.env`, `launch.workdir` and `launch.args` are the user's and win.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe/framework.h"
#include "attune/recipe/recipe_files.h"

namespace attune::recipe {

struct FrameworkLaunch {
  std::vector<std::string> command;               // argv; never run through a shell
  std::map<std::string, std::string> env;         // the process's environment from the recipe and the contract
  std::vector<std::string> unset_env;             // removed from the process's environment
  std::vector<std::vector<std::string>> prepare;  // run once, on one node, before training; each must succeed
  std::string workdir;                            // where the command starts ("" = the run directory)
};

// A framework's contract as documentation: what `attune levers` and errors say.
struct LaunchContract {
  Framework framework;
  std::string_view entry;     // how it is started, e.g. "torchrun pretrain_gpt.py <flags from MODEL_ARGS>"
  std::string_view versions;  // what the contract is written for
  std::string_view logs;      // who prints a step and how often
};
const LaunchContract& launch_contract(Framework framework);

// The launch of `recipe` as written to `files` (write_recipe_files). Throws
// InputError naming the file and key when it cannot be launched as written:
// no entry point for it (a HyperPod recipe without a training command, a
// Megatron-Bridge override file that does not name its recipe), an entry
// point that needs the framework's checkout and no launch.workdir, a launch
// script that submits its own jobs.
FrameworkLaunch framework_launch(const Recipe& recipe, const WrittenRecipe& files);

// The placeholders of the wrapper's launch.command filled in: "{config}" the
// file the training process reads, "{config_dir}" and "{config_name}" its
// folder and name, "{run_dir}" the run directory.
std::vector<std::string> fill_placeholders(std::vector<std::string> argv, const WrittenRecipe& files);

}  // namespace attune::recipe
