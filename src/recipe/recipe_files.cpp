#include "attune/recipe/recipe_files.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "attune/recipe/yaml_document.h"
#include "attune/util/file.h"

namespace attune::recipe {

namespace {

std::string wrapper_text(const Recipe& r, const std::string& config_name) {
  YAML::Node w(YAML::NodeType::Map);
  w["framework"] = to_string(r.framework());
  if (!r.options().framework_version.empty()) w["framework_version"] = r.options().framework_version;
  w["config"] = config_name;
  if (!r.options().model.empty()) w["model"] = r.options().model;  // else the file itself says
  YAML::Node hw(YAML::NodeType::Map);
  if (!r.hardware().gpu.empty()) hw["gpu"] = r.hardware().gpu;
  if (r.hardware().nodes > 0) hw["nodes"] = r.hardware().nodes;
  if (r.hardware().gpus_per_node > 0) hw["gpus_per_node"] = r.hardware().gpus_per_node;
  if (hw.size() > 0) w["hardware"] = hw;
  const YAML::Node launch = launch_settings_yaml(r.launch());
  if (launch.size() > 0) w["launch"] = launch;
  const YAML::Node measure = measure_settings_yaml(r.measure());
  if (measure.size() > 0) w["measure"] = measure;
  YAML::Emitter out;
  out << w;
  return "# attune wrapper: the recipe as launched (written by attune)\n" + std::string(out.c_str()) + "\n";
}

// A recipe kept as the wrapper's own command line is written as the wrapper
// with its edits; what the run was asked for beside it (flags' hardware and
// model) goes into its fields, each edited in place.
std::string command_wrapper_text(const Recipe& r) {
  auto w = YamlDocument::parse(r.wrapper_path(), r.document().text());
  auto put = [&](const char* key, const Value& v) {
    const auto e = w->find(key);
    if (!e || !e->value.same_as(v)) w->set(key, v);
  };
  if (!r.options().model.empty()) put("model", Value::string(r.options().model));
  if (!r.hardware().gpu.empty()) put("hardware.gpu", Value::string(r.hardware().gpu));
  if (r.hardware().nodes > 0) put("hardware.nodes", Value::integer(r.hardware().nodes));
  if (r.hardware().gpus_per_node > 0) put("hardware.gpus_per_node", Value::integer(r.hardware().gpus_per_node));
  return w->text();
}

}  // namespace

std::string edited_config_destination(const Recipe& recipe, const std::string& out) {
  if (recipe.wrapper_path().empty()) return out;
  std::error_code ec;
  if (std::filesystem::equivalent(out, recipe.wrapper_path(), ec)) return recipe.config_path();
  return out;
}

FileEdit edit_recipe_file(const std::string& file, const RecipeOptions& options, const std::string& lever,
                          const std::string& value, bool allow_new_key, const std::string& out) {
  Recipe r = Recipe::load(file, options);
  FileEdit e{r.set(lever, value, allow_new_key), ""};
  if (out.empty()) return e;
  e.written = edited_config_destination(r, out);
  write_file_atomic(e.written, r.document().text());
  return e;
}

WrittenRecipe write_recipe_files(const Recipe& recipe, const std::string& dir, bool durable) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path source(recipe.config_path());
  const std::string name = source.filename().string();
  WrittenRecipe out;
  out.dir = std::filesystem::absolute(dir).lexically_normal().string();
  out.config = (std::filesystem::path(out.dir) / name).string();
  out.wrapper = (std::filesystem::path(out.dir) / (source.stem().string() + ".attune.yaml")).string();
  out.launched = out.config;
  if (recipe.document().format() == Format::Command) {
    out.wrapper = out.config;  // one file: the wrapper is the recipe
    write_file_atomic(out.config, command_wrapper_text(recipe), durable);
    return out;
  }
  write_file_atomic(out.config, recipe.document().text(), durable);
  write_file_atomic(out.wrapper, wrapper_text(recipe, name), durable);
  if (const auto launched = recipe.adapter().launched_file(recipe, out.dir)) {
    out.launched = (std::filesystem::path(out.dir) / launched->name).string();
    write_file_atomic(out.launched, launched->text, durable);
  }
  return out;
}

}  // namespace attune::recipe
