// RunLog: the log a simulated run prints, in its framework's own format
// (Megatron-LM, Megatron-Bridge and Megatron-DeepSpeed iteration lines, NeMo's
// Lightning bars and ProgressPrinter lines, AutoModel step lines, torchtitan
// metrics lines, Hugging Face Trainer bars and dicts), with a slow first step,
// seeded noise, stragglers and a falling loss — or the framework's error where
// the run would fail (the PyTorch OOM, an argument check). The diagnoser reads
// it back like a real run's log. Formats: logs.md; noise, warm-up: perfmodel.md §8.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "attune/recipe/plan.h"
#include "attune/sim/step_model.h"

namespace attune::sim {

// Seconds a simulated run spends before its first step (process start, NCCL
// init, checkpoint load); write_run_log's wall time includes them.
inline constexpr double kStartupSeconds = 60;

struct RunOptions {
  int steps = 50;
  std::uint64_t seed = 1;
  double cv = 0.02;          // run-to-run noise of the step time
  double warmup_factor = 20; // first step / steady step (compile, NCCL init, allocator growth)
  double straggler_probability = 0;  // chance that a steady step waits for a straggler (0..1)
  double straggler_slowdown = 1.5;   // such a step's time / its time without the straggler
  std::string flavour;       // "" = the recipe's own (log_flavour); else one of log_flavours()
  // Called before a step's lines are written, with the simulated seconds
  // since the job started at which they appear (start-up included), and once
  // before a failure's text: `attune sim job` sleeps there to pace the log.
  std::function<void(double simulated_s)> before_lines;
};

// A run's options under a scenario's hidden truth: its noise and stragglers.
RunOptions run_options(const Perturbation& truth, std::uint64_t seed, int steps);

// The log formats write_run_log can print: "megatron", "bridge", "nemo",
// "automodel", "torchtitan", "deepspeed", "hf" (the diagnoser's parser names).
const std::vector<std::string>& log_flavours();

// The format the plan's framework prints: bridge, automodel and torchtitan
// their own, axolotl "hf", HyperPod by dialect ("hf" for llmft, else "nemo"),
// everything else "megatron". No recipe framework maps to "deepspeed".
std::string log_flavour(const recipe::Plan& plan);

// Writes the run's log; returns the simulated wall time in seconds (steps and
// start-up). Throws std::invalid_argument for an unknown o.flavour or
// straggler settings out of range.
double write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out);

}  // namespace attune::sim
