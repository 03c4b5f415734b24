// The whole campaign loop (`attune tune`: baseline, proposals, admission,
// runs watched to their end, verdicts, verification, the summary) run in
// process on a fake cluster and a fake clock, the way ninja's builder runs
// with a fake disk and a fake command runner: hours of cluster time pass in
// milliseconds, and what each run measures is the test's own choice. The
// cluster prints Megatron-LM's iteration lines (training_log in
// megatron/training/training.py) for the recipe it was handed.
#include "attune/campaign/tune.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attune/cluster/cluster.h"
#include "attune/cluster/launch.h"
#include "attune/recipe/recipe.h"
#include "attune/util/clock.h"
#include "../fixtures/llama3_8b_script.h"
#include "../fixtures/scratch_dir.h"

namespace attune::campaign {
namespace {

// Time passes only when someone sleeps on it.
class FakeClock final : public Clock {
 public:
  double now_s() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void sleep_s(double seconds, const std::function<bool()>& interrupted) override {
    if (interrupted && interrupted()) return;
    std::lock_guard lock(mutex_);
    now_ += std::max(0.0, seconds);
  }

 private:
  std::mutex mutex_;
  double now_ = 1000;
};

// How a run of a recipe behaves on the fake cluster.
struct FakeBehaviour {
  double step_s = 1.0;      // every step's time
  int hang_after = -1;      // >= 0: no step after this many (the process stays up)
};

// Runs "start" at submit; a run's log holds the iterations its elapsed time
// has reached; a cancelled run stops where it was.
class FakeCluster final : public cluster::Cluster {
 public:
  FakeCluster(Clock& clock, std::function<FakeBehaviour(const recipe::Recipe&)> behaviour, int& submitted)
      : submitted_(submitted), clock_(clock), behaviour_(std::move(behaviour)) {}

  std::string name() const override { return "fake"; }
  cluster::RunId submit(const cluster::Launch& launch) override {
    std::lock_guard lock(mutex_);
    const std::string id = std::to_string(runs_.size() + 1);
    runs_[id] = {behaviour_(launch.recipe()), launch.spec().steps, clock_.now_s(), -1,
                 launch.recipe().plan().gbs, launch.spec().log_path};
    ++submitted_;
    return {"fake", id};
  }
  cluster::RunStatus poll(const cluster::RunId& id) override {
    std::lock_guard lock(mutex_);
    const Run& r = runs_.at(id.id);
    const double t = elapsed(r);
    if (r.cancelled_at >= 0) return {cluster::RunState::Cancelled, "cancelled", t};
    return {cluster::RunState::Running, "", t};
  }
  void cancel(const cluster::RunId& id) override {
    std::lock_guard lock(mutex_);
    Run& r = runs_.at(id.id);
    if (r.cancelled_at < 0) r.cancelled_at = clock_.now_s();
  }
  // The log as the run's file holds it by now (a real cluster's job writes
  // it on shared storage, where the diagnosis reads it).
  std::string log(const cluster::RunId& id) override {
    std::lock_guard lock(mutex_);
    const Run& r = runs_.at(id.id);
    std::string out = "using world size: 8, data-parallel size: 4, tensor-model-parallel size: 2\n";
    const int steps = steps_done(r);
    for (int i = 1; i <= steps; ++i)
      out += fmt::format(
          " [2026-12-03 10:00:00.000000] iteration {:>8}/{:>8} | consumed samples: {:>12} | elapsed time per iteration "
          "(ms): {:.1f} | learning rate: 3.000000E-04 | global batch size: {:>5} | lm loss: {:.6E} | loss scale: 1.0 | "
          "grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
          i, 1000, i * r.global_batch, 1000 * r.behaviour.step_s, r.global_batch, 10.0 - 0.01 * i);
    std::ofstream(r.log_path, std::ios::trunc) << out;
    return out;
  }
  void attach(const cluster::RunId&, const cluster::RunSpec&) override {}
  std::optional<cluster::RunId> find_run(const cluster::RunSpec&) override { return std::nullopt; }


 private:
  struct Run {
    FakeBehaviour behaviour;
    int steps = 0;
    double started = 0, cancelled_at = -1;
    long long global_batch = 0;
    std::string log_path;
  };
  double elapsed(const Run& r) { return (r.cancelled_at >= 0 ? r.cancelled_at : clock_.now_s()) - r.started; }
  int steps_done(const Run& r) {
    int n = static_cast<int>(std::floor(elapsed(r) / r.behaviour.step_s));
    if (r.behaviour.hang_after >= 0) n = std::min(n, r.behaviour.hang_after);
    return std::min(n, 1000);
  }

