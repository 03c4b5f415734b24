// `attune sim ...`: the simulated cluster. `predict` shows what a recipe would
// do on the simulated hardware and why; `calibrate` holds the model to the
// published measurements.
#include <cstdint>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/calibration.h"
#include "attune/sim/run_log.h"
#include "attune/sim/step_model.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct PredictArgs {
  std::string file;
  recipe::RecipeOptions options;
  bool json = false;
};

struct RunArgs {
  std::string file;
  recipe::RecipeOptions options;
  int steps = 50;
  std::uint64_t seed = 1;
};

struct CalibrateArgs {
  std::string csv;
  bool json = false;
};

void print_prediction(const sim::Workload& w, const sim::Prediction& p) {
  const auto& pl = w.plan;
  fmt::print("workload    {} on {} x {} ({} GPUs): tp {} pp {} vp {} cp {} ep {} dp {} · mbs {} gbs {} · seq {}\n",
             w.model.display.empty() ? w.model.name : w.model.display, pl.nodes, pl.gpu, pl.world, pl.tp, pl.pp,
             pl.vp, pl.cp, pl.ep, pl.dp, pl.mbs, pl.gbs, pl.seq_len);
  if (!p.failure.empty()) fmt::print("failure     {}: {}\n", p.failure, p.error);
  if (p.step_time_s <= 0) return;
  fmt::print("throughput  step {:.3f} s · {:.0f} tokens/s/GPU · {:.1f} TFLOP/s/GPU · MFU {:.1f}%\n", p.step_time_s,
             p.tokens_per_s_per_gpu, p.tflops_per_gpu, p.mfu * 100);
  const auto& b = p.breakdown;
  auto pct = [&](double s) { return fmt::format("{:.3f} s ({:.0f}%)", s, 100 * s / p.step_time_s); };
  fmt::print("breakdown   compute {} · recompute {} · memory-bound {}\n", pct(b.compute_s), pct(b.recompute_s),
             pct(b.memory_bound_s));
  fmt::print("            TP {} · CP {} · EP {} · DP {} · PP {}\n", pct(b.tp_comm_s), pct(b.cp_comm_s),
             pct(b.ep_comm_s), pct(b.dp_comm_s), pct(b.pp_comm_s));
  fmt::print("            bubble {} · optimizer {} · other {}\n", pct(b.bubble_s), pct(b.optimizer_s),
             pct(b.other_s));
  const auto& m = p.memory;
  fmt::print("memory      {:.1f} GiB of {:.1f} GiB: weights {:.1f} · grads {:.1f} · optimizer {:.1f} · activations {:.1f} · "
             "overhead {:.1f} · fragmentation {:.1f}\n",
             m.total_gib, p.hbm_gib, m.weights_gib, m.gradients_gib, m.optimizer_gib, m.activations_gib,
             m.overhead_gib, m.fragmentation_gib);
  for (const auto& n : m.notes) fmt::print("note        {}\n", n);
}

int run_predict(const PredictArgs& a) {
  recipe::Recipe r = recipe::Recipe::load(a.file, a.options);
  sim::Workload w = sim::workload_from_recipe(r);
  sim::Prediction p = sim::predict(w);
  if (a.json) {
    print_json(sim::to_json(p));
  } else {
    print_prediction(w, p);
  }
  return 0;
}

int run_run(const RunArgs& a) {
  recipe::Recipe r = recipe::Recipe::load(a.file, a.options);
  sim::Workload w = sim::workload_from_recipe(r);
  sim::Prediction p = sim::predict(w);
  sim::RunOptions o;
  o.steps = a.steps;
  o.seed = a.seed;
  sim::write_run_log(w, p, o, std::cout);
  return p.ok ? 0 : 1;
}

int run_calibrate(const CalibrateArgs& a) {
  std::string csv = a.csv;
  if (csv.empty()) {
    const char* corpus = std::getenv("ATTUNE_CORPUS");
    if (!corpus) throw InputError({}, "--csv", "give the measurements file (throughput.csv) with --csv FILE");
    csv = std::string(corpus) + "/calibration/throughput.csv";
  }
  sim::CalibrationResult result = sim::calibrate(sim::read_calibration_csv(csv), sim::simulator_predictor);
  if (a.json) {
    print_json(sim::to_json(result));
    return 0;
  }
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
  return 0;
}

}  // namespace

void add_sim_command(CLI::App& app) {
  CLI::App* sim = app.add_subcommand("sim", "The simulated cluster: an analytic model of LLM training on H100, H200 "
                                            "and B200 nodes, calibrated against published measurements.");
  sim->require_subcommand(1);

  auto predict = std::make_shared<PredictArgs>();
  CLI::App* p = sim->add_subcommand("predict", "Predict a recipe's step time, tokens/s/GPU, TFLOP/s/GPU, MFU and peak "
                                               "memory per GPU, with the breakdown that explains them");
  p->add_option("RECIPE", predict->file, "Recipe file or attune wrapper file")->required();
  add_recipe_options(*p, predict->options);
  p->add_flag("--json", predict->json,
              "Print JSON: {ok, failure, step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu, breakdown, memory}");
  p->callback([predict]() { command_status() = run_predict(*predict); });

  auto run = std::make_shared<RunArgs>();
  CLI::App* r = sim->add_subcommand("run", "Print the log the recipe's run would print, in its framework's own format "
                                           "(Megatron-LM, torchtitan, Hugging Face), with warm-up and seeded noise, "
                                           "or the framework's error where it would fail (exit 1)");
  r->add_option("RECIPE", run->file, "Recipe file or attune wrapper file")->required();
  add_recipe_options(*r, run->options);
  r->add_option("--steps", run->steps, "Training steps to print")->check(CLI::PositiveNumber);
  r->add_option("--seed", run->seed, "Seed of the run-to-run noise");
  r->callback([run]() { command_status() = run_run(*run); });

  auto calibrate = std::make_shared<CalibrateArgs>();
  CLI::App* c = sim->add_subcommand("calibrate", "Predict every row of the published measurements (throughput.csv) "
                                                 "and score the model: per-row error, median and p90 absolute "
                                                 "error, Spearman rank correlation within model/GPU groups");
  c->add_option("--csv", calibrate->csv, "The measurements (default: $ATTUNE_CORPUS/calibration/throughput.csv)");
  c->add_flag("--json", calibrate->json,
              "Print JSON: {rows, supported, excluded, median_abs_error, p90_abs_error, spearman, per_row, "
              "excluded_rows}");
  c->callback([calibrate]() { command_status() = run_calibrate(*calibrate); });
}

}  // namespace attune::cli
