// `attune sim ...`: the simulated cluster. `predict` shows what a recipe would
// do on the simulated hardware and why; `run` and `job` print the run's log
// (`job` paced like the real run, as a cluster payload); `optimum` is the best
// the simulator finds within the gate; `calibrate` holds the model to the
// published measurements.
#include <chrono>
#include <fstream>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "attune/cli/commands.h"
#include "attune/cli/sim_target.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/calibration.h"
#include "attune/sim/optimum.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/scenario.h"
#include "attune/sim/run_log.h"
#include "attune/sim/step_model.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct PredictArgs {
  std::string file;
  recipe::RecipeOptions options;
  SimOptions sim;
  bool json = false;
};

struct RunArgs {
  std::string file;
  recipe::RecipeOptions options;
  SimOptions sim;
  int steps = 50;
  double time_scale = 0;  // job: simulated seconds per real second (0 = do not sleep)
  std::string log_file;   // job: where to write the log ("" = stdout)
  std::string flavour;    // log format ("" = the recipe framework's)
};

struct OptimumArgs {
  std::string file;
  recipe::RecipeOptions options;
  SimOptions sim;
  gate::GateOptions gate;
  int candidates = 32;
  bool json = false;
  bool record = false;     // write the figures into the scenario file
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
  const SimTarget t = load_target(a.file, a.options, a.sim);
  sim::Workload w = sim::workload_from_recipe(t.recipe);
  sim::Prediction p = sim::predict(w, t.perturbation);
  if (a.json) {
    print_json(sim::to_json(p));
  } else {
    print_prediction(w, p);
  }
  return 0;
}

sim::RunOptions run_options(const RunArgs& a, const SimTarget& t) {
  sim::RunOptions o = sim::run_options(t.perturbation, t.seed, a.steps);
  o.flavour = a.flavour;
  return o;
}

int run_run(const RunArgs& a) {
  const SimTarget t = load_target(a.file, a.options, a.sim);
  sim::Workload w = sim::workload_from_recipe(t.recipe);
  sim::Prediction p = sim::predict(w, t.perturbation);
  sim::write_run_log(w, p, run_options(a, t), std::cout);
  return p.ok ? 0 : 1;
}

// Prints the log as the run would: each step's lines when the simulated
// clock, divided by the time scale, reaches them, flushed, so whoever follows
// the file (a cluster backend, the hang watchdog) sees a run shaped like the
// real one, slow first step and stragglers included.
int run_job(const RunArgs& a) {
  if (!(a.time_scale > 0)) throw InputError({}, "--time-scale", "expected a positive number");
  const SimTarget t = load_target(a.file, a.options, a.sim);
  sim::Workload w = sim::workload_from_recipe(t.recipe);
  const sim::Prediction p = sim::predict(w, t.perturbation);
  std::ofstream file;
  if (!a.log_file.empty()) {
    file.open(a.log_file, std::ios::app);
    if (!file) throw InputError({a.log_file, 0, 0}, "--log", "cannot open for writing");
  }
  std::ostream& out = a.log_file.empty() ? std::cout : file;
  fmt::print(out, "attune sim job: {} on {} x {}, time scale {}\n", w.model.name, w.plan.world, w.plan.gpu,
             a.time_scale);
  out.flush();
  const auto start = std::chrono::steady_clock::now();
  sim::RunOptions o = run_options(a, t);
  o.before_lines = [&](double simulated_s) {
    out.flush();
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(simulated_s / a.time_scale)));
  };
  sim::write_run_log(w, p, o, out);
  out.flush();
  return p.ok ? 0 : 1;
}

void print_optimum(const sim::Optimum& o) {
  fmt::print("baseline    {:.0f} tokens/s/GPU{}\n", o.baseline.tokens_per_s_per_gpu,
             o.baseline.ok ? "" : " (" + o.baseline.failure + ": " + o.baseline.error + ")");
  fmt::print("optimum     {:.0f} tokens/s/GPU ({:.2f}x) after searching {} settings\n", o.best.tokens_per_s_per_gpu,
             o.baseline.tokens_per_s_per_gpu > 0 ? o.best.tokens_per_s_per_gpu / o.baseline.tokens_per_s_per_gpu : 0.0,
             o.searched);
  if (o.edits.empty()) fmt::print("edits       none: the recipe is already the best found\n");
  for (const auto& e : o.edits) {
    fmt::print("edit        {}: {} -> {}\n", e.lever, e.from.empty() ? "(default)" : e.from, e.to);
    for (const auto& c : e.changes) fmt::print("              {}\n", c);
  }
  for (const auto& n : o.notes) fmt::print("note        {}\n", n);
  fmt::print("\n");
  print_prediction(o.best_workload, o.best);
}

