#include "attune/diagnose/flops.h"

namespace attune::diagnose {

std::string to_string(FlopsConvention c) {
  return c == FlopsConvention::CausalHalved
             ? "Megatron convention (model FLOPs: 6 per weight and token + causal attention at half, recompute not "
               "counted)"
             : "torchtitan convention (model FLOPs: 6 per weight and token + attention in full, recompute not counted)";
}

std::string describe(LoggedFlops f) {
  switch (f) {
    case LoggedFlops::None: return "";
    case LoggedFlops::Megatron: return to_string(FlopsConvention::CausalHalved);
    case LoggedFlops::Torchtitan: return to_string(FlopsConvention::FullAttention);
    case LoggedFlops::MegatronDeepSpeed:
      return "Megatron-DeepSpeed's throughput_calculator (hardware FLOPs: recompute counted as a 4th pass under "
             "activation checkpointing, attention in full, the MLP as 4h)";
    case LoggedFlops::NemoCallback: return "NeMo's FLOPs callback (its own per-model formula)";
    case LoggedFlops::HyperPod:
      return "the HyperPod adapter's compute_tflops (attention in full, a dense MLP as two GEMMs)";
  }
  return "";
}

namespace {

double mlp_params_per_layer(const recipe::ModelSpec& m, bool moe_layer) {
  const double gemms = m.mlp_matrices();  // SwiGLU/GeGLU have a gate GEMM
  if (!moe_layer) return m.hidden * static_cast<double>(m.ffn) * gemms;
  double routed = m.hidden * static_cast<double>(m.moe_ffn) * gemms * m.top_k;
  double shared = m.hidden * static_cast<double>(m.moe_ffn) * gemms * m.shared_experts;
  return routed + shared;
}

// Multi-head latent attention (Megatron's num_floating_point_operations):
// the query and key/value low-rank down and up projections, the shared rope
// key, and the output projection, per token.
double mla_projection_params(const recipe::ModelSpec& m) {
  const double h = m.hidden, n = m.heads;
  const double qk = m.qk_nope_head_dim, rope = m.qk_rope_head_dim, v = m.v_head_dim;
  const double q = m.q_lora_rank > 0 ? m.q_lora_rank * (h + n * (qk + rope) + 1) : h * n * (qk + rope);
  return q + m.kv_lora_rank * (h + n * (qk + v) + 1) + h * rope + n * v * h;
}

}  // namespace

// Megatron's convention: every GEMM x3 (fwd, dgrad, wgrad) x2 (FMA) = 6 per parameter
// and token; attention QK^T and AV add 6*L*s*q per token, halved for causal.
double flops_per_token(const recipe::ModelSpec& m, long long seq_len, FlopsConvention c) {
  double h = m.hidden;
  double d = m.attention_head_dim();
  double q = m.heads * d;
  double kv = 2.0 * (m.kv_heads > 0 ? m.kv_heads : m.heads) * d;
  double attn_proj = m.is_mla() ? mla_projection_params(m) : h * (q + kv) + q * h;
  int moe_layers = m.is_moe() ? m.layers - m.dense_layers : 0;
  int dense_layers = m.layers - moe_layers;
  double mlp = dense_layers * mlp_params_per_layer(m, false) + moe_layers * mlp_params_per_layer(m, true);
  double linear = m.layers * attn_proj + mlp + h * m.vocab;
  // QK^T over the query/key width and AV over the value width, halved for causal.
  const double qk_av = m.is_mla() ? m.heads * double(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) : 2 * q;
  double attention = 3.0 * m.layers * static_cast<double>(seq_len) * qk_av;
  if (c == FlopsConvention::FullAttention) attention *= 2.0;
  return 6.0 * linear + attention;
}

}  // namespace attune::diagnose
