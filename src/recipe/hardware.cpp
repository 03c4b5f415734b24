#include "attune/recipe/hardware.h"

#include <cctype>
#include <string>

namespace attune::recipe {

std::optional<std::string> normalize_gpu(std::string_view text) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // AWS instance families first: p5/p5e/p5en are H100/H200, p6-b200 is B200.
  if (t.find("p6-b200") != std::string::npos || t.find("b200") != std::string::npos ||
      t.find("gb200") != std::string::npos) {
    return "b200";
  }
  if (t.find("h200") != std::string::npos || t.find("p5e") != std::string::npos) return "h200";
  if (t.find("h100") != std::string::npos || t.find("p5.") != std::string::npos || t == "p5") return "h100";
  return std::nullopt;
}

const std::vector<GpuSpec>& gpu_specs() {
  // Peaks: dense (no sparsity) BF16 / FP8 tensor-core TFLOP/s from the vendor
  // datasheets. HBM: the usable capacity the simulator is calibrated with
  // (docs/simulator.md), a little under the total nvidia-smi reports (H100 SXM:
  // 81559 MiB = 79.6 GiB; H200: 140.4 GiB; B200: 179.1 GiB) for what the driver
  // and the CUDA context keep. The marketed "80 GB" read as 10^9 bytes (74.5
  // GiB) would understate an H100 by 6% and call fitting layouts out of memory.
  static const std::vector<GpuSpec> specs = {
      {"h100", 989, 1979, 79.1},
      {"h200", 989, 1979, 140.0},
      {"b200", 2250, 4500, 178.4},
      {"gb200", 2500, 5000, 184.0},  // per GPU of an NVL72 rack
      {"a100", 312, 0, 79.1},        // SXM 80 GB; Ampere has no FP8
      // The Grand Teton H100 torchtitan measured on: 96 GB HBM2e at 500 W, a
      // peak between H100 NVL (835) and SXM.
      {"h100-96gb", 900, 1800, 94.0},
  };
  return specs;
}

const GpuSpec* gpu_spec(std::string_view gpu) {
  const auto find = [](std::string_view name) -> const GpuSpec* {
    for (const auto& s : gpu_specs()) {
      if (s.name == name) return &s;
    }
    return nullptr;
  };
  if (const GpuSpec* s = find(gpu)) return s;  // the common case, without a copy
  std::string lower;
  for (char c : gpu) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (const GpuSpec* s = find(lower)) return s;
  const auto name = normalize_gpu(gpu);
  return name ? find(*name) : nullptr;
}

}  // namespace attune::recipe