  int& submitted_;  // the test's count: the cluster goes with its campaign
  Clock& clock_;
  std::function<FakeBehaviour(const recipe::Recipe&)> behaviour_;
  std::mutex mutex_;
  std::map<std::string, Run> runs_;
};

class CampaignLoop : public ::testing::Test {
 protected:
  TuneResult tune(const std::function<FakeBehaviour(const recipe::Recipe&)>& behaviour, int max_trials = 4) {
    TuneRequest q;
    dir_.write("train.sh", test::llama3_8b_script(8, 2));
    q.file = dir_.write("train.attune.yaml",
                        "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n"
                        "hardware: {gpu: h100, nodes: 1, gpus_per_node: 8}\nlaunch: {workdir: /opt/megatron}\n");
    q.cluster = "local";
    q.clusters_file = dir_.write("clusters.yaml", "clusters: {}\n");
    q.budget_gpu_hours = 50;
    q.max_trials = max_trials;
    q.seed = 7;
    q.use_lessons = false;
    q.durable = false;
    q.out_dir = (dir_.path() / "campaign").string();
    TuneServices services;
    services.clock = &clock_;
    services.make_cluster = [&](const cluster::ClusterDefinition&, const cluster::SimulationContext&) {
      return std::make_unique<FakeCluster>(clock_, behaviour, submitted_);
    };
    const auto start = std::chrono::steady_clock::now();
    TuneResult r = run_tune(q, {}, services);
    real_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  nlohmann::json summary() const {
    std::ifstream in(dir_.path() / "campaign" / "summary.json");
    return nlohmann::json::parse(in);
  }

  test::ScratchDir dir_{"attune_campaign_loop"};
  FakeClock clock_;
  int submitted_ = 0;
  double real_seconds_ = 0;
};

// 65536 tokens/s/GPU at 1 s a step: 64 x 8192 tokens a step over 8 GPUs.
constexpr double kTokensAtOneSecond = 64.0 * 8192 / 8;

TEST_F(CampaignLoop, HoursOfClusterTimePassInMillisecondsAndEveryRunIsMeasuredAsTheClusterRanIt) {
  const double before = clock_.now_s();
  // Tensor parallel 1 runs 30% faster than the recipe's 2; everything else as fast.
  const TuneResult r = tune([](const recipe::Recipe& rc) {
    return FakeBehaviour{rc.plan().tp == 1 ? 0.7 : 1.0, -1};
  });
  EXPECT_EQ(r.launches, submitted_);
  EXPECT_GT(r.launches, 2);
  EXPECT_GT(clock_.now_s() - before, 0.7 * 50 * r.launches);  // each run's 50 steps took their cluster time
  EXPECT_LT(real_seconds_, 30.0);
  EXPECT_NEAR(r.baseline_tokens_per_s_per_gpu, kTokensAtOneSecond, 0.01 * kTokensAtOneSecond);
  // GPU-hours are the cluster's elapsed time on 8 GPUs, failed runs and start-up included.
  EXPECT_GT(r.gpu_hours, 8.0 * 0.7 * 50 * r.launches / 3600);
  EXPECT_LE(r.gpu_hours, r.budget_gpu_hours);
  EXPECT_EQ(summary()["launches"], r.launches);
  // Without noise, only the faster recipe wins; a candidate as fast as the
  // incumbent it was proposed from is rejected.
  bool tp = false;
  for (const BestEdit& e : r.best_edits) tp = tp || (e.key == "--tensor-model-parallel-size" && e.from == "2" && e.to == "1");
  EXPECT_TRUE(tp) << to_json(r)["best"]["edits"].dump();
  for (const TrialRecord& t : r.history) {
    const double tokens = t.tokens_per_s_per_gpu.value_or(0);
    if (t.outcome == "accepted") {
      EXPECT_NEAR(tokens, kTokensAtOneSecond / 0.7, 0.01 * kTokensAtOneSecond) << t.label;
    }
    if (t.outcome == "rejected") {
      const double parent = r.history.at(static_cast<std::size_t>(t.parent)).tokens_per_s_per_gpu.value_or(0);
      EXPECT_NEAR(tokens, parent, 0.01 * parent) << t.label;
    }
  }
}

TEST_F(CampaignLoop, ARunThatStopsMakingStepsIsCancelledByTheWatchdogAndRecordedAsAHang) {
  // Every candidate hangs after 3 steps; the recipe as written runs.
  const std::string as_written = test::llama3_8b_script(8, 2);
  const TuneResult r = tune([&](const recipe::Recipe& rc) {
    return rc.document().text() == as_written ? FakeBehaviour{1.0, -1} : FakeBehaviour{1.0, 3};
  }, 2);
  ASSERT_EQ(r.history.size(), 3u);  // the baseline and two trials
  int hangs = 0;
  for (const TrialRecord& t : r.history) {
    if (t.trial != 0 && t.outcome == "failed" && t.reason.find("no new step") != std::string::npos) ++hangs;
  }
  EXPECT_EQ(hangs, 2) << nlohmann::json(summary()["history"]).dump(1);
  EXPECT_EQ(r.best_trial, 0);
  EXPECT_LT(real_seconds_, 30.0);
}

}  // namespace
}  // namespace attune::campaign
