// The HyperPod recipes' launch contract (Slurm orchestration): the launcher
// (main.py) resolves the recipe into `<run.name>_hydra.yaml`, writes
// train_script.sh, which exports its environment, unsets SLURM_NTASKS, and
// runs the training adapter's entry script for the model family under
// torchrun with --config-path/--config-name. attune does the same with the
// recipe as launched; its own rendezvous replaces the script's.
#include <filesystem>

#include "adapters.h"
#include "attune/util/error.h"
#include "attune/util/text.h"
#include "hyperpod_resolve.h"

namespace attune::recipe {

namespace {

// launcher/nemo/recipe_stages.py + constants.py: the entry script by model
// family; a family the table does not know runs the custom-model script.
std::string entry_script(const Recipe& recipe) {
  const std::string type = to_lower(value_text(recipe.find("model.model_type")));
  if (type.rfind("llama", 0) == 0) return "examples/llama/llama_pretrain.py";
  if (type.rfind("mixtral", 0) == 0) return "examples/mixtral/mixtral_pretrain.py";
  if (type.rfind("mistral", 0) == 0) return "examples/mistral/mistral_pretrain.py";
  if (type.rfind("deepseek", 0) == 0 || type.rfind("qwen", 0) == 0) return "examples/deepseek/deepseek_pretrain.py";
  return "examples/custom_model/custom_pretrain.py";
}

void refuse_unlaunchable(const Recipe& recipe) {
  if (recipe.dialect() == "checkpointless")
    throw InputError({recipe.config_path(), 0, 0}, "run.model_type",
                     "HyperPod checkpointless recipes run only on Kubernetes clusters: the launcher refuses "
                     "cluster=slurm");
  if (recipe.dialect() == "nemo1")
    throw InputError({recipe.config_path(), 0, 0}, "run.model_type",
                     "the HyperPod launcher stops on this NeMo recipe before it writes a job (it has no "
                     "run.model_type: TypeError: argument of type 'NoneType' is not iterable)");
}

}  // namespace

std::optional<LaunchedFile> HyperPodAdapter::launched_file(const Recipe& recipe, const std::string& dir) const {
  if (recipe.dialect() != "smp" && recipe.dialect() != "llmft") return std::nullopt;
  const std::string base = recipe.launch().base_results_dir.empty() ? dir : recipe.launch().base_results_dir;
  const hyperpod::Resolved r =
      hyperpod::resolve_recipe(recipe.config_path(), recipe.document().text(), base, recipe.dialect() == "llmft");
  const std::string name = r.run_name.empty() ? "my-example-run" : r.run_name;
  if (name.find('/') != std::string::npos)
    throw InputError({recipe.config_path(), 0, 0}, "run.name", "a run name is a file name: '" + name + "' holds a '/'");
  return LaunchedFile{name + "_hydra.yaml", r.text};
}

FrameworkLaunch HyperPodAdapter::launch(const Recipe& recipe, const WrittenRecipe& files) const {
  refuse_unlaunchable(recipe);
  FrameworkLaunch fl;
  const std::filesystem::path launched(files.launched);
  const std::vector<std::string> config = {"--config-path=" + launched.parent_path().string(),
                                           "--config-name=" + launched.filename().string()};
  if (recipe.launch().command.empty()) {
    if (recipe.dialect() == "llmft") {
      // The LLMFT trainer is a module of AWS's private container image.
      fl.command = {"torchrun", "-m", "amzn_awsllm_fine_tuning.train_hp"};
    } else {
      required_workdir(recipe, "the HyperPod training adapter's entry scripts (" + entry_script(recipe) +
                                   ") are in its checkout (sagemaker-hyperpod-training-adapter-for-nemo)");
      fl.command = {"torchrun", entry_script(recipe)};
    }
    fl.command.insert(fl.command.end(), config.begin(), config.end());
  }
  // train_script.sh: PyTorch Lightning takes SLURM_NTASKS for its own launcher's.
  if (to_lower(value_text(recipe.find("run.model_type"))).rfind("neuron", 0) != 0) fl.unset_env.push_back("SLURM_NTASKS");
  fl.env["NCCL_DEBUG"] = "WARN";  // the launcher's config.yaml env_vars
  if (recipe.plan().nodes > 1) {
    // launcher/nemo/stages.py set_multinode_envs (the network's own, FI_PROVIDER
    // and NCCL_SOCKET_IFNAME, are the cluster definition's env).
    fl.env["NCCL_IGNORE_DISABLED_P2P"] = "1";
    fl.env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1";
    fl.env["TORCH_DIST_INIT_BARRIER"] = "1";
    fl.env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1";
  }
  return fl;
}

}  // namespace attune::recipe
