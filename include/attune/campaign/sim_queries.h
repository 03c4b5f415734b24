// SimQueries: what `attune sim predict|optimum|score|scenarios` asks of the
// simulator, one call each: the recipe or scenario loaded under the truth
// asked for, the gate built from its options, the answer computed. The
// command prints it.
#pragma once

#include <cstddef>
#include <string>

#include "attune/campaign/sim_target.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/optimum.h"
#include "attune/sim/scenario_report.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"

namespace attune::campaign {

struct SimPrediction {
  sim::Workload workload;
  sim::Prediction prediction;
};

// The recipe's (or scenario's) prediction under the truth asked for.
SimPrediction predict_target(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth);

// The best the simulator finds within the gate. Without a truth the prior's
// optimum is the optimum itself, so it is searched only under a truth.
sim::Optimum optimum_of(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth,
                        const gate::GateOptions& gate, std::size_t candidates);

// A tuned recipe file scored on a scenario as benchmarks score it.
sim::TunedScore score_tuned_file(const std::string& scenario, const std::string& tuned, const recipe::RecipeOptions& options,
                                 const gate::GateOptions& gate);

// Every scenario under `dir` measured under its truth (and, with `record`,
// its figures written into its harness file).
sim::ScenarioReport measure_scenarios(const std::string& dir, const gate::GateOptions& gate, bool record);

}  // namespace attune::campaign
