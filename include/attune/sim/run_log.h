// RunLog: the log a simulated run prints, in its framework's own format
// (Megatron-LM, Megatron-Bridge and Megatron-DeepSpeed iteration lines, NeMo's
// Lightning bars and ProgressPrinter lines, AutoModel step lines, torchtitan
// metrics lines, Hugging Face Trainer bars and dicts), with a slow first step,
// seeded noise, stragglers and a falling loss — or the failure's own lines at
// its own time: the PyTorch OOM at step 1, at the first optimizer step or late,
// an import error or argument check at start-up, NCCL's watchdog after a hang
// or a timeout, an NCCL error, an illegal memory access, Slurm's node-failure
// line. The diagnoser reads it back like a real run's log. Start-up, noise
// and failures: docs/simulator.md.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "attune/recipe/plan.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/step_model.h"

namespace attune::sim {

// One launch of a run: its steps, the seed of its noise (each launch draws
// its own: a run-level factor for its placement, slow nodes, per-step jitter,
// stragglers per GPU, node failures), how long it takes to start, and what of
// the prediction's failure risk strikes it.
struct RunOptions {
  int steps = 50;
  std::uint64_t seed = 1;
  NoiseModel noise;
  double startup_s = 60;             // process start to the first step (start-up: container, NCCL, model, data)
  double first_step_extra_s = 15;    // what the first step adds (allocator growth, lazy NCCL, compile, graph capture)
  double oom_risk = 0;               // chance the run OOMs late (memory within the truth's risk margin of HBM)
  double cross_node_share = 0;       // exposed cross-node communication / step time (run-level noise grows with it)
  double nccl_timeout_s = 600;       // the framework's collective timeout (Megatron's and torch's 10 minutes)
  std::string flavour;       // "" = the recipe's own (log_flavour); else one of log_flavours()
  // Called before a step's lines are written, with the simulated seconds
  // since the job started at which they appear (start-up included), and once
  // before a failure's text: `attune sim job` sleeps there to pace the log.
  std::function<void(double simulated_s)> before_lines;
};

// Seconds from launch to the first step: container start, NCCL
// initialisation (grows with the world), model build (with the weights a
// GPU holds), data loader and its workers, DeepEP buffers, FSDP wrapping;
// scaled by the truth's `startup`.
double startup_seconds(const Workload& w, const Perturbation& truth);
// What the first step takes on top of a steady one: torch.compile when on,
// CUDA-graph capture, allocator growth and lazy communicator set-up.
double first_step_extra_seconds(const Workload& w);

// Seconds a run of `steps` steps takes without noise or failures: start-up,
// the slow first steps, the steady ones. What a trial of it costs is this
// times its GPUs.
double expected_run_seconds(const Workload& w, const Prediction& p, const Perturbation& truth, int steps);

// A launch's options under a scenario's truth: its noise, start-up and risks.
RunOptions run_options(const Workload& w, const Prediction& p, const Perturbation& truth, std::uint64_t seed, int steps);

// How a simulated run went.
struct RunOutcome {
  double elapsed_s = 0;       // simulated wall time: start-up, steps, and the failure's own time
  std::string failure;        // "" or how it ended, as the diagnoser names it (oom, hang, node_failure, ...)
  int failed_at_step = 0;     // runtime failures: the step it died in (0: at start-up)
  double stalled_at_s = -1;   // hang / NCCL timeout: when its last step ended (a watchdog counts from there)
  double run_factor = 1;      // the run-level slowdown it drew (placement, slow nodes)
};

// The log formats write_run_log can print: "megatron", "bridge", "nemo",
// "automodel", "torchtitan", "deepspeed", "hf" (the diagnoser's parser names).
const std::vector<std::string>& log_flavours();

// The format the plan's framework prints: bridge, automodel and torchtitan
// their own, axolotl "hf", HyperPod by dialect ("hf" for llmft, else "nemo"),
// everything else "megatron". No recipe framework maps to "deepspeed".
std::string log_flavour(const recipe::Plan& plan);

// Writes the run's log; returns how it went. Throws std::invalid_argument
// for an unknown o.flavour or noise settings out of range.
RunOutcome write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out);

}  // namespace attune::sim
