// The simulator's own knowledge of the choices (knobs.h), as effects on the
// parts of a step: the attention kernels' efficiency, what compile and CUDA
// graphs remove, what a forced NCCL protocol, algorithm or channel count
// costs at this setting's message sizes, the bucket size, the data-loader
// workers, the MoE dispatchers and context-parallel schemes, and the
// combinations the frameworks reject. Each figure's source is in
// docs/simulator.md ("Choices"). Internal to src/sim.
#pragma once

#include "attune/sim/perturbation.h"
#include "attune/sim/step_parts.h"
#include "attune/sim/workload.h"
#include "step_shape.h"

namespace attune::sim::detail {

struct NominalInputs {
  const Shape& sh;
  const Perturbation& pert;
  double per_mb_compute = 0;   // seconds of one micro-batch's GEMMs and attention (nominal)
  double ep_alltoall = 0, ep_allgather = 0, ep_deepep = 0;  // one MoE layer's dispatch by dispatcher
  double data_load = 0;        // seconds of one micro-batch's data on the host, no workers
  double nvls_bytes = 0;       // what NVLS buffers take
};

void add_nominal_effects(const Workload& w, const NominalInputs& in, StepParts& parts, bool with_messages);

// A truth file's failure rule, resolved for this setting (dropped when its
// structural or layout conditions fail here).
void add_failure_rule(const FailureRule& rule, const Workload& w, StepParts& parts);

}  // namespace attune::sim::detail
