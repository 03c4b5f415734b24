// Megatron-Bridge's launch contract: scripts/training/run_recipe.py takes the
// recipe function by name (--recipe) and the settings as trailing KEY=VALUE
// Hydra overrides (OmegaConf struct mode); it has no option for a YAML file.
// An override file is applied to a recipe function by the per-example script
// that loads it (tutorials/recipes/llama/02_pretrain_with_yaml.py
// --config-file ...), which the wrapper's launch.command names instead.
#include <map>

#include "adapters.h"
#include "attune/util/error.h"

namespace attune::recipe {

namespace {

// A value in Hydra's override grammar: strings single-quoted (backslash and
// quote escaped), so no value is read as another type or as grammar.
std::string hydra_value(const Value& v) {
  switch (v.kind) {
    case ValueKind::Null: return "null";
    case ValueKind::Bool: return v.as_bool().value_or(false) ? "true" : "false";
    case ValueKind::Int:
    case ValueKind::Float: return v.text;
    case ValueKind::List: {
      std::string out = "[";
      for (std::size_t i = 0; i < v.items.size(); ++i) out += (i ? "," : "") + hydra_value(v.items[i]);
      return out + "]";
    }
    case ValueKind::String: break;
  }
  std::string out = "'";
  for (char c : v.text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// The file's settings as overrides, in file order, each `++key=value`: set
// whether or not the recipe's config tree holds the key at that path, as the
// per-example scripts' YAML merge does (Bridge's Llama recipes keep
// tensor_model_parallel_size under model.transformer, so a plain
// `model.tensor_model_parallel_size=2` fails OmegaConf's struct mode, and a key
// the dataclasses lack is then warned about and skipped, as in a YAML merge).
// A list's scalar items are gathered into one `++key=[a,b]`; a list of
// mappings has no KEY=VALUE form.
std::vector<std::string> overrides_of(const Recipe& recipe) {
  std::vector<std::string> out;
  std::map<std::string, std::size_t> list_at;  // list key -> its override's index
  std::map<std::string, std::vector<Value>> lists;
  for (const auto& e : recipe.document().entries()) {
    const auto bracket = e.path.find('[');
    if (bracket == std::string::npos) {
      out.push_back("++" + e.path + "=" + hydra_value(e.value));
      continue;
    }
    const std::string key = e.path.substr(0, bracket);
    const auto close = e.path.find(']', bracket);
    if (close == std::string::npos || close + 1 != e.path.size())
      throw InputError({recipe.config_path(), e.line, 0}, e.path,
                       "a list of mappings cannot be passed to scripts/training/run_recipe.py as KEY=VALUE: give "
                       "launch.command the script that applies this file (e.g. [torchrun, "
                       "tutorials/recipes/llama/02_pretrain_with_yaml.py, --config-file, \"{config}\"])");
    if (!list_at.count(key)) {
      list_at[key] = out.size();
      out.emplace_back();
    }
    lists[key].push_back(e.value);
  }
  for (const auto& [key, at] : list_at) out[at] = "++" + key + "=" + hydra_value(Value::list(lists[key]));
  return out;
}

}  // namespace

FrameworkLaunch BridgeAdapter::launch(const Recipe& recipe, const WrittenRecipe&) const {
  FrameworkLaunch fl;
  if (!recipe.launch().command.empty()) return fl;
  const std::string& name = recipe.launch().recipe;
  if (name.empty())
    throw InputError({recipe.wrapper_path().empty() ? recipe.config_path() : recipe.wrapper_path(), 0, 0},
                     "launch.recipe",
                     "a Megatron-Bridge override file does not say which recipe it applies to: set launch.recipe to "
                     "the recipe function (e.g. llama32_1b_pretrain_config) for scripts/training/run_recipe.py, or "
                     "launch.command to the script that loads the file (e.g. [torchrun, "
                     "tutorials/recipes/llama/02_pretrain_with_yaml.py, --config-file, \"{config}\"])");
  required_workdir(recipe, "scripts/training/run_recipe.py is a script in the Megatron-Bridge checkout");
  fl.command = {"torchrun", "scripts/training/run_recipe.py", "--recipe", name};
  for (auto& o : overrides_of(recipe)) fl.command.push_back(std::move(o));
  return fl;
}

}  // namespace attune::recipe
