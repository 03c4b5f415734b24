// How the CLI shows the simulator's answers: a prediction and its breakdown,
// the optimum with its edits (and, under a truth, the prior's and greedy's),
// a tuned recipe's score, the scenarios' figures and targets, calibration.
#pragma once

#include "attune/sim/calibration.h"
#include "attune/sim/optimum.h"
#include "attune/sim/scenario_report.h"
#include "attune/sim/step_model.h"

namespace attune::cli {

void print_prediction(const sim::Workload& w, const sim::Prediction& p);
void print_optimum(const sim::Optimum& o);
void print_score(const sim::TunedScore& s);
void print_scenario_report(const sim::ScenarioReport& r);
void print_calibration(const sim::CalibrationResult& result);

}  // namespace attune::cli
