// Model FLOPs per token for the MFU a diagnosis reports, in the two
// conventions frameworks use: Megatron's, which counts causal
// attention at half, and the full-attention form (torchtitan). Recompute is
// never counted: this is model FLOPs, not hardware FLOPs.
#pragma once

#include <string>

#include "attune/recipe/model_spec.h"

namespace attune::diagnose {

enum class FlopsConvention { CausalHalved, FullAttention };
std::string to_string(FlopsConvention c);  // "causal-halved (Megatron)", "full-attention (torchtitan)"

// Training FLOPs (forward + backward) per token at sequence length `seq_len`.
double flops_per_token(const recipe::ModelSpec& m, long long seq_len, FlopsConvention c);

}  // namespace attune::diagnose
