// measure_of: a run the scheduler ended is classified by the scheduler's own
// word (sacct's OUT_OF_MEMORY, NODE_FAIL, TIMEOUT; the watchdog's hang) when
// the framework printed nothing, and over what the log shows of the
// consequences (the other ranks' NCCL errors after a node died).
#include "attune/campaign/run_measure.h"

#include <gtest/gtest.h>

namespace attune::campaign {
namespace {

DirectoryRunResult ended(cluster::RunState state, const std::string& reason,
                         std::optional<diagnose::FailureKind> logged = std::nullopt) {
  DirectoryRunResult r;
  r.status.state = state;
  r.status.reason = reason;
  r.status.elapsed_s = 100;
  if (logged) {
    diagnose::Diagnosis d;
    d.failure = diagnose::Failure{*logged, 12, "the log's line", 3};
    r.diagnosis = d;
  }
  return r;
}

TEST(RunMeasure, TheSchedulersOwnWordClassifiesARunTheFrameworkSaidNothingAbout) {
  const RunMeasure oom = measure_of(ended(cluster::RunState::OutOfMemory, "OUT_OF_MEMORY"), {});
  EXPECT_FALSE(oom.ok);
  EXPECT_EQ(oom.failure, "oom");  // a class the policy reads, not the state's name
  EXPECT_EQ(oom.evidence, "OUT_OF_MEMORY");
  EXPECT_EQ(measure_of(ended(cluster::RunState::NodeFail, "NODE_FAIL"), {}).failure, "node_failure");
  EXPECT_EQ(measure_of(ended(cluster::RunState::Timeout, "TIMEOUT"), {}).failure, "time_limit");
  EXPECT_EQ(measure_of(ended(cluster::RunState::Failed, "exit 1"), {}).failure, "failed");
}

TEST(RunMeasure, TheSchedulersWordWinsOverTheConsequencesTheLogShows) {
  const RunMeasure node =
      measure_of(ended(cluster::RunState::NodeFail, "NODE_FAIL", diagnose::FailureKind::NcclError), {});
  EXPECT_EQ(node.failure, "node_failure");
  EXPECT_EQ(node.evidence, "NODE_FAIL");
  // A cause the log names stands: an OOM on the GPU under a job the scheduler timed out.
  const RunMeasure gpu_oom = measure_of(ended(cluster::RunState::Timeout, "TIMEOUT", diagnose::FailureKind::Oom), {});
  EXPECT_EQ(gpu_oom.failure, "oom");
  EXPECT_EQ(gpu_oom.evidence, "the log's line");
  // The same class: the log's evidence is kept.
  const RunMeasure hang = measure_of(ended(cluster::RunState::Hang, "no new step", diagnose::FailureKind::Hang), {});
  EXPECT_EQ(hang.failure, "hang");
  EXPECT_EQ(hang.evidence, "the log's line");
}

}  // namespace
}  // namespace attune::campaign
