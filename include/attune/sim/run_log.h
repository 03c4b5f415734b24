// RunLog: the log a simulated run prints, in the recipe framework's own format
// (Megatron-LM iteration lines and memory report, torchtitan metrics lines,
// Hugging Face Trainer dicts), with a slow first step, seeded run-to-run noise
// and a falling loss — or the framework's error where the run would fail (the
// PyTorch OOM message, an argument assertion). The diagnoser reads it back like
// a real run's log. Formats: logs.md; noise and warm-up: perfmodel.md §8.
#pragma once

#include <cstdint>
#include <ostream>

#include "attune/sim/step_model.h"

namespace attune::sim {

struct RunOptions {
  int steps = 50;
  std::uint64_t seed = 1;
  double cv = 0.02;          // run-to-run noise of the step time
  double warmup_factor = 20; // first step / steady step (compile, NCCL init, allocator growth)
};

// Log flavour by framework: "megatron" (also bridge, hyperpod), "torchtitan", "hf" (axolotl), and
// "automodel" (printed as Megatron-style lines until its own format is emulated).
std::string log_flavour(const std::string& framework);

// Writes the run's log; returns the simulated wall time in seconds (steps and start-up).
double write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out);

}  // namespace attune::sim
