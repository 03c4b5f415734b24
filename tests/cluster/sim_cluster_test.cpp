#include "attune/cluster/sim/sim_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "attune/diagnose/diagnosis.h"
#include "attune/util/file.h"
#include "cluster_test_launch.h"

namespace attune::cluster {
namespace {

class SimClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_sim_cluster_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The Llama 3 8B script on 8 H100s at TP 2, 20 steps, prepared for the sim
  // cluster (its log: <dir>/<name>/run.log).
  Launch launch(const std::string& name, TestRun t = {}) {
    t.gpus_per_node = 8;
    t.tp = 2;
    t.steps = 20;
    return test_launch(dir_, name, test_cluster("sim", "sim"), t);
  }
  TestRun limited(double time_limit_s) {
    TestRun t;
    t.time_limit_s = time_limit_s;
    return t;
  }
  std::filesystem::path dir_;
};

TEST_F(SimClusterTest, RunCompletesWithALogTheDiagnoserReads) {
  SimCluster cluster;
  const Launch l = launch("ok", limited(3600));
  const RunSpec& s = l.spec();
  const RunId id = cluster.submit(l);
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
  // Start-up is 60 s; the slow first step does not fit.
  const RunId id = cluster.submit(launch("short", limited(90)));
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Timeout);
  EXPECT_DOUBLE_EQ(st.elapsed_s, 90);
  EXPECT_EQ(cluster.log(id).find("iteration"), std::string::npos);
}

TEST_F(SimClusterTest, HiddenTruthFailsARunTheNominalClusterFits) {
  sim::Perturbation tight;
  tight.memory = 10;
  SimCluster cluster(tight);
  const RunId id = cluster.submit(launch("oom", limited(3600)));
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_NE(st.reason.find("oom"), std::string::npos) << st.reason;
  EXPECT_NE(cluster.log(id).find("CUDA out of memory"), std::string::npos);
}

TEST_F(SimClusterTest, SameSeedSameLogAndRunsDrawTheirOwnNoise) {
  SimCluster a(sim::Perturbation{}, 7), b(sim::Perturbation{}, 7);
  const RunId a1 = a.submit(launch("a1", limited(3600)));
  const RunId a2 = a.submit(launch("a2", limited(3600)));
  const RunId b1 = b.submit(launch("b1", limited(3600)));
  EXPECT_EQ(a.log(a1), b.log(b1));
  EXPECT_NE(a.log(a1), a.log(a2));
}

// The truth's failure rules strike at their step with the framework's error.
TEST_F(SimClusterTest, ATruthFailureRuleFailsTheRunAtItsStep) {
  SimCluster cluster(sim::parse_perturbation("truth.yaml", R"(
failures:
  - {when: {tp: 2}, kind: illegal_memory_access, at_step: 3, why: "a TP2 kernel bug in this build"}
)"));
  const RunId id = cluster.submit(launch("bad", limited(3600)));
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::Failed);
  EXPECT_NE(st.reason.find("illegal_memory_access"), std::string::npos) << st.reason;
  EXPECT_NE(st.reason.find("at step 3"), std::string::npos) << st.reason;
  const std::string log = cluster.log(id);
  EXPECT_NE(log.find("an illegal memory access was encountered"), std::string::npos) << log;
  EXPECT_NE(log.find("iteration        2/"), std::string::npos);
  EXPECT_EQ(log.find("iteration        3/"), std::string::npos);
  // The same rule on another layout does not fire.
  SimCluster other(sim::parse_perturbation("truth.yaml", "failures:\n  - {when: {tp: 4}, kind: hang}\n"));
  EXPECT_EQ(other.poll(other.submit(launch("fine", limited(3600)))).state, RunState::Completed);
}

// A hang: no step after the stall, and attune's watchdog cancels the run
// before NCCL's 10-minute timeout would; the log ends at the last step.
TEST_F(SimClusterTest, AHangIsCancelledByTheWatchdog) {
  SimWatchdog watchdog;
  watchdog.min_hang_s = 120;
  SimCluster cluster(sim::parse_perturbation("truth.yaml", "failures:\n  - {when: {tp: 2}, kind: hang, at_step: 5}\n"),
                     1, watchdog);
  TestRun t = limited(3600);
  t.expected_step_s = 5;
  const Launch l = launch("hang", t);
  const RunSpec& s = l.spec();
  const RunStatus st = cluster.poll(cluster.submit(l));
  EXPECT_EQ(st.state, RunState::Hang);
  EXPECT_NE(st.reason.find("no new step for 120 s"), std::string::npos) << st.reason;
  const std::string log = read_file(s.log_path);
  EXPECT_NE(log.find("iteration        4/"), std::string::npos);
  EXPECT_EQ(log.find("Watchdog caught"), std::string::npos);  // cancelled before NCCL's timeout
}

TEST_F(SimClusterTest, ANodeFailureEndsInNodeFail) {
  sim::Perturbation flaky;
  flaky.noise.node_failure_per_node_hour = 3600;
  SimCluster cluster(flaky);
  const RunId id = cluster.submit(launch("node", limited(3600)));
  const RunStatus st = cluster.poll(id);
  EXPECT_EQ(st.state, RunState::NodeFail);
  EXPECT_NE(cluster.log(id).find("DUE TO NODE FAILURE"), std::string::npos);
}

// Every launch draws its own run-level noise from the campaign's seed.
TEST_F(SimClusterTest, LaunchSeedsAreDistinctAndReproducible) {
  EXPECT_EQ(launch_seed(7, 1), launch_seed(7, 1));
  EXPECT_NE(launch_seed(7, 1), launch_seed(7, 2));
  EXPECT_NE(launch_seed(7, 1), launch_seed(8, 1));
  sim::Perturbation noisy;
  noisy.noise.run_cv = 0.05;
  SimCluster cluster(noisy, 3);
  std::set<double> elapsed;
  for (int i = 0; i < 5; ++i)
    elapsed.insert(cluster.poll(cluster.submit(launch("n" + std::to_string(i), limited(3600)))).elapsed_s);
  EXPECT_EQ(elapsed.size(), 5u);
}

// The simulator runs launches prepared for it: a local launch's command is
// not the simulated run, so it is refused.
TEST_F(SimClusterTest, ALaunchPreparedForAnotherClusterIsRefused) {
  SimCluster cluster;
  TestRun t;
  t.command = {"/bin/true"};
  const Launch local = test_launch(dir_, "local-run", test_cluster("local", "local"), t);
  try {
    cluster.submit(local);
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("prepared for cluster 'local' (backend local), not for a sim cluster"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(local.spec().log_path));
}

TEST_F(SimClusterTest, AttachAfterARestartReadsHowTheRunEnded) {
  const Launch l = launch("restart", limited(3600));
  const RunSpec& s = l.spec();
  RunId id;
  RunStatus before;
  {
    SimCluster first;
    id = first.submit(l);
    before = first.poll(id);
  }
  SimCluster second;
  second.attach(id, s);
  const RunStatus after = second.poll(id);
  EXPECT_EQ(after.state, before.state);
  EXPECT_DOUBLE_EQ(after.elapsed_s, before.elapsed_s);
  RunSpec never = s;
  never.name = "never";
  never.log_path = (dir_ / "never.log").string();
  EXPECT_THROW(second.attach(RunId{"sim", "99"}, never), ClusterError);
  EXPECT_THROW(second.poll(RunId{"sim", "98"}), ClusterError);
}

}  // namespace
}  // namespace attune::cluster
