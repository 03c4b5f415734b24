#include "attune/recipe/launch_settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "attune/util/error.h"
#include "attune/util/yaml_input.h"

namespace attune::recipe {

namespace {

bool read_bool(const std::string& file, const YAML::Node& n, const std::string& key) {
  const std::string v = yaml_scalar(file, n, key);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw InputError(yaml_where(file, n), key, "expected true or false, got '" + v + "'");
}

std::vector<std::string> read_list(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) throw InputError(yaml_where(file, n), key, "expected a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(yaml_scalar(file, item, key));
  return out;
}

std::map<std::string, std::string> read_env(const std::string& file, const YAML::Node& n) {
  if (!n.IsMap()) throw InputError(yaml_where(file, n), "launch.env", "expected a mapping {NAME: value}");
  std::map<std::string, std::string> out;
  for (const auto& kv : n) {
    const std::string name = yaml_scalar(file, kv.first, "launch.env");
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) throw InputError(yaml_where(file, kv.first), "launch.env." + name, "not a valid environment variable name");
    out[name] = yaml_scalar(file, kv.second, "launch.env." + name);
  }
  return out;
}

void read_container(const std::string& file, const YAML::Node& n, LaunchSettings& s) {
  if (!n.IsMap()) throw InputError(yaml_where(file, n), "launch.container", "expected a mapping {image, mounts}");
  for (const auto& kv : n) {
    const std::string key = yaml_scalar(file, kv.first, "launch.container");
    if (key == "image") s.container_image = yaml_scalar(file, kv.second, "launch.container.image");
    else if (key == "mounts") s.container_mounts = read_list(file, kv.second, "launch.container.mounts");
    else throw InputError(yaml_where(file, kv.first), "launch.container." + key, "unknown key; expected image or mounts");
  }
}

void read_slurm(const std::string& file, const YAML::Node& n, LaunchSettings& s) {
  if (!n.IsMap()) throw InputError(yaml_where(file, n), "launch.slurm", "expected a mapping");
  for (const auto& kv : n) {
    const std::string key = yaml_scalar(file, kv.first, "launch.slurm");
    const std::string path = "launch.slurm." + key;
    if (key == "partition") s.partition = yaml_scalar(file, kv.second, path);
    else if (key == "account") s.account = yaml_scalar(file, kv.second, path);
    else if (key == "qos") s.qos = yaml_scalar(file, kv.second, path);
    else if (key == "constraint") s.constraint = yaml_scalar(file, kv.second, path);
    else if (key == "exclusive") s.exclusive = read_bool(file, kv.second, path);
    else if (key == "time_limit") {
      const std::string text = yaml_scalar(file, kv.second, path);
      s.time_limit_s = parse_time_limit_s(text);
      if (s.time_limit_s <= 0)
        throw InputError(yaml_where(file, kv.second), path,
                         "expected a duration such as 40m, 2h, 1:30:00, 1-00:00:00 or minutes, got '" + text + "'");
    } else {
      throw InputError(yaml_where(file, kv.first), path,
                       "unknown key; expected partition, account, qos, constraint, exclusive or time_limit");
    }
  }
}

int non_negative_int(const std::string& file, const YAML::Node& n, const std::string& key) {
  try {
    const int v = n.as<int>();
    if (v >= 0) return v;
  } catch (const YAML::Exception&) {
  }
  throw InputError(yaml_where(file, n), key, "expected a whole number >= 0");
}

// Digits only, as a number; -1 otherwise.
double number(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stod(s);
}

}  // namespace

double parse_time_limit_s(const std::string& text) {
  if (text.empty()) return -1;
  const char unit = text.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    const double v = number(text.substr(0, text.size() - 1));
    if (v < 0) return -1;
    return v * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
  }
  double days = 0;
  bool has_days = false;  // Slurm's D-H[:M[:S]]: after a dash, the first number is hours
  std::string rest = text;
  if (const auto dash = rest.find('-'); dash != std::string::npos) {
    days = number(rest.substr(0, dash));
    if (days < 0) return -1;
    has_days = true;
    rest = rest.substr(dash + 1);
  }
  std::vector<double> parts;
  std::size_t at = 0;
  while (true) {
    const auto colon = rest.find(':', at);
    const double v = number(rest.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (v < 0) return -1;
    parts.push_back(v);
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() > 3) return -1;
  if (parts.size() == 1) return has_days ? days * 86400 + parts[0] * 3600 : parts[0] * 60;  // Slurm: bare minutes
  if (parts.size() == 2) return has_days ? days * 86400 + parts[0] * 3600 + parts[1] * 60 : parts[0] * 60 + parts[1];
  return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2];
}

