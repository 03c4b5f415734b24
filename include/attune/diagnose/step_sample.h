// StepSample: what one per-step (or per-interval) log line says about a training
// run, in common units, whatever framework printed it. Fields a framework does
// not print stay empty; the diagnoser derives them from the model and plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attune/util/chunked_vector.h"
#include "attune/util/compact_optional.h"

namespace attune::diagnose {

// The formula a logged TFLOP/s figure was computed with: frameworks count
// FLOPs differently (describe() in flops.h says how).
enum class LoggedFlops : std::uint8_t {
  None,               // no figure, or one of unknown origin
  Megatron,           // Megatron-LM / Bridge: causal attention halved, recompute not counted
  MegatronDeepSpeed,  // Megatron-DeepSpeed's throughput_calculator: recompute counted
  Torchtitan,         // full attention
  NemoCallback,       // NeMo's FLOPs measurement callback
  HyperPod,           // the SageMaker HyperPod adapter's compute_tflops
};

// Held once per logged step (millions for a long run), so it is kept small
// (96 bytes): rates and memory as float (7 significant digits, more than any
// log prints), step time and loss as double, "not printed" without a flag.
struct StepSample {
  long step = 0;                 // iteration number as the log prints it (the last of an interval)
  long line = 0;                 // where the sample was read
  CompactOptional<double> step_time_s;          // seconds per optimizer step (interval average)
  CompactOptional<double> loss;                 // nullopt also when the field is missing on a NaN step
  CompactOptional<float> tokens_per_s_per_gpu;
  CompactOptional<float> tokens_per_s;          // whole job
  CompactOptional<float> samples_per_s;         // whole job
  CompactOptional<float> tflops_per_gpu;        // as the framework computed it
  CompactOptional<float> mfu;                   // 0..1, as the framework computed it
  CompactOptional<float> grad_norm;
  CompactOptional<float> lr;
  CompactOptional<int> global_batch;            // samples in this step, if printed
  CompactOptional<int> skipped_iterations;
  CompactOptional<int> nan_iterations;
  CompactOptional<float> mem_allocated_gib;     // current or peak allocated, GiB (1024^3)
  CompactOptional<float> mem_max_allocated_gib;
  CompactOptional<float> mem_reserved_gib;
  CompactOptional<float> mem_max_reserved_gib;
  int steps_in_interval = 1;     // Megatron logs every log_interval iterations: averages over this many
  bool loss_is_nan = false;      // printed nan/inf, or the loss field is missing where it should be
  LoggedFlops tflops_formula = LoggedFlops::None;  // of tflops_per_gpu (in the padding: still 96 bytes)
  bool step_counted = false;     // `step` is the parser's count of lines, not a number the log printed
  bool rate_smoothed = false;    // step time is a progress bar's smoothed rate over recent steps,
                                 // not the interval since the previous line
};

// Every step sample of a run, in log order.
using StepSeries = ChunkedVector<StepSample>;

// Something that disturbs the steps around it, so the steady state leaves them out.
struct Disturbance {
  enum class Kind { Checkpoint, Evaluation, Profiler, GarbageCollection, DataEpoch, Other };
  Kind kind = Kind::Other;
  long line = 0;
  std::string evidence;
};

}  // namespace attune::diagnose
