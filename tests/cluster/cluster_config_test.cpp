#include "attune/cluster/cluster_config.h"

#include <gtest/gtest.h>

#include "attune/util/error.h"

namespace attune::cluster {
namespace {

TEST(ClusterConfig, BuiltInsWithoutAFileAndUserDefinitionsOnTop) {
  const auto builtin = parse_cluster_definitions("c.yaml", "");
  ASSERT_EQ(builtin.size(), 3u);
  EXPECT_EQ(find_cluster(builtin, "sim").backend, "sim");
  EXPECT_EQ(find_cluster(builtin, "local").backend, "local");
  const ClusterDefinition& builtin_mock = find_cluster(builtin, "mock");
  EXPECT_EQ(builtin_mock.backend, "slurm");
  EXPECT_EQ(builtin_mock.payload, "sim");
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
  ASSERT_EQ(all.size(), 3u);  // mock and sim replaced by the file's
  const auto& mock = find_cluster(all, "mock");
  EXPECT_EQ(mock.backend, "slurm");
  EXPECT_EQ(mock.partition, "gpu");
  EXPECT_EQ(mock.account, "attune");
  EXPECT_EQ(mock.qos, "normal");
  EXPECT_EQ(mock.partitions.at("b200"), "b200");
  EXPECT_EQ(mock.container, "pyxis");
  EXPECT_DOUBLE_EQ(mock.time_scale, 60);
  EXPECT_EQ(mock.payload, "sim");
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
  EXPECT_EQ(load_cluster_definitions("/nonexistent/attune/clusters.yaml", true).size(), 3u);
  EXPECT_THROW(load_cluster_definitions("/nonexistent/attune/clusters.yaml", false), InputError);
}

}  // namespace
}  // namespace attune::cluster
