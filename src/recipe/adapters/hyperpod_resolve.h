// Internal to the HyperPod adapter: a recipe resolved as the HyperPod
// launcher resolves it before the training adapter reads it. The launcher
// (main.py, Hydra) mounts the recipe under `recipes` (and copies it to
// `training`), fills `base_results_dir` from its own config, and saves the
// recipe with every `${...}` interpolation replaced by its value (OmegaConf:
// `${a.b}`, relative `${.x}` / `${..x}`, `${oc.env:NAME,default}`, and the
// launcher's `${multiply:a,b}`); a value interpolated into a string is the
// value's Python text (None, True, 1e-05). docs/frameworks.md cites each.
#pragma once

#include <string>

namespace attune::recipe::hyperpod {

struct Resolved {
  std::string run_name;  // run.name after resolution
  std::string text;      // the resolved recipe as YAML
};

// Resolves `text` (the recipe file `file`) with the launcher's top-level
// `base_results_dir`. Throws InputError naming the file, line and key for an
// interpolation that does not resolve, as the launcher's
// InterpolationKeyError does ("Interpolation key 'x' not found").
Resolved resolve_recipe(const std::string& file, const std::string& text, const std::string& base_results_dir,
                        bool add_model_section);

}  // namespace attune::recipe::hyperpod
