#include "attune/cluster/cluster_config.h"

#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "attune/util/error.h"
#include "attune/util/yaml_input.h"
#include "attune/util/file.h"

namespace attune::cluster {

namespace {

std::string one_of(const std::string& file, const YAML::Node& n, const std::string& key,
                   const std::vector<std::string>& allowed) {
  const std::string v = yaml_scalar(file, n, key);
  for (const auto& a : allowed) {
    if (v == a) return v;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw InputError(yaml_where(file, n), key, "expected one of " + list + ", got '" + v + "'");
}

void read_field(const std::string& file, const std::string& prefix, const std::string& key, const YAML::Node& v,
                ClusterDefinition& d) {
  const std::string path = prefix + key;
  if (key == "backend") d.backend = one_of(file, v, path, {"sim", "local", "slurm"});
  else if (key == "partition") d.partition = yaml_scalar(file, v, path);
  else if (key == "account") d.account = yaml_scalar(file, v, path);
  else if (key == "qos") d.qos = yaml_scalar(file, v, path);
  else if (key == "container") d.container = one_of(file, v, path, {"none", "pyxis"});
  else if (key == "slurm_conf") d.slurm_conf = yaml_scalar(file, v, path);
  else if (key == "payload") d.payload = one_of(file, v, path, {"command", "sim"});
  else if (key == "time_scale") {
    double t = 0;
    try {
      t = v.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(t > 0)) throw InputError(yaml_where(file, v), path, "expected a positive number");
    d.time_scale = t;
  } else if (key == "partitions") {
    if (!v.IsMap()) throw InputError(yaml_where(file, v), path, "expected a mapping {partition: gpu type}");
    for (const auto& kv : v) d.partitions[yaml_key(file, kv.first, path)] = yaml_scalar(file, kv.second, path);
  } else {
    throw InputError(yaml_where(file, v), path,
                     "unknown key (expected backend, partition, account, qos, partitions, container, time_scale, "
                     "payload, slurm_conf)");
  }
}

// The mock Slurm that scripts/mock-slurm/start.sh runs on this machine.
ClusterDefinition mock_definition() {
  ClusterDefinition mock;
  mock.name = "mock";
  mock.backend = "slurm";
  mock.partition = "gpu";
  mock.account = "attune";
  mock.partitions = {{"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"}};
  mock.time_scale = 60;
  mock.payload = "sim";
  const char* dir = std::getenv("ATTUNE_MOCK_SLURM_DIR");
  mock.slurm_conf = std::string(dir && *dir ? dir : "/tmp/attune-mock-slurm") + "/etc/slurm.conf";
  return mock;
}

std::vector<ClusterDefinition> builtins() {
  ClusterDefinition sim;
  sim.name = "sim";
  sim.backend = "sim";
  ClusterDefinition local;
  local.name = "local";
  local.backend = "local";
  return {sim, local, mock_definition()};
}

void put(std::vector<ClusterDefinition>& all, ClusterDefinition d) {
  for (auto& existing : all) {
    if (existing.name == d.name) {
      existing = std::move(d);
      return;
    }
  }
  all.push_back(std::move(d));
}

}  // namespace

std::vector<ClusterDefinition> parse_cluster_definitions(const std::string& name, const std::string& yaml_text) {
  const YAML::Node root = load_yaml(name, yaml_text);
  std::vector<ClusterDefinition> all = builtins();
  if (root.IsNull()) return all;
  if (!root.IsMap() || !root["clusters"]) throw InputError({name, 1, 1}, "clusters", "expected a top-level 'clusters:'");
  const YAML::Node clusters = root["clusters"];
  if (!clusters.IsMap()) throw InputError(yaml_where(name, clusters), "clusters", "expected a mapping of cluster names");
  for (const auto& c : clusters) {
    ClusterDefinition d;
    d.name = yaml_key(name, c.first, "clusters");
    const std::string prefix = "clusters." + d.name + ".";
    if (!c.second.IsMap()) throw InputError(yaml_where(name, c.second), "clusters." + d.name, "expected a mapping");
    for (const auto& kv : c.second) read_field(name, prefix, yaml_key(name, kv.first, "clusters." + d.name), kv.second, d);
    if (d.backend.empty()) throw InputError(yaml_where(name, c.second), prefix + "backend", "missing: sim, local or slurm");
    put(all, std::move(d));
  }
  return all;
}

std::vector<ClusterDefinition> load_cluster_definitions(const std::string& path, bool is_default_location) {
  if (!std::filesystem::exists(path)) {
    if (is_default_location) return builtins();
    throw InputError({path, 0, 0}, "--clusters", "no such file");
  }
  return parse_cluster_definitions(path, read_file(path));
}

std::string default_clusters_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/attune/clusters.yaml";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/attune/clusters.yaml";
}

const ClusterDefinition& find_cluster(const std::vector<ClusterDefinition>& all, const std::string& name) {
  std::string known;
  for (const auto& d : all) {
    if (d.name == name) return d;
    known += (known.empty() ? "" : ", ") + d.name;
  }
  throw InputError({}, "--cluster", "no cluster '" + name + "' (known: " + known + ")");
}

}  // namespace attune::cluster
