// `attune cluster check NAME`: whether a cluster definition can run anything
// (commands found, controller reachable, partitions and GPU types exist), and
// `attune cluster list`: the clusters attune knows.
#include <filesystem>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/cli/flag_checks.h"
#include "attune/cluster/backend_registry.h"
#include "attune/cluster/cluster_check.h"
#include "attune/cluster/cluster_config.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::cli {

namespace {

struct ClusterArgs {
  std::string name;
  std::string clusters_file;
  bool json = false;
};

std::vector<cluster::ClusterDefinition> definitions(const ClusterArgs& a) {
  const bool default_location = a.clusters_file.empty();
  return cluster::load_cluster_definitions(default_location ? cluster::default_clusters_path() : a.clusters_file,
                                           default_location);
}

// NAME must be a defined cluster: if not, say where attune looked (the
// built-ins and the clusters file) and which names there are.
void refuse_undefined(const std::vector<cluster::ClusterDefinition>& defs, const ClusterArgs& a) {
  std::vector<std::string> names;
  for (const auto& d : defs) {
    if (d.name == a.name) return;
    names.push_back(d.name);
  }
  const bool default_location = a.clusters_file.empty();
  const std::string path = default_location ? cluster::default_clusters_path() : a.clusters_file;
  const std::string file = default_location && !std::filesystem::exists(path)
                               ? path + " (the default clusters file, which does not exist)"
                               : path;
  throw InputError({}, "",
                   fmt::format("cluster '{}' is not defined: looked in the built-in clusters and in {}; the defined "
                               "clusters are {}",
                               a.name, file, join_names(names)));
}

int run_check(const ClusterArgs& a) {
  const auto defs = definitions(a);
  refuse_undefined(defs, a);
  const cluster::ClusterDefinition& def = cluster::find_cluster(defs, a.name);
  cluster::CheckContext c;
  c.attune_binary = current_executable("");
  const auto items = cluster::check_cluster(def, c);
  const bool passed = cluster::check_passed(items);
  if (a.json) {
    print_json({{"cluster", def.name}, {"backend", def.backend}, {"passed", passed}, {"checks", cluster::to_json(items)}});
  } else {
    fmt::print("cluster {} ({})\n", def.name, def.backend);
    for (const auto& i : items) fmt::print("  {:<4}  {:<20} {}\n", to_string(i.level), i.what, i.detail);
    fmt::print("{}\n", passed ? "ready" : "NOT READY");
  }
  return passed ? 0 : 1;
}

nlohmann::json definition_json(const cluster::ClusterDefinition& d) {
  return {{"name", d.name},
          {"backend", d.backend},
          {"partition", d.partition},
          {"account", d.account},
          {"qos", d.qos},
          {"partitions", d.partitions},
          {"constraint", d.constraint},
          {"typed_gres", d.typed_gres},
          {"cpus_per_task", d.cpus_per_task},
          {"env", d.env},
          {"rendezvous_port", d.rendezvous_port > 0 ? nlohmann::json(d.rendezvous_port) : nlohmann::json("job")},
          {"sbatch_args", d.sbatch_args},
          {"srun_args", d.srun_args},
          {"container", d.container},
          {"mount_home", d.mount_home},
          {"time_scale", d.time_scale},
          {"payload", cluster::payload_traits(d.payload).name},
          {"emulators", d.payload == cluster::Payload::Emulate ? cluster::emulators_dir(d) : ""},
          {"slurm_conf", d.slurm_conf}};
}

int run_list(const ClusterArgs& a) {
  const auto defs = definitions(a);
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : defs) j.push_back(definition_json(d));
    print_json(j);
    return 0;
  }
  for (const auto& d : defs) {
    fmt::print("{:<12} {:<6} {}{}{}\n", d.name, d.backend, d.partition.empty() ? "" : "partition " + d.partition,
               d.time_scale != 1 ? fmt::format(" time_scale {}", d.time_scale) : "",
               d.payload == cluster::Payload::Command ? "" : " payload " + std::string(cluster::payload_traits(d.payload).name));
  }
  return 0;
}

void add_common(CLI::App& cmd, ClusterArgs& a) {
  cmd.add_option("--clusters", a.clusters_file,
                 "Cluster definitions (YAML; default ~/.config/attune/clusters.yaml when it exists)")
      ->check(existing_file());
  cmd.add_flag("--json", a.json, "Print JSON");
}

}  // namespace

void add_cluster_command(CLI::App& app) {
  CLI::App* cluster = app.add_subcommand("cluster", "The clusters attune runs on: check one, list them");
  cluster->require_subcommand(1);

  auto check = std::make_shared<ClusterArgs>();
  CLI::App* c = cluster->add_subcommand(
      "check",
      "Verify a cluster: for Slurm, the client commands, the controller, each partition and its GPU type, the account "
      "and accounting; for local, the GPUs; for a mock cluster, the attune binary its jobs run. Exit status 0 when "
      "nothing failed, 1 otherwise");
  c->add_option("NAME", check->name, "Cluster name (sim, local, mock, or one in the clusters file)")->required();
  add_common(*c, *check);
  c->callback([check]() { command_status() = run_check(*check); });

  auto list = std::make_shared<ClusterArgs>();
  CLI::App* l = cluster->add_subcommand("list", "List the clusters: the built-in ones and the clusters file's");
  add_common(*l, *list);
  l->callback([list]() { command_status() = run_list(*list); });
}

}  // namespace attune::cli
