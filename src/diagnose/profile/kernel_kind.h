// KernelKind: whether a GPU activity is computation, communication or a memory
// copy/set. The profile summary needs the split to say how much communication
// hides behind compute. Classification is by kernel name against a table of
// patterns (HTA's rules plus communication libraries HTA misses), so a new
// library is one more table row.
#pragma once

#include <cstdint>
#include <string_view>

namespace attune::diagnose::profile {

enum class KernelKind : std::uint8_t { kCompute = 0, kCommunication = 1, kMemory = 2 };

inline constexpr int kKernelKindCount = 3;

// Classifies a kernel / memcpy / memset by its (demangled) name.
KernelKind classify_kernel(std::string_view name);

// "compute" | "communication" | "memory".
std::string_view kind_name(KernelKind kind);

}  // namespace attune::diagnose::profile
