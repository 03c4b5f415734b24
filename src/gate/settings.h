// Settings of a recipe in the gate's key space (internal to the gate): every
// leaf key of the file, spelled as the lever catalogs and gate rules spell it,
// so aliases (`--global_batch_size`), Hydra override forms (`+key`, `++key`,
// `recipes.key`, flat dotted YAML keys) and framework nesting (Megatron's
// MODEL_ARGS) compare as one. A setting written more than once with different
// values (a flag repeated in a script, a flat key beside its nested form) is
// kept as a conflict: which value the framework takes is not certain.
#pragma once

#include <map>
#include <string>

#include "attune/recipe/recipe.h"

namespace attune::gate {

struct Setting {
  recipe::Entry entry;       // for a conflict, value is the list of the distinct values
  bool conflicting = false;
};

// One recipe as the gate reads it: its settings and plan, computed once per check.
struct RecipeView {
  explicit RecipeView(const recipe::Recipe& r);
  const recipe::Recipe& recipe;
  std::map<std::string, Setting> settings;
  recipe::Plan plan;
};

std::string normalize_key(const recipe::Recipe& r, const std::string& path);
// HyperPod LLMFT: beside each key a scale_config block overrides, the value in
// effect at the recipe's node count, as "<key> (effective)"; rule_key() strips
// the marker so the key's rules apply to it.
extern const char* const kEffectiveSuffix;
std::string rule_key(const std::string& key);
std::map<std::string, Setting> settings_of(const recipe::Recipe& r);
// Same meaning and same kind of scalar: a quoted "0.0001" is not the number 0.0001.
bool equivalent(const recipe::Value& a, const recipe::Value& b);

}  // namespace attune::gate
