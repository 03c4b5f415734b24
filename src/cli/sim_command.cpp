// `attune sim ...`: the simulated cluster. `predict` shows what a recipe would
// do on the simulated hardware and why; `run` and `job` print the run's log
// (`job` paced like the real run, as a cluster payload); `optimum` is the best
// the simulator finds within the gate; `scenarios` measures the benchmark
// scenarios; `calibrate` holds the model to the published measurements.
// Everything simulates the nominal model unless --truth asks for a
// scenario's hidden truth.
#include <chrono>
#include <filesystem>
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
#include "attune/sim/scenario_report.h"
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
};

struct ScenariosArgs {
  std::string dir = "recipes/scenarios";
  gate::GateOptions gate;
  bool json = false;
  bool record = false;  // write the figures into each scenario's harness file
};

struct ScoreArgs {
  std::string scenario;
  std::string tuned;
  recipe::RecipeOptions options;  // for the tuned recipe
  gate::GateOptions gate;
  bool json = false;
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

sim::RunOptions run_options(const RunArgs& a, const SimTarget& t, const sim::Workload& w, const sim::Prediction& p) {
  sim::RunOptions o = sim::run_options(w, p, t.perturbation, t.seed, a.steps);
  o.flavour = a.flavour;
  return o;
}

int run_run(const RunArgs& a) {
  const SimTarget t = load_target(a.file, a.options, a.sim);
  sim::Workload w = sim::workload_from_recipe(t.recipe);
  sim::Prediction p = sim::predict(w, t.perturbation);
  const sim::RunOutcome outcome = sim::write_run_log(w, p, run_options(a, t, w, p), std::cout);
  return outcome.failure.empty() ? 0 : 1;
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
  sim::RunOptions o = run_options(a, t, w, p);
  o.before_lines = [&](double simulated_s) {
    out.flush();
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(simulated_s / a.time_scale)));
  };
  const sim::RunOutcome outcome = sim::write_run_log(w, p, o, out);
  out.flush();
  return outcome.failure.empty() ? 0 : 1;
}

void print_edits(const char* head, const std::vector<sim::LeverEdit>& edits, bool changes) {
  if (edits.empty()) fmt::print("{:<12}none: the recipe as written\n", head);
  for (const auto& e : edits) {
    fmt::print("{:<12}{}: {} -> {}\n", head, e.lever, e.from.empty() ? "(default)" : e.from, e.to);
    if (!changes) continue;
    for (const auto& c : e.changes) fmt::print("              {}\n", c);
  }
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
    const double best = o.best.prediction.tokens_per_s_per_gpu;
    fmt::print("greedy      one lever at a time: {:.0f} tokens/s/GPU after {} trials and {} moves ({:.1f}% short)\n",
               o.greedy->prediction.tokens_per_s_per_gpu, o.greedy->trials, o.greedy->moves,
               best > 0 ? 100 * std::max(0.0, 1 - o.greedy->prediction.tokens_per_s_per_gpu / best) : 0.0);
  }
  for (const auto& n : o.notes) fmt::print("note        {}\n", n);
  fmt::print("\n");
  print_prediction(o.best.workload, o.best.prediction);
}

int run_optimum(const OptimumArgs& a) {
  const SimTarget t = load_target(a.file, a.options, a.sim);
  gate::CorrectnessGate gate(a.gate);
  sim::OptimumOptions options;
  options.candidates = static_cast<std::size_t>(a.candidates);
  // Without a truth the prior's optimum is the optimum itself: nothing to compare.
  options.prior = a.sim.truth || !a.sim.truth_file.empty();
  const sim::Optimum o = sim::find_optimum(t.recipe, gate, t.perturbation, options);
  if (a.json) {
    print_json(sim::to_json(o));
  } else {
    print_optimum(o);
  }
  return 0;
}

int run_score(const ScoreArgs& a) {
  const gate::CorrectnessGate gate(a.gate);
  const sim::TunedScore s = sim::score_tuned(a.scenario, recipe::Recipe::load(a.tuned, a.options), gate);
  if (a.json) {
    print_json(sim::to_json(s));
    return 0;
  }
  if (!s.refused.empty()) fmt::print("refused     the gate refuses the tuned recipe: {}\n", s.refused);
  if (!s.failure.empty()) fmt::print("failure     the tuned recipe fails under the truth: {}\n", s.failure);
  fmt::print("score       {:.3f} of the true optimum ({:.0f} tokens/s/GPU tuned{}, optimum {:.0f}, baseline {:.0f})\n",
             s.score, s.tuned, s.oom_risk > 0 ? fmt::format(", {:.0f}% late-OOM risk", 100 * s.oom_risk) : "",
             s.optimum, s.baseline);
  return 0;
}

