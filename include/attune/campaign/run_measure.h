// RunMeasure: what one run of a campaign measured, as the campaign journal
// keeps it (`run_finished` events) and a resumed campaign recalls it: the
// throughput and step time, the block throughputs the acceptance test ranks,
// peak memory, the loss curve the verification compares, the GPU-hours
// charged, and the failure class with its evidence when the run failed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/directory_run.h"
#include "attune/campaign/loss_check.h"

namespace attune::campaign {

struct RunMeasure {
  bool ok = false;
  std::string state;
  std::string failure;       // diagnoser class, or the run's state when the log says nothing
  std::string evidence;
  double tokens = 0, step_time_s = 0;
  std::vector<double> blocks;
  std::optional<double> peak_reserved_gib, headroom_gib;
  LossCurve loss;
  double gpu_hours = 0, elapsed_s = 0;
  bool interrupted = false;
};

nlohmann::json to_json(const RunMeasure& m);
// InputError naming `where` (the journal) when `j` is not a measurement.
RunMeasure measure_from_json(const nlohmann::json& j, const std::string& where);
// A finished run read the campaign's way: a run that completed without a
// failure but left no throughput is a failure ("unknown"), never a zero.
RunMeasure measure_of(const DirectoryRunResult& r, const AcceptanceRule& rule);

}  // namespace attune::campaign
