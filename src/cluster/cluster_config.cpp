#include "attune/cluster/cluster_config.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "attune/cluster/backend_registry.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/yaml_input.h"

// The source tree's tools/ folder, compiled in: the emulators live in its
// emulators/ folder. $ATTUNE_TOOLS_DIR overrides it.
#ifndef ATTUNE_TOOLS_DIR
#define ATTUNE_TOOLS_DIR ""
#endif

namespace attune::cluster {

namespace {

bool read_bool(const std::string& file, const YAML::Node& n, const std::string& key) {
  const std::string v = yaml_scalar(file, n, key);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw InputError(yaml_where(file, n), key, "expected true or false, got '" + v + "'");
}

int read_int(const std::string& file, const YAML::Node& n, const std::string& key, int least, int most) {
  const std::string v = yaml_scalar(file, n, key);
  long long x = -1;
  bool digits = !v.empty() && v.size() <= 9;
  for (char c : v) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) x = std::stoll(v);
  if (!digits || x < least || x > most)
    throw InputError(yaml_where(file, n), key,
                     "expected a whole number from " + std::to_string(least) + " to " + std::to_string(most) +
                         ", got '" + v + "'");
  return static_cast<int>(x);
}

// A list of argv elements: each a scalar without control characters (an
// element is one argument, never shell text, but a newline in it would be a
// second line of the batch script's comment).
std::vector<std::string> read_args(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) throw InputError(yaml_where(file, n), key, "expected a list of arguments, e.g. [--reservation=x]");
  std::vector<std::string> out;
  for (const auto& item : n) {
    std::string a = yaml_scalar(file, item, key);
    for (char c : a) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw InputError(yaml_where(file, item), key, "an argument holds a control character");
    }
    if (a.empty() || a[0] != '-')
      throw InputError(yaml_where(file, item), key, "expected an option starting with '-', got '" + a + "'");
    out.push_back(std::move(a));
  }
  return out;
}

std::map<std::string, std::string> read_env(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsMap()) throw InputError(yaml_where(file, n), key, "expected a mapping {NAME: value}");
  std::map<std::string, std::string> out;
  for (const auto& kv : n) {
    const std::string name = yaml_key(file, kv.first, key);
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) throw InputError(yaml_where(file, kv.first), key + "." + name, "not a valid environment variable name");
    out[name] = yaml_scalar(file, kv.second, key + "." + name);
  }
  return out;
}

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

void read_backend(const std::string& file, const YAML::Node& v, const std::string& path, ClusterDefinition& d) {
  const std::string name = yaml_scalar(file, v, path);
  if (!find_backend(name))
    throw InputError(yaml_where(file, v), path, "expected one of " + backend_names() + ", got '" + name + "'");
  d.backend = name;
}

void read_payload(const std::string& file, const YAML::Node& v, const std::string& path, ClusterDefinition& d) {
  const std::string name = yaml_scalar(file, v, path);
  const PayloadTraits* p = find_payload(name);
  if (!p) throw InputError(yaml_where(file, v), path, "expected one of " + payload_names() + ", got '" + name + "'");
  d.payload = p->payload;
}

void read_rendezvous_port(const std::string& file, const YAML::Node& v, const std::string& path,
                          ClusterDefinition& d) {
  if (v.IsScalar() && v.Scalar() == "job") {
    d.rendezvous_port = 0;
    return;
  }
  try {
    d.rendezvous_port = read_int(file, v, path, 1, 65535);
  } catch (const InputError&) {
    throw InputError(yaml_where(file, v), path, "expected a port from 1 to 65535, or `job` (20000 + job id % 20000)");
  }
}

