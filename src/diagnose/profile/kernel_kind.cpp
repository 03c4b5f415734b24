#include "kernel_kind.h"

#include <array>

namespace attune::diagnose::profile {
namespace {

enum class Where : std::uint8_t { kPrefix, kAnywhere };

// One row: `text` found at the start of the name (kPrefix) or anywhere in it;
// when `also` is non-empty, one of those words must appear too (to tell a
// library's communication kernels from its other kernels).
struct KindPattern {
  Where where;
  std::string_view text;
  KernelKind kind;
  std::array<std::string_view, 3> also{};
};

using K = KernelKind;

// The first matching row wins, so memory rows come before the broad "hip"
// prefix (hipMemcpy is a copy, not a collective).
constexpr std::array kPatterns{
    // Memory: HTA `^(hip)?Memcpy|^(hip)?Memset|^dma`; nsys names copies
    // "[CUDA memcpy Host-to-Device]" / "[CUDA memset]".
    KindPattern{Where::kPrefix, "Memcpy", K::kMemory},
    KindPattern{Where::kPrefix, "Memset", K::kMemory},
    KindPattern{Where::kPrefix, "hipMemcpy", K::kMemory},
    KindPattern{Where::kPrefix, "hipMemset", K::kMemory},
    KindPattern{Where::kPrefix, "dma", K::kMemory},
    KindPattern{Where::kPrefix, "[CUDA memcpy", K::kMemory},
    KindPattern{Where::kPrefix, "[CUDA memset", K::kMemory},
    // NCCL/RCCL: HTA `^nccl|^hip|^hccl|ncclKernel`; NCCL >= 2.19 names its
    // kernels ncclDevKernel_*, older ones ncclKernel_*; templates start "void ".
    KindPattern{Where::kPrefix, "nccl", K::kCommunication},
    KindPattern{Where::kAnywhere, "ncclKernel", K::kCommunication},
    KindPattern{Where::kAnywhere, "ncclDevKernel", K::kCommunication},
    KindPattern{Where::kPrefix, "rccl", K::kCommunication},
    KindPattern{Where::kPrefix, "hip", K::kCommunication},
    KindPattern{Where::kPrefix, "hccl", K::kCommunication},
    // DeepEP expert-parallel all-to-all (deep_ep::, DeepSeek's dpsk::ep::).
    KindPattern{Where::kAnywhere, "deep_ep::", K::kCommunication, {"dispatch", "combine", "notify"}},
    KindPattern{Where::kAnywhere, "::ep::", K::kCommunication, {"dispatch", "combine", "notify"}},
    // TensorRT-LLM custom all-reduce, vLLM custom all-reduce, MSCCL++.
    KindPattern{Where::kAnywhere, "oneShotAllReduceKernel", K::kCommunication},
    KindPattern{Where::kAnywhere, "twoShotAllReduceKernel", K::kCommunication},
    KindPattern{Where::kAnywhere, "cross_device_reduce", K::kCommunication},
    KindPattern{Where::kAnywhere, "mscclpp", K::kCommunication},
    // Transformer Engine comm-GEMM overlap (userbuffers_*, kuserbuffers_*).
    KindPattern{Where::kAnywhere, "userbuffers", K::kCommunication},
};

bool has_any(std::string_view name, const std::array<std::string_view, 3>& words) {
  if (words[0].empty()) return true;
  for (std::string_view w : words) {
    if (!w.empty() && name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

bool matches(const KindPattern& p, std::string_view name) {
  const bool found = p.where == Where::kPrefix ? name.starts_with(p.text)
                                               : name.find(p.text) != std::string_view::npos;
  return found && has_any(name, p.also);
}

}  // namespace

KernelKind classify_kernel(std::string_view name) {
  for (const KindPattern& p : kPatterns) {
    if (matches(p, name)) return p.kind;
  }
  return KernelKind::kCompute;
}

std::string_view kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kCommunication: return "communication";
    case KernelKind::kMemory: return "memory";
    case KernelKind::kCompute: break;
  }
  return "compute";
}

}  // namespace attune::diagnose::profile