int run_optimum(const OptimumArgs& a) {
  const SimTarget t = load_target(a.file, a.options, a.sim);
  gate::CorrectnessGate gate(a.gate);
  const sim::Optimum o = sim::find_optimum(t.recipe, gate, t.perturbation, static_cast<std::size_t>(a.candidates));
  if (a.record) {
    if (!sim::is_scenario_file(a.file)) throw InputError({a.file, 0, 0}, "--record", "RECIPE must be a scenario file");
    std::vector<std::string> edits;
    for (const auto& e : o.edits) edits.push_back(e.lever + ": " + (e.from.empty() ? "(default)" : e.from) + " -> " + e.to);
    sim::record_figures(a.file, o.baseline.tokens_per_s_per_gpu, o.best.tokens_per_s_per_gpu, edits);
  }
  if (a.json) {
    print_json(sim::to_json(o));
  } else {
    print_optimum(o);
  }
  return 0;
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
  p->add_option("RECIPE", predict->file, "Recipe file, attune wrapper file or scenario file")->required();
  add_recipe_options(*p, predict->options);
  add_sim_options(*p, predict->sim);
  p->add_flag("--json", predict->json,
              "Print JSON: {ok, failure, step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu, breakdown, memory}");
  p->callback([predict]() { command_status() = run_predict(*predict); });

  auto run = std::make_shared<RunArgs>();
  CLI::App* r = sim->add_subcommand("run", "Print the log the recipe's run would print, in its framework's own format "
                                           "(Megatron-LM, Megatron-Bridge, NeMo, AutoModel, torchtitan, DeepSpeed, "
                                           "Hugging Face), with warm-up, seeded noise and stragglers, "
                                           "or the framework's error where it would fail (exit 1)");
  r->add_option("RECIPE", run->file, "Recipe file, attune wrapper file or scenario file")->required();
  add_recipe_options(*r, run->options);
  add_sim_options(*r, run->sim);
  r->add_option("--steps", run->steps, "Training steps to print")->check(CLI::PositiveNumber);
  r->add_option("--log-format", run->flavour, "Log format (default: the recipe framework's own)")
      ->check(CLI::IsMember(sim::log_flavours()));
  r->callback([run]() { command_status() = run_run(*run); });

  auto job = std::make_shared<RunArgs>();
  job->time_scale = 1;
  CLI::App* j = sim->add_subcommand("job", "The same run as a cluster job's payload: prints the log over the run's "
                                           "simulated duration divided by --time-scale, then exits 0, or 1 where the "
                                           "run fails");
  j->add_option("RECIPE", job->file, "Recipe file, attune wrapper file or scenario file")->required();
  add_recipe_options(*j, job->options);
  add_sim_options(*j, job->sim);
  j->add_option("--steps", job->steps, "Training steps to run")->check(CLI::PositiveNumber);
  j->add_option("--log-format", job->flavour, "Log format (default: the recipe framework's own)")
      ->check(CLI::IsMember(sim::log_flavours()));
  j->add_option("--time-scale", job->time_scale,
                "Simulated seconds per real second (100: a 10-minute run takes 6 s)")
      ->check(CLI::PositiveNumber);
  j->add_option("--log", job->log_file, "Append the log to this file instead of standard output");
  j->callback([job]() { command_status() = run_job(*job); });

  auto optimum = std::make_shared<OptimumArgs>();
  CLI::App* o = sim->add_subcommand(
      "optimum", "Search every legal layout and lever setting the recipe's framework exposes that keeps what it "
                 "trains (the correctness gate approves the edited recipe) and print the best with its prediction: "
                 "the ceiling tuners are compared with");
  o->add_option("RECIPE", optimum->file, "Recipe file, attune wrapper file or scenario file")->required();
  add_recipe_options(*o, optimum->options);
  add_sim_options(*o, optimum->sim);
  o->add_option("--allow", optimum->gate.allow, "Numerics change the search may make (fp8); repeatable");
  o->add_option("--candidates", optimum->candidates,
                "Ranked candidates turned into recipes and checked by the gate before giving up (default 32)")
      ->check(CLI::PositiveNumber);
  o->add_flag("--json", optimum->json,
              "Print JSON: {best: {tokens_per_s_per_gpu, edits, plan, prediction}, baseline, speedup, searched, "
              "candidates_tried, notes}");
  o->add_flag("--record", optimum->record,
              "RECIPE is a scenario file: write the baseline and optimum predicted into it (the scenario tests "
              "check them)");
  o->callback([optimum]() { command_status() = run_optimum(*optimum); });

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
