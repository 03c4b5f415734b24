// Simulator speed on one core: predictions per second, the wall time of an
// exact search over every setting the simulator reads (layouts x structural
// levers x choices, what `attune sim optimum` does within a recipe's
// spellable levers), and the full optimum (truth search, prior search,
// greedy) of every benchmark scenario.
// Usage: sim_predict_bench [SECONDS] [SCENARIOS_DIR]
//   (default 2 s per measurement; scenarios from ./recipes/scenarios when present)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <filesystem>

#include "attune/gate/correctness_gate.h"
#include "attune/recipe/model_spec.h"
#include "attune/sim/scenario.h"
#include "attune/sim/scenario_report.h"
#include "attune/sim/layout_search.h"
#include "attune/sim/step_model.h"

using namespace attune;
using Clock = std::chrono::steady_clock;

namespace {

sim::Workload workload(const char* model, const char* gpu, int nodes, int tp, int pp, int ep, long long gbs) {
  sim::Workload w;
  w.model = *recipe::find_model_preset(model);
  auto& p = w.plan;
  p.framework = "megatron";
  p.gpu = gpu;
  p.nodes = nodes;
  p.gpus_per_node = 8;
  p.world = nodes * 8;
  p.tp = tp;
  p.pp = pp;
  p.ep = ep;
  p.dp = p.world / (tp * pp);
  p.mbs = 1;
  p.gbs = gbs;
  p.grad_accum = gbs / p.dp;
  p.seq_len = 8192;
  p.precision = "bf16";
  return w;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void predictions_per_second(const char* name, const sim::Workload& w, double budget_s) {
  const sim::Perturbation pert;
  long long n = 0;
  double sink = 0;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < budget_s) {
    for (int i = 0; i < 1000; ++i) sink += sim::predict(w, pert, sim::Detail::Numbers).step_time_s;
    n += 1000;
  }
  const double s = seconds_since(t0);
  std::printf("predict   %-34s %10.0f predictions/s  (%.3f us each; checksum %.3g)\n", name, n / s, 1e6 * s / n,
              sink);
}

void search(const char* name, const sim::Workload& w) {
  const sim::SearchSpace space = sim::every_setting(w);
  const auto t0 = Clock::now();
  const sim::SearchResult r = sim::search_layouts(w, space, {});
  const double s = seconds_since(t0);
  const auto& best = r.best.empty() ? nullptr : &r.best.front();
  std::printf("search    %-34s %.3g settings, %lld predicted in full, in %.3f s; best %.0f tokens/s/GPU\n", name,
              static_cast<double>(r.settings), r.evaluated, s, best ? best->prediction.tokens_per_s_per_gpu : 0.0);
}

void scenarios(const std::string& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    std::printf("scenarios %s: not found (pass the scenarios directory)\n", root.c_str());
    return;
  }
  const sim::ScenarioReport r = sim::scenario_report(sim::scenario_dirs(root), gate::CorrectnessGate{});
  double total = 0;
  for (const auto& f : r.scenarios) {
    total += f.search_seconds;
    std::printf("optimum   %-48s %.3g settings in %.3f s\n", f.name.c_str(), static_cast<double>(f.settings),
                f.search_seconds);
  }
  std::printf("optimum   %zu scenarios: slowest %.3f s, total %.2f s\n", r.scenarios.size(), r.targets.slowest_search_s,
              total);
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 2.0;
  const sim::Workload dense = workload("llama3-70b", "h100", 32, 4, 4, 1, 512);
  sim::Workload moe = workload("deepseek-v3", "b200", 32, 1, 8, 32, 2048);
  moe.knobs.uneven_pipeline_split = true;  // 61 layers over 8 stages
  const sim::Workload small = workload("llama3-8b", "h200", 1, 1, 1, 1, 128);
  predictions_per_second("llama3-70b, 32 x H100, tp4 pp4", dense, budget);
  predictions_per_second("deepseek-v3, 32 x B200, pp8 ep32", moe, budget);
  predictions_per_second("llama3-8b, 1 x H200", small, budget);
  search("llama3-70b, 32 x H100", dense);
  search("deepseek-v3, 32 x B200", moe);
  search("llama3-8b, 1 x H200", small);
  scenarios(argc > 2 ? argv[2] : "recipes/scenarios");
  return 0;
}
