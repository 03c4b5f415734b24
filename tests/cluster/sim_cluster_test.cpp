#include "attune/cluster/sim/sim_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "attune/diagnose/diagnosis.h"
#include "attune/gate/correctness_gate.h"
#include "cluster_test_recipe.h"
#include "attune/util/file.h"

namespace attune::cluster {
namespace {

gate::ApprovedRecipe approved() { return approved_llama3_8b(8, 2); }

class SimClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_sim_cluster_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RunSpec spec(const std::string& name) {
    RunSpec s;
    s.name = name;
    s.log_path = (dir_ / (name + ".log")).string();
    s.steps = 20;
    return s;
  }
  std::filesystem::path dir_;
};

TEST_F(SimClusterTest, RunCompletesWithALogTheDiagnoserReads) {
  SimCluster cluster;
  const RunSpec s = spec("ok");
  const RunId id = cluster.submit(approved(), s);
  EXPECT_EQ(id.cluster, "sim");
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Completed);
  EXPECT_GT(st.elapsed_s, 60);  // start-up and 20 steps of simulated time
  EXPECT_NEAR(gpu_hours(s, st.elapsed_s), 8 * st.elapsed_s / 3600, 1e-9);
  diagnose::DiagnoseOptions d;
  d.world = 8;
  d.seq_len = 8192;
  d.global_batch = 64;
  d.gpu = "h100";
  const diagnose::Diagnosis diagnosis = diagnose::diagnose_logs({s.log_path}, d);
  EXPECT_FALSE(diagnosis.failure.has_value());
  EXPECT_NE(cluster.log(id).find("iteration"), std::string::npos);
}

TEST_F(SimClusterTest, TimeLimitCutsTheRunAndChargesTheLimit) {
  SimCluster cluster;
  RunSpec s = spec("short");
  s.time_limit_s = 90;  // start-up is 60 s; the slow first step does not fit
  const RunId id = cluster.submit(approved(), s);
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Timeout);
  EXPECT_DOUBLE_EQ(st.elapsed_s, 90);
  EXPECT_EQ(cluster.log(id).find("iteration"), std::string::npos);
}

TEST_F(SimClusterTest, HiddenTruthFailsARunTheNominalClusterFits) {
  sim::Perturbation tight;
  tight.memory = 10;
  SimCluster cluster(tight);
  const RunId id = cluster.submit(approved(), spec("oom"));
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_NE(st.reason.find("oom"), std::string::npos) << st.reason;
  EXPECT_NE(cluster.log(id).find("CUDA out of memory"), std::string::npos);
}

TEST_F(SimClusterTest, SameSeedSameLogAndRunsDrawTheirOwnNoise) {
  SimCluster a(sim::Perturbation{}, 7), b(sim::Perturbation{}, 7);
  const RunId a1 = a.submit(approved(), spec("a1"));
  const RunId a2 = a.submit(approved(), spec("a2"));
  const RunId b1 = b.submit(approved(), spec("b1"));
  EXPECT_EQ(a.log(a1), b.log(b1));
  EXPECT_NE(a.log(a1), a.log(a2));
}

TEST_F(SimClusterTest, AttachAfterARestartReadsHowTheRunEnded) {
  RunSpec s = spec("restart");
  RunId id;
  RunStatus before;
  {
    SimCluster first;
    id = first.submit(approved(), s);
    before = first.poll(id);
  }
  SimCluster second;
  second.attach(id, s);
  const RunStatus after = second.poll(id);
  EXPECT_EQ(after.state, before.state);
  EXPECT_DOUBLE_EQ(after.elapsed_s, before.elapsed_s);
  EXPECT_THROW(second.attach(RunId{"sim", "99"}, spec("never")), ClusterError);
  EXPECT_THROW(second.poll(RunId{"sim", "98"}), ClusterError);
}

}  // namespace
}  // namespace attune::cluster
