// Model FLOPs per token for the MFU a diagnosis reports, in the two
// conventions frameworks use: Megatron's, which counts causal
// attention at half, and the full-attention form (torchtitan). Recompute is
// never counted: this is model FLOPs, not hardware FLOPs. A diagnosis reports
// its TFLOP/s in Megatron's convention whenever it can (docs/diagnose.md), so
// that one run reads the same from every log format; the figure a framework
// logged is kept beside it with the formula it was computed with.
#pragma once

#include <string>

#include "attune/diagnose/step_sample.h"
#include "attune/recipe/model_spec.h"

namespace attune::diagnose {

enum class FlopsConvention { CausalHalved, FullAttention };
// "Megatron convention (...)", "torchtitan convention (...)": the formula in words.
std::string to_string(FlopsConvention c);

// How a framework's logged TFLOP/s figure was computed, in words ("" for None).
std::string describe(LoggedFlops f);

// Training FLOPs (forward + backward) per token at sequence length `seq_len`.
double flops_per_token(const recipe::ModelSpec& m, long long seq_len, FlopsConvention c);

}  // namespace attune::diagnose
