#include "attune/diagnose/flops.h"

namespace attune::diagnose {

std::string to_string(FlopsConvention c) {
  return c == FlopsConvention::CausalHalved ? "causal-halved (Megatron)" : "full-attention (torchtitan)";
}

namespace {

double mlp_params_per_layer(const recipe::ModelSpec& m, bool moe_layer) {
  const double gemms = m.mlp_matrices();  // SwiGLU/GeGLU have a gate GEMM
  if (!moe_layer) return m.hidden * static_cast<double>(m.ffn) * gemms;
  double routed = m.hidden * static_cast<double>(m.moe_ffn) * gemms * m.top_k;
  double shared = m.hidden * static_cast<double>(m.moe_ffn) * gemms * m.shared_experts;
  return routed + shared;
}

}  // namespace

// logs.md §1.5: every GEMM x3 (fwd, dgrad, wgrad) x2 (FMA) = 6 per parameter
// and token; attention QK^T and AV add 6*L*s*q per token, halved for causal.
double flops_per_token(const recipe::ModelSpec& m, long long seq_len, FlopsConvention c) {
  double h = m.hidden;
  double d = m.attention_head_dim();
  double q = m.heads * d;
  double kv = 2.0 * (m.kv_heads > 0 ? m.kv_heads : m.heads) * d;
  double attn_proj = h * (q + kv) + q * h;
  int moe_layers = m.is_moe() ? m.layers - m.dense_layers : 0;
  int dense_layers = m.layers - moe_layers;
  double mlp = dense_layers * mlp_params_per_layer(m, false) + moe_layers * mlp_params_per_layer(m, true);
  double linear = m.layers * attn_proj + mlp + h * m.vocab;
  double attention = 6.0 * m.layers * static_cast<double>(seq_len) * q;
  if (c == FlopsConvention::FullAttention) attention *= 2.0;
  return 6.0 * linear + attention;
}

}  // namespace attune::diagnose
