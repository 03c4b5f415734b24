// Knobs: the levers beyond the layout that the simulator reads, in its own
// vocabulary (every framework's spelling maps onto it: recipe_knobs.h).
// Two kinds:
//  - structural levers (recompute, offload, sharding, sequence parallel, the
//    distributed optimizer, FP8), fields the step and memory models compute with;
//  - choices (attention kernel, compile, CUDA graphs, NCCL settings, bucket
//    size, data-loader workers, MoE dispatcher, the overlap flags, ...), small enumerations whose
//    every effect is a factor on a part of the step or of memory
//    (effects.h). The search bounds what a choice it has not fixed yet can
//    still gain from those factors, which is what makes it exact.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::sim {

enum class Choice : std::uint8_t {
  Attention,       // attention kernel
  Compile,         // elementwise work fused (torch.compile, or Transformer Engine's fused kernels)
  CudaGraphs,      // what CUDA graphs capture
  Nvls,            // NCCL_NVLS_ENABLE: NVLink SHARP collectives inside a node
  NcclAlgo,        // NCCL_ALGO (read only: the gate refuses to change it)
  NcclProto,       // NCCL_PROTO
  NcclChannels,    // NCCL_MIN_NCHANNELS
  Bucket,          // gradient bucket size of DDP / the distributed optimizer / FSDP
  MaxConnections,  // CUDA_DEVICE_MAX_CONNECTIONS
  Workers,         // data-loader worker processes
  Dispatcher,      // MoE token dispatcher
  CpComm,          // context-parallel attention communication
  Expandable,      // PyTorch allocator expandable segments
  OverlapGradReduce,   // DP gradient reduction overlapped with the backward
  OverlapParamGather,  // DP parameter gather overlapped with the forward
  TpCommOverlap,       // TP collectives overlapped with GEMMs (userbuffers, async TP)
};
inline constexpr std::size_t kChoiceCount = 16;

// Values of each choice (indices into choice_values()).
namespace attention {
enum : std::uint8_t { kFused, kFlash, kFlash3, kSdpa, kFlex, kUnfused };  // TE/cuDNN fused, FA2, FA3, PyTorch SDPA, FlexAttention, eager math
}
namespace cuda_graphs {
enum : std::uint8_t { kNone, kLayers, kFull };  // per-layer capture (TE / local), the whole iteration
}
namespace nccl_algo {
enum : std::uint8_t { kAuto, kRing, kTree };
}
namespace nccl_proto {
enum : std::uint8_t { kAuto, kSimple, kLL, kLL128 };
}
namespace nccl_channels {
enum : std::uint8_t { kAuto, k4, k16, k32 };
}
namespace bucket {
enum : std::uint8_t { kDefault, kSmall, kLarge };  // the framework's default, a quarter of it, four times it
}
namespace max_connections {
enum : std::uint8_t { kUnset, k1, k32 };  // unset: the CUDA default of 8
}
namespace workers {
enum : std::uint8_t { k0, k1, k2, k4, k8 };
}
namespace dispatcher {
enum : std::uint8_t { kAllToAll, kAllGather, kDeepEp };
}
namespace cp_comm {
enum : std::uint8_t { kP2p, kAllGather, kA2a };
}

// "attention", "compile", ... and each choice's values ("fused", "flash", ...).
std::string_view choice_name(Choice c);
const std::vector<std::string_view>& choice_values(Choice c);
std::optional<Choice> choice_by_name(std::string_view name);
// Index of `value` among choice_values(c), or nullopt.
std::optional<std::uint8_t> choice_value(Choice c, std::string_view value);
// Data-loader workers of a Workers value (0, 1, 2, 4, 8).
int worker_count(std::uint8_t value);
// The Workers value for a worker count (the nearest listed one at or below it).
std::uint8_t workers_value(long long count);

