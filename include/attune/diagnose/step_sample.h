// StepSample: what one per-step (or per-interval) log line says about a training
// run, in common units, whatever framework printed it. Fields a framework does
// not print stay empty; the diagnoser derives them from the model and plan.
#pragma once

#include <optional>
#include <string>

namespace attune::diagnose {

struct StepSample {
  long step = 0;                 // iteration number as the log prints it (the last of an interval)
  long steps_in_interval = 1;    // Megatron logs every log_interval iterations: averages over this many
  std::optional<double> step_time_s;          // seconds per optimizer step (interval average)
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> tokens_per_s;         // whole job
  std::optional<double> samples_per_s;        // whole job
  std::optional<double> tflops_per_gpu;       // as the framework computed it
  std::optional<double> mfu;                  // 0..1, as the framework computed it
  std::optional<double> loss;                 // nullopt also when the field is missing on a NaN step
  std::optional<double> grad_norm;
  std::optional<double> lr;
  std::optional<long> global_batch;           // samples in this step, if printed
  std::optional<long> skipped_iterations;
  std::optional<long> nan_iterations;
  std::optional<double> mem_allocated_gib;    // current or peak allocated, GiB (1024^3)
  std::optional<double> mem_max_allocated_gib;
  std::optional<double> mem_reserved_gib;
  std::optional<double> mem_max_reserved_gib;
  bool loss_is_nan = false;                   // printed nan/inf, or the loss field is missing where it should be
  long line = 0;                              // where the sample was read
};

// Something that disturbs the steps around it, so the steady state leaves them out.
struct Disturbance {
  enum class Kind { Checkpoint, Evaluation, Profiler, GarbageCollection, DataEpoch, Other };
  Kind kind = Kind::Other;
  long line = 0;
  std::string evidence;
};

}  // namespace attune::diagnose