int run_scenarios(const ScenariosArgs& a) {
  gate::CorrectnessGate gate(a.gate);
  const sim::ScenarioReport r = sim::scenario_report(sim::scenario_dirs(a.dir), gate, a.record);
  if (a.json) {
    print_json(sim::to_json(r));
    return r.targets.met ? 0 : 1;
  }
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
  return t.met ? 0 : 1;
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
  p->add_option("RECIPE", predict->file, "Recipe file, attune wrapper file, or scenario file or directory")->required();
  add_recipe_options(*p, predict->options);
  add_sim_options(*p, predict->sim, false);
  p->add_flag("--json", predict->json,
              "Print JSON: {ok, failure, fails_at_step, step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu, "
              "oom_risk, breakdown, memory}");
  p->callback([predict]() { command_status() = run_predict(*predict); });

  auto run = std::make_shared<RunArgs>();
  CLI::App* r = sim->add_subcommand("run", "Print the log the recipe's run would print, in its framework's own format "
                                           "(Megatron-LM, Megatron-Bridge, NeMo, AutoModel, torchtitan, DeepSpeed, "
                                           "Hugging Face), with start-up, warm-up, seeded noise and stragglers, "
                                           "or the failure's own lines at its own step (exit 1)");
  r->add_option("RECIPE", run->file, "Recipe file, attune wrapper file, or scenario file or directory")->required();
  add_recipe_options(*r, run->options);
  add_sim_options(*r, run->sim, true);
  r->add_option("--steps", run->steps, "Training steps to print")->check(CLI::PositiveNumber);
  r->add_option("--log-format", run->flavour, "Log format (default: the recipe framework's own)")
      ->check(CLI::IsMember(sim::log_flavours()));
  r->callback([run]() { command_status() = run_run(*run); });

  auto job = std::make_shared<RunArgs>();
  job->time_scale = 1;
  CLI::App* j = sim->add_subcommand("job", "The same run as a cluster job's payload (what a mock cluster's jobs "
                                           "run): prints the log over the run's simulated duration divided by "
                                           "--time-scale, then exits 0, or 1 where the run fails");
  j->add_option("RECIPE", job->file, "Recipe file, attune wrapper file, or scenario file or directory")->required();
  add_recipe_options(*j, job->options);
  add_sim_options(*j, job->sim, true);
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
      "optimum", "Search, exactly (branch and bound), every layout, structural lever and choice the recipe's "
                 "framework exposes and the simulator reads, keeping what it trains (the correctness gate approves "
                 "the edited recipe), and print the best with its prediction: the ceiling tuners are compared with. "
                 "Also the nominal model's optimum scored under the truth (its regret) and where one-lever greedy "
                 "stops");
  o->add_option("RECIPE", optimum->file, "Recipe file, attune wrapper file, or scenario file or directory")->required();
  add_recipe_options(*o, optimum->options);
  add_sim_options(*o, optimum->sim, false);
  o->add_option("--allow", optimum->gate.allow, "Numerics change the search may make (fp8); repeatable");
  o->add_option("--candidates", optimum->candidates,
                "Ranked candidates turned into recipes and checked by the gate before giving up (default 32)")
      ->check(CLI::PositiveNumber);
  o->add_flag("--json", optimum->json,
              "Print JSON: {optimum: {tokens_per_s_per_gpu, edits, plan, prediction}, prior_optimum: {edits, "
              "prior_tokens_per_s_per_gpu, true_tokens_per_s_per_gpu, true_failure}, prior_regret, greedy: "
              "{true_tokens_per_s_per_gpu, trials, moves, shortfall}, baseline, speedup, settings_searched, "
              "settings_evaluated, cores, candidates_tried, notes}");
  o->callback([optimum]() { command_status() = run_optimum(*optimum); });

  auto scenarios = std::make_shared<ScenariosArgs>();
  CLI::App* sc = sim->add_subcommand(
      "scenarios", "Measure every benchmark scenario under its hidden truth: baseline, true optimum, the nominal "
                   "model's regret, where one-lever greedy stops, traps, what a trial costs and how many fit the "
                   "budget; and whether the set meets the benchmark's targets (exit 1 when not)");
  sc->add_option("DIR", scenarios->dir, "Directory of scenario directories, or one scenario directory")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  sc->add_flag("--record", scenarios->record,
               "Write each scenario's figures into its harness.yaml (what `ctest -L scenarios` holds the simulator "
               "to); run after changing the model or a truth");
  sc->add_option("--allow", scenarios->gate.allow, "Numerics change the searches may make (fp8); repeatable");
  sc->add_flag("--json", scenarios->json,
               "Print JSON: {scenarios: [{name, baseline_tokens_per_s_per_gpu, optimum_tokens_per_s_per_gpu, "
               "prior_regret, greedy_shortfall, traps, trial_gpu_hours, trials_that_fit, ...}], targets: {...}}");
  sc->callback([scenarios]() { command_status() = run_scenarios(*scenarios); });

  auto score = std::make_shared<ScoreArgs>();
  CLI::App* sco = sim->add_subcommand(
      "score", "Score a tuner's final recipe on a scenario as benchmarks do: its noiseless throughput under the "
               "hidden truth over the true optimum (0 when the gate refuses it against the scenario's recipe or it "
               "fails under the truth; x (1 - late-OOM risk) near the memory limit). For the harness and people");
  sco->add_option("SCENARIO", score->scenario, "Scenario directory or scenario.yaml")->required();
  sco->add_option("TUNED", score->tuned, "The tuned recipe or wrapper file")->required()->check(CLI::ExistingFile);
  add_recipe_options(*sco, score->options);
  sco->add_option("--allow", score->gate.allow, "Numerics changes the tuned recipe may make (fp8); repeatable");
  sco->add_flag("--json", score->json,
                "Print JSON: {score, tuned_tokens_per_s_per_gpu, optimum_tokens_per_s_per_gpu, "
                "baseline_tokens_per_s_per_gpu, oom_risk, refused, failure}");
  sco->callback([score]() { command_status() = run_score(*score); });

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
