// Diagnosis: everything the diagnoser reads from a run's logs — the framework,
// the steady-state throughput (tokens/s/GPU, step time, TFLOP/s/GPU, MFU with
// its FLOPs convention), noise, memory and headroom, the loss curve, the
// framework's own time breakdown (timers), and the failure with its evidence. `attune diagnose` and the campaign use the same
// code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/diagnose/failure.h"
#include "attune/diagnose/flops.h"
#include "attune/diagnose/profile.h"
#include "attune/diagnose/steady_state.h"
#include "attune/diagnose/timer_table.h"
#include "attune/recipe/model_spec.h"

namespace attune::diagnose {

// What the log may not say, from the recipe or the command line.
struct DiagnoseOptions {
  std::string framework;                  // "" = detect from the text
  std::optional<recipe::ModelSpec> model; // for FLOPs when the log does not print them
  std::string gpu;                        // h100 | h200 | b200, for MFU and headroom
  std::string precision = "bf16";         // peak used for MFU: fp8 recipes use the FP8 peak
  int world = 0;                          // GPUs in the job
  long long seq_len = 0;
  long long global_batch = 0;             // samples per step (when the log does not print it)
  // > 0: read only the first this many bytes of each log: what a measurement
  // covered (RunStatus::measured_log_bytes), not the stop's aftermath.
  std::uint64_t log_bytes = 0;
};

struct Diagnosis {
  std::string framework;
  int steps = 0;                        // step samples read
  int timed_steps = 0;                  // ... of which carry a step time or a rate
  long last_step = 0;                   // the last step number the log printed; 0 when it printed none
  SteadyState steady;
  std::optional<double> step_time_s;
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> samples_per_s;
  // TFLOP/s/GPU and MFU in one convention, flops_convention: Megatron's
  // whenever the log's figure is in it or the model is known (computed from
  // tokens/s), so every log format of a run gives the same figure; else the
  // log's own figure under its own formula's name ("" when there is none).
  std::optional<double> tflops_per_gpu;
  std::optional<double> mfu;
  std::string flops_convention;
  std::string tflops_source;            // "log" or "computed"
  // The framework's own figures as it logged them, and how it counts.
  std::optional<double> logged_tflops_per_gpu;
  std::optional<double> logged_mfu;
  std::string logged_flops_convention;
  std::string throughput_source;        // tokens/s: "log" or "computed"
  std::optional<double> peak_tflops;    // the peak MFU is measured against
  std::optional<double> peak_allocated_gib;
  std::optional<double> peak_reserved_gib;
  std::optional<double> capacity_gib;
  std::optional<double> headroom_gib;
  std::vector<std::pair<long, double>> loss;  // (step, value)
  // The step times the steady state used, in log order (empty when the log
  // gives no times): what a campaign splits into per-run blocks to compare runs.
  std::vector<double> steady_step_times_s;
  std::optional<ProfileSummary> profile;  // from --profile: where GPU time goes
  std::vector<PhaseTime> timers;        // Megatron timers / DeepSpeed wall-clock breakdown, if printed
  TimeBreakdown time_breakdown;
  std::optional<Failure> failure;
  std::vector<std::string> notes;
};

// Reads the log files (in order, as one run) and diagnoses them. Throws
// InputError for an unreadable file, an empty one, or one LogReader::read_file
// refuses (not a regular file, not text, over the size cap).
Diagnosis diagnose_logs(const std::vector<std::string>& files, const DiagnoseOptions& options);
nlohmann::json to_json(const Diagnosis& d);

}  // namespace attune::diagnose
