#include "attune/recipe/wrapper_file.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "attune/recipe/command_document.h"
#include "attune/recipe/framework.h"
#include "attune/util/error.h"
#include "attune/util/yaml_input.h"

namespace attune::recipe {

namespace {

int positive_int(const std::string& path, const YAML::Node& n, const std::string& key) {
  try {
    int v = n.as<int>();
    if (v > 0) return v;
  } catch (const YAML::Exception&) {
  }
  throw InputError(yaml_where(path, n), key, "expected a positive integer, got '" + YAML::Dump(n) + "'");
}

void read_hardware(const std::string& path, const YAML::Node& hw, WrapperFile& out) {
  if (!hw.IsMap()) throw InputError(yaml_where(path, hw), "hardware", "expected a mapping {gpu, nodes, gpus_per_node}");
  for (const auto& kv : hw) {
    std::string key = yaml_key(path, kv.first, "hardware");
    if (key == "gpu") {
      std::string g = yaml_scalar(path, kv.second, "hardware.gpu");
      auto norm = normalize_gpu(g);
      if (!norm) throw InputError(yaml_where(path, kv.second), "hardware.gpu", "expected h100, h200 or b200, got '" + g + "'");
      out.hardware.gpu = *norm;
    } else if (key == "nodes") {
      out.hardware.nodes = positive_int(path, kv.second, "hardware.nodes");
    } else if (key == "gpus_per_node") {
      out.hardware.gpus_per_node = positive_int(path, kv.second, "hardware.gpus_per_node");
    } else {
      throw InputError(yaml_where(path, kv.first), "hardware." + key, "unknown key; expected gpu, nodes or gpus_per_node");
    }
  }
}

}  // namespace

bool is_wrapper_file(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    return root.IsMap() && root["config"] && root["config"].IsScalar() && (root["framework"] || root["hardware"]);
  } catch (const YAML::Exception&) {
    return false;
  }
}

WrapperFile parse_wrapper_file(const std::string& path, const std::string& text) {
  YAML::Node root = load_yaml(path, text);
  if (!root.IsMap()) throw InputError({path, 1, 1}, "", "expected a mapping at the top level");
  WrapperFile out;
  out.path = path;
  for (const auto& kv : root) {
    std::string key = yaml_key(path, kv.first, "(top level)");
    const YAML::Node& v = kv.second;
    if (key == "framework") {
      out.framework = yaml_scalar(path, v, key);
      if (!parse_framework(out.framework)) {
        throw InputError(yaml_where(path, v), key,
                         "unknown framework '" + out.framework +
                             "'; expected megatron, automodel, torchtitan, hyperpod, axolotl or bridge");
      }
    } else if (key == "framework_version") {
      out.framework_version = yaml_scalar(path, v, key);
      if (out.framework_version.empty()) throw InputError(yaml_where(path, v), key, "expected the framework's version, e.g. 0.16.4 or 25.04");
    } else if (key == "config") {
      std::filesystem::path cfg = yaml_scalar(path, v, key);
      if (cfg.is_relative()) cfg = std::filesystem::path(path).parent_path() / cfg;
      out.config = cfg.lexically_normal().string();
    } else if (key == "model") {
      out.model = yaml_scalar(path, v, key);
    } else if (key == "hardware") {
      read_hardware(path, v, out);
    } else if (key == "launch") {
      out.launch = parse_launch_settings(path, v);
    } else if (key == "measure") {
      out.measure = parse_measure_settings(path, v);
    } else {
      throw InputError(yaml_where(path, kv.first), key,
                       "unknown key; expected framework, framework_version, config, model, hardware, launch or measure");
    }
  }
  // A torchtitan command line in launch.command is the recipe itself.
  if (out.config.empty() && !CommandDocument::holds_command_recipe(text))
    throw InputError({path, 1, 1}, "config",
                     "missing: the framework's own recipe file (or, for torchtitan's Python configs, a launch.command "
                     "naming --module and --config)");
  return out;
}

}  // namespace attune::recipe