// Modules Megatron's selective recompute (--recompute-modules) re-runs.
namespace recompute_module {
enum : unsigned { kCoreAttn = 1, kMlp = 2, kMoeAct = 4, kLayerNorm = 8, kMlaUpProj = 16 };
// Each module's bit and its name as Megatron spells it.
struct Name {
  unsigned bit;
  std::string_view name;
};
const std::vector<Name>& names();
// The bit of one module's name (0: not a module).
unsigned bit_of(std::string_view name);
// The modules' names, in names() order, joined by `separator`.
std::string text_of(unsigned modules, std::string_view separator);
}  // namespace recompute_module

struct Knobs {
  // ---- structural levers
  bool sequence_parallel = true;        // TP with SP (activations sharded between TP ranks)
  bool distributed_optimizer = true;    // ZeRO-1-like optimizer sharding over DP
  bool grads_fp32 = false;              // fp32 gradient buffer (grad_reduce_in_fp32); performance recipes keep bf16
  int zero_stage = 0;                   // 0 none, 1 optimizer, 2 +grads, 3 +params (FSDP full shard)
  bool reshard_after_forward = true;    // FSDP: gathered weights freed after forward (false: kept until backward)
  bool per_op_selective = false;        // torchtitan's per-op SAC: every other matmul recomputed, attention kept
  std::string recompute_granularity = "none";  // none | selective | full
  int recompute_num_layers = 0;         // full recompute: layers per stage recomputed (0 = all)
  unsigned recompute_modules = recompute_module::kCoreAttn;  // selective: what is re-run
  int offload_layers = 0;               // activation offload: layers per stage whose saved activations go to the CPU (-1 = all)
  bool param_offload = false;           // FSDP CPU offload of parameters, gradients and optimizer state
  bool fp8 = false;                     // FP8 GEMMs (Transformer Engine / torchao)
  bool mxfp8 = false;                   // FP8 with 1x32 block scales (Blackwell): less end-to-end gain than per-tensor
  bool fp8_param_gather = false;        // no BF16 weight copy kept beside FP8
  double optimizer_cpu_offload = 0;     // fraction of optimizer state on the CPU
  bool bf16_moments = false;            // precision-aware optimizer: Adam's m and v in bf16 (a numerics setting the recipe states)
  bool loss_fp32 = true;                // logits upcast to fp32 for the loss (AutoModel's fp32_upcast: false keeps bf16)
  bool uneven_pipeline_split = false;   // first/last stage sizes set (layers need not divide by PP)
  bool sft_data = false;                // fine-tuning data prepared on the fly (tokenised, padded) rather than pre-packed
  // The source did not say whether it recomputes (published measurements):
  // its recipe default may, so a predicted OOM is retried with recompute.
  bool recompute_unstated = false;

  // ---- choices (defaults: what Megatron-LM's performance recipes run with)
  std::array<std::uint8_t, kChoiceCount> choices = default_choices();

  std::uint8_t get(Choice c) const { return choices[static_cast<std::size_t>(c)]; }
  void set(Choice c, std::uint8_t v) { choices[static_cast<std::size_t>(c)] = v; }
  bool is(Choice c, std::uint8_t v) const { return get(c) == v; }

  bool flash_attention() const { return get(Choice::Attention) != attention::kUnfused; }
  bool compiled() const { return get(Choice::Compile) == 1; }
  bool cuda_graphs() const { return get(Choice::CudaGraphs) != cuda_graphs::kNone; }
  bool deepep() const { return get(Choice::Dispatcher) == dispatcher::kDeepEp; }
  bool expandable_segments() const { return get(Choice::Expandable) == 1; }
  bool overlap_grad_reduce() const { return get(Choice::OverlapGradReduce) == 1; }
  bool overlap_param_gather() const { return get(Choice::OverlapParamGather) == 1; }
  bool tp_comm_overlap() const { return get(Choice::TpCommOverlap) == 1; }

  static std::array<std::uint8_t, kChoiceCount> default_choices();
};

}  // namespace attune::sim
