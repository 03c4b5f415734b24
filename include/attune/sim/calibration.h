// Calibration: the published measurements the simulator is held to
// (calibration/throughput.csv: model, GPU, exact layout, measured tokens/s/GPU)
// turned into Workloads, predicted, and scored — per-row error, median and
// 90th-percentile absolute error, Spearman rank correlation within groups of
// the same model and GPU. Rows the model cannot represent are listed with the
// reason. `attune sim calibrate` prints this.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/sim/workload.h"

namespace attune::sim {

// One row of throughput.csv as written (numbers that are empty stay 0).
struct CalibrationRow {
  int line = 0;  // in the CSV file, for messages
  std::string source, model, gpu, precision, recompute, notes;
  int num_gpus = 0, tp = 0, pp = 0, vp = 0, cp = 0, ep = 0, dp = 0, mbs = 0;
  long long gbs = 0, seq_len = 0;
  double tokens_per_s_per_gpu = 0, tflops_per_gpu = 0, mfu = 0;
};

// Reads the CSV (quoted fields with commas). Throws InputError naming the file,
// line and column for a malformed file.
std::vector<CalibrationRow> read_calibration_csv(const std::string& path);
// The measurements file to calibrate against: `given`, else throughput.csv
// of the measurement corpus $ATTUNE_CORPUS names; InputError (naming --csv)
// when neither is there.
std::string calibration_csv(const std::string& given);

// The Workload a row describes, or nullopt with the reason it cannot be
// represented (unknown model, GPU outside the catalog, missing layout...).
std::optional<Workload> workload_from_row(const CalibrationRow& row, std::string& reason);

// Predicted tokens/s/GPU for a workload, or nullopt with a reason (e.g. the
// model predicts an OOM for a configuration that ran).
using Predictor = std::function<std::optional<double>(const Workload&, std::string& reason)>;

// The simulator as a Predictor. A row that does not say whether it recomputes
// ran with its recipe's default, which recomputes where memory needs it: a
// predicted OOM is retried with selective, then full recompute.
std::optional<double> simulator_predictor(const Workload& w, std::string& reason);

struct CalibrationResult {
  struct Row {
    CalibrationRow row;
    bool supported = false;
    std::string reason;        // why not supported
    double predicted = 0;      // tokens/s/GPU
    double error = 0;          // (predicted - measured) / measured
    std::string group;         // model | GPU type
  };
  std::vector<Row> rows;
  int supported = 0;
  int excluded = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double spearman = 0;         // mean over groups with >= 3 supported rows
  int spearman_groups = 0;
};

CalibrationResult calibrate(const std::vector<CalibrationRow>& rows, const Predictor& predict);
nlohmann::json to_json(const CalibrationResult& r);

}  // namespace attune::sim
