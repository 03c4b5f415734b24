// ModelSpec: the architecture of a transformer model, as far as throughput and
// the validity rules need it (layers, widths, heads, experts, MLA dims). Presets
// for common models are data (skills/models.yaml, compiled in); a recipe's own
// architecture fields override a preset's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::recipe {

struct ModelSpec {
  std::string name;                  // preset id, e.g. "llama3-8b"
  std::string display;               // e.g. "Llama 3.1 8B"
  std::vector<std::string> aliases;  // names seen in recipes: "meta-llama/Llama-3.1-8B", "8B"...
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;          // = heads for MHA
  int head_dim = 0;          // 0 means hidden / heads
  int ffn = 0;               // dense FFN hidden size
  int vocab = 0;
  int max_seq = 0;           // trained context length
  bool tied_embeddings = false;
  std::string activation = "swiglu";  // swiglu | gelu | geglu ...
  // Mixture of experts (experts == 0 for dense models).
  int experts = 0;
  int top_k = 0;
  int shared_experts = 0;
  int moe_ffn = 0;           // per-expert FFN hidden size
  int dense_layers = 0;      // leading layers that stay dense (DeepSeek-V3: 3)
  // Multi-head latent attention (0 when not MLA).
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  bool is_moe() const { return experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  // head_dim when the model sets it, else hidden / heads.
  double attention_head_dim() const {
    return head_dim > 0 ? head_dim : (heads > 0 ? static_cast<double>(hidden) / heads : 0);
  }
  // Weight matrices per MLP: 3 for gated activations (SwiGLU, GeGLU), else 2.
  int mlp_matrices() const;
};

// All built-in presets.
const std::vector<ModelSpec>& model_presets();
// A preset by id or alias, case-insensitive; also matches names that contain an
// alias ("meta-llama/Llama-3.1-70B-Instruct" -> llama3-70b). nullptr if none.
const ModelSpec* find_model_preset(std::string_view name);

}  // namespace attune::recipe
