// The launch contracts of the frameworks started as a Python module under
// torchrun: torchtitan's TOML generation, NeMo AutoModel and Axolotl
// (docs/frameworks.md: each fact with its source).
#include "adapters.h"

#include "attune/recipe/command_document.h"

namespace attune::recipe {

// torchtitan v0.2.x: torchtitan/config/manager.py reads `--job.config_file`.
// The Python-config generation has no config file: the recipe is the command
// line (`--module M --config C` and overrides), as edited.
FrameworkLaunch TorchtitanAdapter::launch(const Recipe& recipe, const WrittenRecipe& files) const {
  FrameworkLaunch fl;
  if (const auto* command = dynamic_cast<const CommandDocument*>(&recipe.document())) {
    fl.command = fill_placeholders(command->argv(), files);
    return fl;
  }
  fl.command = {"torchrun", "-m", "torchtitan.train", "--job.config_file", files.launched};
  return fl;
}

// slurm.sub: `torchrun ... -m nemo_automodel.cli.app CONFIG`. AutoModel has no
// section that sets the process's environment (the recipe ignores `ci:`), so
// the recipe's environment is the launch's own (the wrapper's launch.env).
FrameworkLaunch AutoModelAdapter::launch(const Recipe&, const WrittenRecipe& files) const {
  FrameworkLaunch fl;
  fl.command = {"torchrun", "-m", "nemo_automodel.cli.app", files.launched};
  return fl;
}

namespace {

// Datasets Axolotl tokenises before training (`datasets:` or
// `test_datasets:`); a streamed `pretraining_dataset` is tokenised on the fly.
bool has_datasets_to_prepare(const Recipe& recipe) {
  for (const auto& e : recipe.document().entries()) {
    if (e.path.rfind("datasets[", 0) == 0 || e.path.rfind("test_datasets[", 0) == 0) return true;
  }
  return false;
}

}  // namespace

// examples/slurm/axolotl.slurm: `srun axolotl preprocess train.yaml` before
// training, and a rendezvous join timeout of 1800 s, since rank 0 may
// tokenise before the other nodes join.
FrameworkLaunch AxolotlAdapter::launch(const Recipe& recipe, const WrittenRecipe& files) const {
  FrameworkLaunch fl;
  fl.command = {"torchrun", "-m", "axolotl.cli.train", files.launched};
  if (has_datasets_to_prepare(recipe)) fl.prepare.push_back({"axolotl", "preprocess", files.launched});
  fl.env["PET_RDZV_CONF"] = "join_timeout=1800";
  return fl;
}

}  // namespace attune::recipe
