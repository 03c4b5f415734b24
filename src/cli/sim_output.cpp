#include "attune/cli/sim_output.h"

#include <algorithm>

#include <fmt/format.h>

namespace attune::cli {

namespace {

void print_edits(const char* head, const std::vector<sim::LeverEdit>& edits, bool changes) {
  if (edits.empty()) fmt::print("{:<12}none: the recipe as written\n", head);
  for (const auto& e : edits) {
    fmt::print("{:<12}{}: {} -> {}\n", head, e.lever, e.from.empty() ? "(default)" : e.from, e.to);
    if (!changes) continue;
    for (const auto& c : e.changes) fmt::print("              {}\n", c);
  }
}

}  // namespace

void print_prediction(const sim::Workload& w, const sim::Prediction& p) {
  const auto& pl = w.plan;
  fmt::print("workload    {} on {} x {} ({} GPUs): tp {} pp {} vp {} cp {} ep {} dp {} · mbs {} gbs {} · seq {}\n",
             w.model.display.empty() ? w.model.name : w.model.display, pl.nodes, pl.gpu, pl.world, pl.tp, pl.pp,
             pl.vp, pl.cp, pl.ep, pl.dp, pl.mbs, pl.gbs, pl.seq_len);
  if (!p.failure.empty())
    fmt::print("failure     {}{}: {}\n", p.failure, p.fails_at_step > 0 ? fmt::format(" at step {}", p.fails_at_step) : "",
               p.error);
  if (p.oom_risk > 0) fmt::print("risk        {:.0f}% chance per run of a late OOM (memory within the risk margin of HBM)\n", 100 * p.oom_risk);
  if (p.step_time_s <= 0) return;
  fmt::print("throughput  step {:.3f} s · {:.0f} tokens/s/GPU · {:.1f} TFLOP/s/GPU · MFU {:.1f}%\n", p.step_time_s,
             p.tokens_per_s_per_gpu, p.tflops_per_gpu, p.mfu * 100);
  const auto& b = p.breakdown;
  auto pct = [&](double s) { return fmt::format("{:.3f} s ({:.0f}%)", s, 100 * s / p.step_time_s); };
  fmt::print("breakdown   compute {} · recompute {} · memory-bound {}\n", pct(b.compute_s), pct(b.recompute_s),
             pct(b.memory_bound_s));
  fmt::print("            TP {} · CP {} · EP {} · DP {} · PP {}\n", pct(b.tp_comm_s), pct(b.cp_comm_s),
             pct(b.ep_comm_s), pct(b.dp_comm_s), pct(b.pp_comm_s));
  fmt::print("            bubble {} · optimizer {} · offload {} · data {} · other {}\n", pct(b.bubble_s),
             pct(b.optimizer_s), pct(b.offload_s), pct(b.data_s), pct(b.other_s));
  const auto& m = p.memory;
  fmt::print("memory      {:.1f} GiB of {:.1f} GiB: weights {:.1f} · grads {:.1f} · optimizer {:.1f} · activations {:.1f} · "
             "overhead {:.1f} · fragmentation {:.1f}\n",
             m.total_gib, p.hbm_gib, m.weights_gib, m.gradients_gib, m.optimizer_gib, m.activations_gib,
             m.overhead_gib, m.fragmentation_gib);
  for (const auto& n : m.notes) fmt::print("note        {}\n", n);
  const auto& k = w.knobs;
  std::string choices;
  for (std::size_t i = 0; i < sim::kChoiceCount; ++i) {
    const auto c = static_cast<sim::Choice>(i);
    choices += fmt::format("{}{} {}", i ? " · " : "", sim::choice_name(c), sim::choice_values(c)[k.get(c)]);
  }
  fmt::print("choices     {}\n", choices);
}

void print_optimum(const sim::Optimum& o) {
  const double base = o.baseline.tokens_per_s_per_gpu;
  fmt::print("baseline    {:.0f} tokens/s/GPU{}\n", base, o.baseline.ok ? "" : " (" + o.baseline.failure + ": " + o.baseline.error + ")");
  fmt::print("optimum     {:.0f} tokens/s/GPU ({:.2f}x) over {} settings ({} evaluated, the rest bounded out)\n",
             o.best.prediction.tokens_per_s_per_gpu, base > 0 ? o.best.prediction.tokens_per_s_per_gpu / base : 0.0,
             o.settings, o.evaluated);
  print_edits("edit", o.best.edits, true);
  if (o.prior) {
    const std::string truth = o.prior_under_truth.ok ? fmt::format("{:.0f}", o.prior_under_truth.tokens_per_s_per_gpu)
                                                     : o.prior_under_truth.failure;
    fmt::print("prior       the nominal model's optimum: {:.0f} tokens/s/GPU predicted, {} under this truth (regret {:.1f}%)\n",
               o.prior->prediction.tokens_per_s_per_gpu, truth, 100 * o.prior_regret);
    print_edits("prior edit", o.prior->edits, false);
  }
  if (o.greedy) {
    fmt::print("greedy      one lever at a time: {:.0f} tokens/s/GPU after {} trials and {} moves ({:.1f}% short)\n",
               o.greedy->prediction.tokens_per_s_per_gpu, o.greedy->trials, o.greedy->moves, 100 * o.greedy->shortfall);
  }
  for (const auto& n : o.notes) fmt::print("note        {}\n", n);
  fmt::print("\n");
  print_prediction(o.best.workload, o.best.prediction);
}

void print_score(const sim::TunedScore& s) {
  if (!s.refused.empty()) fmt::print("refused     the gate refuses the tuned recipe: {}\n", s.refused);
  if (!s.failure.empty()) fmt::print("failure     the tuned recipe fails under the truth: {}\n", s.failure);
  fmt::print("score       {:.3f} of the true optimum ({:.0f} tokens/s/GPU tuned{}, optimum {:.0f}, baseline {:.0f})\n",
             s.score, s.tuned, s.oom_risk > 0 ? fmt::format(", {:.0f}% late-OOM risk", 100 * s.oom_risk) : "",
             s.optimum, s.baseline);
}

void print_scenario_report(const sim::ScenarioReport& r) {
  fmt::print("{:<48} {:>8} {:>8} {:>7} {:>7} {:>6} {:>9} {:>7}\n", "scenario", "baseline", "optimum", "regret", "greedy",
             "traps", "trial GPUh", "trials");
  for (const auto& f : r.scenarios) {
    fmt::print("{:<48.48} {:>8.0f} {:>8.0f} {:>6.1f}% {:>6.1f}% {:>6} {:>9.2f} {:>7.0f}{}\n", f.name, f.baseline, f.optimum,
               100 * f.prior_regret, 100 * f.greedy_shortfall, f.traps, f.trial_gpu_hours, f.trials_that_fit,
               f.prior_failure.empty() ? "" : "  prior's optimum: " + f.prior_failure);
  }
  const auto& t = r.targets;
  fmt::print("\nprior regret >= 5%: {} (target >= 8) · median regret {:.1f}% (target 5-15%) · greedy stuck >= 3%: {} "
             "(target >= 5) · start within 10%: {} (target >= 3) · with traps: {} (target >= 4) · too few trials: {} "
             "(target 0) · slowest search {:.2f} s (target < 2 s) · {}\n",
             t.regret_5pct, 100 * t.median_regret, t.greedy_stuck_3pct, t.within_10pct, t.with_traps, t.too_few_trials,
             t.slowest_search_s, t.met ? "targets met" : "TARGETS NOT MET");
}

void print_calibration(const sim::CalibrationResult& result) {
  for (const auto& row : result.rows) {
    if (!row.supported) continue;
    fmt::print("{:>5}  {:<44.44} {:<6} measured {:>7.0f}  predicted {:>7.0f}  {:+6.1f}%\n", row.row.line, row.row.model,
               row.row.gpu, row.row.tokens_per_s_per_gpu, row.predicted, row.error * 100);
  }
  for (const auto& row : result.rows) {
    if (row.supported) continue;
    fmt::print("{:>5}  {:<44.44} excluded: {}\n", row.row.line, row.row.model, row.reason);
  }
  fmt::print("\nrows {} · supported {} · excluded {} · median |error| {:.1f}% · p90 |error| {:.1f}% · Spearman {:.2f} "
             "over {} groups\n",
             result.rows.size(), result.supported, result.excluded, result.median_abs_error * 100,
             result.p90_abs_error * 100, result.spearman, result.spearman_groups);
}

}  // namespace attune::cli
