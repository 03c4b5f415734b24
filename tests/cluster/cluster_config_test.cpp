#include "attune/cluster/cluster_config.h"

#include "attune/cluster/backend_registry.h"

#include <gtest/gtest.h>

#include "attune/util/error.h"

namespace attune::cluster {
namespace {

TEST(ClusterConfig, BuiltInsWithoutAFileAndUserDefinitionsOnTop) {
  const auto builtin = parse_cluster_definitions("c.yaml", "");
  ASSERT_EQ(builtin.size(), 4u);
  EXPECT_EQ(find_cluster(builtin, "sim").backend, "sim");
  EXPECT_EQ(find_cluster(builtin, "local").backend, "local");
  const ClusterDefinition& builtin_mock = find_cluster(builtin, "mock");
  EXPECT_EQ(builtin_mock.backend, "slurm");
  EXPECT_EQ(builtin_mock.payload, Payload::Sim);
  EXPECT_EQ(builtin_mock.time_scale, 60);
  EXPECT_EQ(builtin_mock.partitions.at("b200"), "b200");
  EXPECT_NE(builtin_mock.slurm_conf.find("/etc/slurm.conf"), std::string::npos);

  const auto all = parse_cluster_definitions("c.yaml", R"(
clusters:
  mock:
    backend: slurm
    partition: gpu
    account: attune
    qos: normal
    partitions: {h100: h100, b200: b200}
    container: pyxis
    time_scale: 60
    payload: sim
    slurm_conf: /tmp/mock/slurm.conf
  sim:
    backend: sim
    time_scale: 2
)");
  ASSERT_EQ(all.size(), 4u);  // mock and sim replaced by the file's
  const auto& mock = find_cluster(all, "mock");
  EXPECT_EQ(mock.backend, "slurm");
  EXPECT_EQ(mock.partition, "gpu");
  EXPECT_EQ(mock.account, "attune");
  EXPECT_EQ(mock.qos, "normal");
  EXPECT_EQ(mock.partitions.at("b200"), "b200");
  EXPECT_EQ(mock.container, "pyxis");
  EXPECT_DOUBLE_EQ(mock.time_scale, 60);
  EXPECT_EQ(mock.payload, Payload::Sim);
  EXPECT_EQ(mock.slurm_conf, "/tmp/mock/slurm.conf");
  EXPECT_DOUBLE_EQ(find_cluster(all, "sim").time_scale, 2);  // overrides the built-in
}

void expect_error(const std::string& text, const std::string& key, int line) {
  try {
    parse_cluster_definitions("c.yaml", text);
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
  }
}

// What a real cluster needs its jobs to carry, each an argv or a value,
// never shell text; the mock's emulated twin is built in.
TEST(ClusterConfig, SlurmAndContainerOptions) {
  const auto all = parse_cluster_definitions("c.yaml", R"(
clusters:
  p5:
    backend: slurm
    constraint: p5&efa
    typed_gres: false
    cpus_per_task: 24
    env: {FI_PROVIDER: efa, NCCL_SOCKET_IFNAME: "^lo,docker"}
    rendezvous_port: job
    sbatch_args: [--reservation=llm, "--comment=a b"]
    srun_args: [--mpi=none]
    container: pyxis
    mount_home: false
  emu:
    backend: local
    payload: emulate
    emulators: /opt/attune/emulators
    rendezvous_port: 41000
)");
  const auto& p5 = find_cluster(all, "p5");
  EXPECT_EQ(p5.constraint, "p5&efa");
  EXPECT_FALSE(p5.typed_gres);
  EXPECT_EQ(p5.cpus_per_task, 24);
  EXPECT_EQ(p5.env.at("NCCL_SOCKET_IFNAME"), "^lo,docker");
  EXPECT_EQ(p5.rendezvous_port, 0);
  EXPECT_EQ(p5.sbatch_args, (std::vector<std::string>{"--reservation=llm", "--comment=a b"}));
  EXPECT_EQ(p5.srun_args, (std::vector<std::string>{"--mpi=none"}));
  EXPECT_FALSE(p5.mount_home);
  const auto& emu = find_cluster(all, "emu");
  EXPECT_EQ(emu.payload, Payload::Emulate);
  EXPECT_EQ(emulators_dir(emu), "/opt/attune/emulators");
  EXPECT_EQ(emu.rendezvous_port, 41000);
  // Defaults: no constraint, typed gres, port 29500; the built-in emulated mock.
  const auto builtin = parse_cluster_definitions("c.yaml", "");
  EXPECT_EQ(find_cluster(builtin, "local").rendezvous_port, 29500);
  EXPECT_EQ(find_cluster(builtin, "local").constraint, "");
  const auto& me = find_cluster(builtin, "mock-emulate");
  EXPECT_EQ(me.backend, "slurm");
  EXPECT_EQ(me.payload, Payload::Emulate);
  EXPECT_EQ(me.rendezvous_port, 0);  // the mock's nodes share one machine
}

TEST(ClusterConfig, BadSlurmOptionsNameTheirKey) {
  expect_error("clusters:\n  a:\n    backend: slurm\n    cpus_per_task: 0\n", "clusters.a.cpus_per_task", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    rendezvous_port: 70000\n", "clusters.a.rendezvous_port", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    sbatch_args: \"--x=1 --y=2\"\n", "clusters.a.sbatch_args", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    srun_args: [mpi]\n", "clusters.a.srun_args", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    env: {1X: y}\n", "clusters.a.env.1X", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    payload: gpu\n", "clusters.a.payload", 4);
  expect_error("clusters:\n  a:\n    backend: sim\n    payload: emulate\n", "clusters.a.payload", 3);
  expect_error("clusters:\n  a:\n    backend: local\n    container: pyxis\n", "clusters.a.container", 3);
}

TEST(ClusterConfig, BadInputNamesFileLineAndKey) {
  expect_error("clusters:\n  a:\n    backend: kubernetes\n", "clusters.a.backend", 3);
  expect_error("clusters:\n  a:\n    backend: slurm\n    partiton: gpu\n", "clusters.a.partiton", 4);
  expect_error("clusters:\n  a:\n    backend: slurm\n    time_scale: fast\n", "clusters.a.time_scale", 4);
  expect_error("clusters:\n  a:\n    partition: gpu\n", "clusters.a.backend", 3);
  expect_error("nodes: 3\n", "clusters", 1);
}

TEST(ClusterConfig, UnknownNameListsTheKnownOnesAndMissingFiles) {
  const auto all = parse_cluster_definitions("c.yaml", "");
  try {
    find_cluster(all, "p5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sim, local"), std::string::npos) << e.what();
  }
  EXPECT_EQ(load_cluster_definitions("/nonexistent/attune/clusters.yaml", true).size(), 4u);
  EXPECT_THROW(load_cluster_definitions("/nonexistent/attune/clusters.yaml", false), InputError);
}

}  // namespace
}  // namespace attune::cluster
