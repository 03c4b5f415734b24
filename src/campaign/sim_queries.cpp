#include "attune/campaign/sim_queries.h"

#include "attune/sim/scenario.h"

namespace attune::campaign {

SimPrediction predict_target(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth) {
  const SimTarget t = load_sim_target(file, options, truth);
  SimPrediction out{sim::workload_from_recipe(t.recipe), {}};
  if (out.workload.plan.seq_len <= 0) {
    // A batch as long as its data makes it (an SFT set padded per batch) has
    // no step time the model can compute: said, not guessed.
    out.prediction.failure = "unpredictable";
    out.prediction.error = "the recipe states no sequence length (each batch is as long as its data makes it): the "
                           "simulator cannot time its steps";
    return out;
  }
  out.prediction = sim::predict(out.workload, t.perturbation);
  return out;
}

sim::Optimum optimum_of(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth,
                        const gate::GateOptions& gate, std::size_t candidates) {
  const SimTarget t = load_sim_target(file, options, truth);
  sim::OptimumOptions o;
  o.candidates = candidates;
  o.prior = truth.scenario_truth || !truth.truth_file.empty();
  const gate::CorrectnessGate g(gate);
  return sim::find_optimum(t.recipe, g, t.perturbation, o);
}

sim::TunedScore score_tuned_file(const std::string& scenario, const std::string& tuned, const recipe::RecipeOptions& options,
                                 const gate::GateOptions& gate) {
  const gate::CorrectnessGate g(gate);
  return sim::score_tuned(scenario, recipe::Recipe::load(tuned, options), g);
}

sim::ScenarioReport measure_scenarios(const std::string& dir, const gate::GateOptions& gate, bool record) {
  const gate::CorrectnessGate g(gate);
  return sim::scenario_report(sim::scenario_dirs(dir), g, record);
}

}  // namespace attune::campaign