std::string format_time_limit(double seconds) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(seconds / 60.0 - 1e-9)));
  const long days = minutes / 1440, hours = minutes % 1440 / 60, mins = minutes % 60;
  char buf[48];
  if (days > 0) std::snprintf(buf, sizeof buf, "%ld-%02ld:%02ld:00", days, hours, mins);
  else std::snprintf(buf, sizeof buf, "%02ld:%02ld:00", hours, mins);
  return buf;
}

LaunchSettings parse_launch_settings(const std::string& file, const YAML::Node& node) {
  LaunchSettings s;
  if (node.IsNull()) return s;
  if (!node.IsMap()) throw InputError(yaml_where(file, node), "launch", "expected a mapping");
  for (const auto& kv : node) {
    const std::string key = yaml_scalar(file, kv.first, "launch");
    if (key == "command") {
      s.command = read_list(file, kv.second, "launch.command");
      if (s.command.empty() || s.command[0].empty())
        throw InputError(yaml_where(file, kv.second), "launch.command", "expected the program and its arguments");
    } else if (key == "args") {
      s.args = read_list(file, kv.second, "launch.args");
    } else if (key == "recipe") {
      s.recipe = yaml_scalar(file, kv.second, "launch.recipe");
    } else if (key == "base_results_dir") {
      s.base_results_dir = yaml_scalar(file, kv.second, "launch.base_results_dir");
    } else if (key == "workdir") {
      s.workdir = yaml_scalar(file, kv.second, "launch.workdir");
    } else if (key == "env") {
      s.env = read_env(file, kv.second);
    } else if (key == "container") {
      read_container(file, kv.second, s);
    } else if (key == "slurm") {
      read_slurm(file, kv.second, s);
    } else {
      throw InputError(yaml_where(file, kv.first), "launch." + key,
                       "unknown key; expected command, args, recipe, base_results_dir, workdir, env, container or "
                       "slurm");
    }
  }
  if (!s.command.empty() && !s.args.empty())
    throw InputError(yaml_where(file, node["args"]), "launch.args",
                     "launch.args are added to the framework's usual launch; with launch.command, write them in the "
                     "command");
  return s;
}

MeasureSettings parse_measure_settings(const std::string& file, const YAML::Node& node) {
  MeasureSettings m;
  if (node.IsNull()) return m;
  if (!node.IsMap()) throw InputError(yaml_where(file, node), "measure", "expected a mapping {steps, skip_first}");
  for (const auto& kv : node) {
    const std::string key = yaml_scalar(file, kv.first, "measure");
    if (key == "steps") m.steps = non_negative_int(file, kv.second, "measure.steps");
    else if (key == "skip_first") m.skip_first = non_negative_int(file, kv.second, "measure.skip_first");
    else throw InputError(yaml_where(file, kv.first), "measure." + key, "unknown key; expected steps or skip_first");
  }
  return m;
}

YAML::Node launch_settings_yaml(const LaunchSettings& s) {
  YAML::Node n(YAML::NodeType::Map);
  if (!s.command.empty()) {
    for (const auto& a : s.command) n["command"].push_back(a);
  }
  for (const auto& a : s.args) n["args"].push_back(a);
  if (!s.recipe.empty()) n["recipe"] = s.recipe;
  if (!s.base_results_dir.empty()) n["base_results_dir"] = s.base_results_dir;
  if (!s.workdir.empty()) n["workdir"] = s.workdir;
  for (const auto& [k, v] : s.env) n["env"][k] = v;
  if (!s.container_image.empty()) n["container"]["image"] = s.container_image;
  for (const auto& m : s.container_mounts) n["container"]["mounts"].push_back(m);
  YAML::Node slurm(YAML::NodeType::Map);
  if (!s.partition.empty()) slurm["partition"] = s.partition;
  if (!s.account.empty()) slurm["account"] = s.account;
  if (!s.qos.empty()) slurm["qos"] = s.qos;
  if (!s.constraint.empty()) slurm["constraint"] = s.constraint;
  if (!s.exclusive) slurm["exclusive"] = false;
  if (s.time_limit_s > 0) slurm["time_limit"] = std::to_string(static_cast<long>(std::ceil(s.time_limit_s))) + "s";
  if (slurm.size() > 0) n["slurm"] = slurm;
  return n;
}

YAML::Node measure_settings_yaml(const MeasureSettings& m) {
  YAML::Node n(YAML::NodeType::Map);
  if (m.steps > 0) n["steps"] = m.steps;
  if (m.skip_first > 0) n["skip_first"] = m.skip_first;
  return n;
}

}  // namespace attune::recipe
