// ModelCorrection: the simulator's nominal model corrected by what this
// campaign measured, so a policy ranks candidates by what this cluster does
// rather than by the datasheet. Two layers, fitted from the measured runs
// only (never a scenario's truth):
//  - per-term factors: compute, exposed communication, pipeline bubble, the
//    rest of the step and activation-offload transfers, fitted by ridge regression of the measured step
//    times on the predicted terms (pulled towards 1, so two runs cannot
//    swing them far), and a memory factor from the measured peaks;
//  - per-lever effects: where a trial's measured speed-up over the setting
//    it was proposed from differs from the corrected prediction by more than
//    the noise, the difference becomes effects on the step, shared by the
//    values it moved to (each conditioned on one), so the model stops expecting what this cluster
//    does not deliver (or starts expecting what it does);
//  - memory effects: a setting that ran out of memory although the model
//    said it fits raises the memory of the values it moved to until it no
//    longer fits, so its neighbours are judged by what this cluster holds.
// The result is a sim::Perturbation the step model and the search take.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/sim/perturbation.h"
#include "attune/sim/workload.h"

namespace attune::policy {

struct MeasuredSetting {
  sim::Workload workload;
  double step_time_s = 0;
  std::optional<double> peak_reserved_gib;
  int parent = -1;          // index of the setting it was proposed from (-1: none)
  bool oom = false;         // it ran out of memory (no step time)
};

struct ModelCorrection {
  double compute = 1, communication = 1, bubble = 1, other = 1;
  double offload = 1;       // activation-offload transfers (host link), before the compute hides them
  double memory = 1;
  std::vector<sim::Effect> lever_effects;
  int settings = 0;         // measured settings it was fitted on

  sim::Perturbation perturbation() const;
};

// `noise`: the relative run-to-run noise below which a residual is left alone.
ModelCorrection fit_correction(const std::vector<MeasuredSetting>& measured, double noise = 0.015);

nlohmann::json to_json(const ModelCorrection& c);

}  // namespace attune::policy
