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

const GpuSpec* gpu_spec(std::string_view gpu) {
  // hardware.csv in the calibration data: H100 SXM5 80 GB, H200 SXM 141 GB, B200 180 GB.
  static const GpuSpec specs[] = {
      {"h100", 989, 1979, 80e9 / (1024.0 * 1024 * 1024)},
      {"h200", 989, 1979, 141e9 / (1024.0 * 1024 * 1024)},
      {"b200", 2250, 4500, 180e9 / (1024.0 * 1024 * 1024)},
  };
  auto name = normalize_gpu(gpu);
  if (!name) return nullptr;
  for (const auto& s : specs) {
    if (s.name == *name) return &s;
  }
  return nullptr;
}

}  // namespace attune::recipe