void read_field(const std::string& file, const std::string& prefix, const std::string& key, const YAML::Node& v,
                ClusterDefinition& d) {
  const std::string path = prefix + key;
  if (key == "backend") read_backend(file, v, path, d);
  else if (key == "partition") d.partition = yaml_scalar(file, v, path);
  else if (key == "account") d.account = yaml_scalar(file, v, path);
  else if (key == "qos") d.qos = yaml_scalar(file, v, path);
  else if (key == "constraint") d.constraint = yaml_scalar(file, v, path);
  else if (key == "typed_gres") d.typed_gres = read_bool(file, v, path);
  else if (key == "cpus_per_task") d.cpus_per_task = read_int(file, v, path, 1, 4096);
  else if (key == "env") d.env = read_env(file, v, path);
  else if (key == "rendezvous_port") read_rendezvous_port(file, v, path, d);
  else if (key == "sbatch_args") d.sbatch_args = read_args(file, v, path);
  else if (key == "srun_args") d.srun_args = read_args(file, v, path);
  else if (key == "container") d.container = one_of(file, v, path, {"none", "pyxis"});
  else if (key == "mount_home") d.mount_home = read_bool(file, v, path);
  else if (key == "slurm_conf") d.slurm_conf = yaml_scalar(file, v, path);
  else if (key == "payload") read_payload(file, v, path, d);
  else if (key == "emulators") d.emulators = yaml_scalar(file, v, path);
  else if (key == "time_scale") {
    double t = 0;
    try {
      t = v.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(t > 0) || !(t < 1e9)) throw InputError(yaml_where(file, v), path, "expected a positive number");
    d.time_scale = t;
  } else if (key == "partitions") {
    if (!v.IsMap()) throw InputError(yaml_where(file, v), path, "expected a mapping {partition: gpu type}");
    for (const auto& kv : v) d.partitions[yaml_key(file, kv.first, path)] = yaml_scalar(file, kv.second, path);
  } else {
    throw InputError(yaml_where(file, v), path,
                     "unknown key (expected backend, partition, account, qos, partitions, constraint, typed_gres, "
                     "cpus_per_task, env, rendezvous_port, sbatch_args, srun_args, container, mount_home, "
                     "time_scale, payload, emulators, slurm_conf)");
  }
}

// The mock Slurm that scripts/mock-slurm/start.sh runs on this machine. Its
// nodes are all this one host, so two jobs at once must not share a
// rendezvous port.
ClusterDefinition mock_definition(std::string name, Payload payload) {
  ClusterDefinition mock;
  mock.name = std::move(name);
  mock.backend = "slurm";
  mock.partition = "gpu";
  mock.account = "attune";
  mock.partitions = {{"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"}};
  mock.time_scale = 60;
  mock.payload = payload;
  mock.rendezvous_port = 0;
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
  return {sim, local, mock_definition("mock", Payload::Sim), mock_definition("mock-emulate", Payload::Emulate)};
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

// A definition whose options cannot apply to its backend is refused where it is written.
void check_definition(const std::string& file, const YAML::Node& where, const std::string& prefix,
                      const ClusterDefinition& d) {
  const BackendTraits* b = find_backend(d.backend);
  if (b && b->in_process && d.payload != Payload::Command)
    throw InputError(yaml_where(file, where), prefix + "payload",
                     "the " + std::string(b->name) + " backend runs the simulator in-process: it has no payload");
  if (d.container == "pyxis" && b && !b->scheduled)
    throw InputError(yaml_where(file, where), prefix + "container",
                     "pyxis is a Slurm plugin: only a slurm cluster can run containers");
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
    if (d.backend.empty())
      throw InputError(yaml_where(name, c.second), prefix + "backend", "missing: one of " + backend_names());
    check_definition(name, c.second, prefix, d);
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

std::string emulators_dir(const ClusterDefinition& def) {
  if (!def.emulators.empty()) return def.emulators;
  if (const char* e = std::getenv("ATTUNE_TOOLS_DIR"); e && *e) return std::string(e) + "/emulators";
  const std::string built = ATTUNE_TOOLS_DIR;
  return built.empty() ? "" : built + "/emulators";
}

}  // namespace attune::cluster
