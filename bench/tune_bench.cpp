// tune_bench: the targets of `attune tune` on every benchmark scenario
// (docs/campaign.md), measured. Each scenario is tuned at its own budget with
// seeds 1..N by the rules policy and by the planner baseline, on the sim
// cluster under the scenario's hidden truth; the final recipe is scored by
// its noiseless true throughput over the true optimum. Prints per scenario
// and overall: the median and worst score of rules, the planner's median,
// failed launches per launch, GPU-hours to reach 95% of the final
// throughput over the GPU-hours spent, and attune's own seconds per trial.
//
//   tune_bench [--seeds N] [--scenarios DIR] [--policies rules,planner]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attune/campaign/bench.h"
#include "attune/campaign/tune.h"
#include "attune/sim/scenario.h"
#include "attune/util/statistics.h"

namespace fs = std::filesystem;
using namespace attune;

namespace {

// GPU-hours spent when the measured best first reached 95% of its final
// value, over all the GPU-hours spent (from the campaign's journal).
double share_to_95(const std::string& dir, double final_best) {
  std::ifstream in(dir + "/journal.jsonl");
  double spent = 0, reached = -1, best = 0;
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line);
    const std::string ev = e.value("event", "");
    if (ev == "run_finished") spent += e.value("gpu_hours", 0.0);
    if (ev == "trial" && (e.value("outcome", "") == "accepted" || e.value("outcome", "") == "baseline") &&
        e["tokens_per_s_per_gpu"].is_number())
      best = e["tokens_per_s_per_gpu"].get<double>();
    if (reached < 0 && final_best > 0 && best >= 0.95 * final_best) reached = spent;
  }
  return spent > 0 && reached >= 0 ? reached / spent : 1;
}

struct Row {
  std::vector<double> score, planner, share, seconds;
  int launches = 0, failed = 0;
  double prior_regret = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int seeds = 5;
  std::string root = std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios";
  std::vector<std::string> policies = {"rules", "planner"};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seeds")) seeds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--scenarios")) root = argv[i + 1];
  }
  const fs::path work = fs::temp_directory_path() / fmt::format("attune-tune-bench-{}", ::getpid());
  std::map<std::string, Row> rows;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& dir : sim::scenario_dirs(root)) {
    const std::string name = fs::path(dir).filename().string();
    Row& row = rows[name];
    const sim::Scenario sc = sim::read_scenario(dir);
    campaign::BenchScenario scenario;
    scenario.name = name;
    scenario.dir = dir;
    if (!sc.harness.empty()) row.prior_regret = sim::read_harness(sc.harness).prior_regret.value_or(0);
    for (const std::string& policy : policies) {
      for (int seed = 1; seed <= seeds; ++seed) {
        campaign::TuneRequest q;
        q.file = dir;
        q.policy = policy;
        q.seed = static_cast<std::uint64_t>(seed);
        q.use_lessons = false;
        q.out_dir = (work / fmt::format("{}-{}-{}", name, policy, seed)).string();
        const campaign::TuneResult r = campaign::run_tune(q);
        const sim::TunedScore truth = campaign::score_campaign(r, scenario);
        const double score = truth.optimum > 0 ? truth.tuned / truth.optimum : 0;
        if (policy == "rules") {
          row.score.push_back(score);
          row.launches += r.launches;
          row.failed += r.failed_launches;
          row.share.push_back(share_to_95(r.dir, r.best_tokens_per_s_per_gpu));
          row.seconds.push_back(r.attune_seconds_per_trial);
        } else {
          row.planner.push_back(score);
        }
        fs::remove_all(q.out_dir);
      }
    }
    fmt::print(stderr, "{:<48} rules median {:.3f} min {:.3f} · planner {:.3f} · failed {}/{} · 95% at {:.2f} of GPUh · {:.1f} ms/trial\n",
               name, median(row.score), *std::min_element(row.score.begin(), row.score.end()), median(row.planner),
               row.failed, row.launches, median(row.share), 1e3 * median(row.seconds));
  }
  std::vector<double> all, worst, gap, share, seconds;
  int launches = 0, failed = 0;
  for (const auto& [name, row] : rows) {
    all.push_back(median(row.score));
    worst.push_back(*std::min_element(row.score.begin(), row.score.end()));
    if (row.prior_regret >= 0.05) gap.push_back(median(row.score) - median(row.planner));
    share.push_back(median(row.share));
    seconds.insert(seconds.end(), row.seconds.begin(), row.seconds.end());
    launches += row.launches;
    failed += row.failed;
  }
  const double med = median(all), low = *std::min_element(worst.begin(), worst.end());
  const double fail_share = launches ? static_cast<double>(failed) / launches : 0;
  const double gap_med = median(gap), share_med = median(share), ms = 1e3 * median(seconds);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("scenarios {} x seeds {} ({:.0f} s)\n", rows.size(), seeds, wall);
  fmt::print("rules median score      {:.3f} (target >= 0.97)\n", med);
  fmt::print("rules worst scenario    {:.3f} (target >= 0.90 on every scenario)\n", low);
  fmt::print("failed launches         {:.1f}% of {} (target <= 5%)\n", 100 * fail_share, launches);
  fmt::print("rules - planner         {:+.1f} points median on {} scenarios with prior regret >= 5% (target >= +4)\n",
             100 * gap_med, gap.size());
  fmt::print("95% of final reached at {:.2f} of the GPU-hours spent, median (target <= 0.5)\n", share_med);
  fmt::print("attune's own work       {:.1f} ms per trial, median (target < 50 ms)\n", ms);
  fs::remove_all(work);
  return 0;
}
