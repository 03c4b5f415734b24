// `attune sim ...`: the simulated cluster. `predict` shows what a recipe would
// do on the simulated hardware and why; `run` and `job` print the run's log
// (`job` paced like the real run, as a cluster payload); `optimum` is the best
// the simulator finds within the gate; `scenarios` measures the benchmark
// scenarios; `calibrate` holds the model to the published measurements.
// Everything simulates the nominal model unless --truth asks for a
// scenario's hidden truth.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/campaign/sim_job.h"
#include "attune/campaign/sim_queries.h"
#include "attune/campaign/sim_target.h"
#include "attune/cli/commands.h"
#include "attune/cli/flag_checks.h"
#include "attune/cli/sim_output.h"
#include "attune/cli/truth_flags.h"
#include "attune/diagnose/flops.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/calibration.h"
#include "attune/sim/optimum.h"
#include "attune/sim/scenario.h"
#include "attune/sim/scenario_report.h"
#include "attune/sim/step_model.h"

namespace attune::cli {

namespace {

// --log-format: one of the simulator's log formats (help shows them beside the type).
CLI::Validator log_format() {
  return one_of(sim::log_flavours(), "log format", "{" + fmt::format("{}", fmt::join(sim::log_flavours(), ",")) + "}");
}

struct PredictArgs {
  std::string file;
  recipe::RecipeOptions options;
  campaign::TruthChoice sim;
  bool json = false;
};

struct RunArgs {
  std::string file;
  recipe::RecipeOptions options;
  campaign::TruthChoice sim;
  int steps = 50;
  double time_scale = 0;  // job: simulated seconds per real second (0 = do not sleep)
  std::string log_file;   // job: where to write the log ("" = stdout)
  std::string flavour;    // log format ("" = the recipe framework's)
};

struct OptimumArgs {
  std::string file;
  recipe::RecipeOptions options;
  campaign::TruthChoice sim;
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

int run_predict(const PredictArgs& a) {
  const campaign::SimPrediction p = campaign::predict_target(a.file, a.options, a.sim);
  if (a.json) {
    // The model FLOPs per token in both conventions: a log in torchtitan's
    // (attention in full) prints TFLOP/s scaled from the causal-halved figure.
    nlohmann::json j = sim::to_json(p.prediction);
    const long long seq = p.workload.plan.seq_len;
    j["flops_per_token"] = {
        {"causal_halved", diagnose::flops_per_token(p.workload.model, seq, diagnose::FlopsConvention::CausalHalved)},
        {"full_attention", diagnose::flops_per_token(p.workload.model, seq, diagnose::FlopsConvention::FullAttention)}};
    print_json(j);
  }
  else print_prediction(p.workload, p.prediction);
  return 0;
}

int run_run(const RunArgs& a) {
  const campaign::SimTarget t = campaign::load_sim_target(a.file, a.options, a.sim);
  return campaign::run_sim_job(t, {a.steps, a.flavour, 0}, std::cout).failure.empty() ? 0 : 1;
}

// The log paced like the real run, for a cluster job's payload.
int run_job(const RunArgs& a) {
  const campaign::SimTarget t = campaign::load_sim_target(a.file, a.options, a.sim);
  const campaign::SimJobOptions o{a.steps, a.flavour, a.time_scale};
  const sim::RunOutcome r = a.log_file.empty() ? campaign::run_sim_job(t, o, std::cout) : campaign::run_sim_job(t, o, a.log_file);
  return r.failure.empty() ? 0 : 1;
}

int run_optimum(const OptimumArgs& a) {
  const sim::Optimum o = campaign::optimum_of(a.file, a.options, a.sim, a.gate, static_cast<std::size_t>(a.candidates));
  if (a.json) print_json(sim::to_json(o));
  else print_optimum(o);
  return 0;
}

int run_score(const ScoreArgs& a) {
  const sim::TunedScore s = campaign::score_tuned_file(a.scenario, a.tuned, a.options, a.gate);
  if (a.json) print_json(sim::to_json(s));
  else print_score(s);
  return 0;
}

int run_scenarios(const ScenariosArgs& a) {
  const sim::ScenarioReport r = campaign::measure_scenarios(a.dir, a.gate, a.record);
  if (a.json) print_json(sim::to_json(r));
  else print_scenario_report(r);
  return r.targets.met ? 0 : 1;
}

int run_calibrate(const CalibrateArgs& a) {
  sim::CalibrationResult result =
      sim::calibrate(sim::read_calibration_csv(sim::calibration_csv(a.csv)), sim::simulator_predictor);
  if (a.json) print_json(sim::to_json(result));
  else print_calibration(result);
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
  add_truth_flags(*p, predict->sim, false);
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
  add_truth_flags(*r, run->sim, true);
  r->add_option("--steps", run->steps, "Training steps to print")->check(whole_number(1));
  r->add_option("--log-format", run->flavour, "Log format (default: the recipe framework's own)")
      ->check(log_format());
  r->callback([run]() { command_status() = run_run(*run); });

  auto job = std::make_shared<RunArgs>();
  job->time_scale = 1;
  CLI::App* j = sim->add_subcommand("job", "The same run as a cluster job's payload (what a mock cluster's jobs "
                                           "run): prints the log over the run's simulated duration divided by "
                                           "--time-scale, then exits 0, or 1 where the run fails");
  j->add_option("RECIPE", job->file, "Recipe file, attune wrapper file, or scenario file or directory")->required();
  add_recipe_options(*j, job->options);
  add_truth_flags(*j, job->sim, true);
  j->add_option("--steps", job->steps, "Training steps to run")->check(whole_number(1));
  j->add_option("--log-format", job->flavour, "Log format (default: the recipe framework's own)")
      ->check(log_format());
  j->add_option("--time-scale", job->time_scale,
                "Simulated seconds per real second (100: a 10-minute run takes 6 s)")
      ->check(positive_number());
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
  add_truth_flags(*o, optimum->sim, false);
  o->add_option("--allow", optimum->gate.allow, "Numerics change the search may make (fp8); repeatable");
  o->add_option("--candidates", optimum->candidates,
                "Ranked candidates turned into recipes and checked by the gate before giving up (default 32)")
      ->check(whole_number(1));
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
      ->check(existing_directory());
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
  sco->add_option("TUNED", score->tuned, "The tuned recipe or wrapper file")->required()->check(existing_file());
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
