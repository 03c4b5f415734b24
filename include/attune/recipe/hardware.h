// Hardware: what a recipe runs on — GPU type, node count, GPUs per node — as far
// as the recipe, the attune wrapper file or the command line say.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attune::recipe {

struct Hardware {
  std::string gpu;        // h100 | h200 | b200 ("" unknown)
  int nodes = 0;          // 0 unknown
  int gpus_per_node = 0;  // 0 unknown
};

// What the user supplies beside the file: --framework, --model, --gpu, --nodes,
// --gpus-per-node (or the same fields of the attune wrapper file).
struct RecipeOptions {
  std::string framework;
  std::string model;
  Hardware hardware;
};

// Peak dense throughput and memory of a GPU type (vendor figures; the
// simulator's calibrated catalog refines them). Used for MFU and HBM headroom.
struct GpuSpec {
  std::string name;        // h100 | h200 | b200
  double bf16_tflops = 0;  // dense peak
  double fp8_tflops = 0;
  double hbm_gib = 0;      // capacity in GiB (vendor GB / 1.0737)
};
// nullptr for an unknown GPU.
const GpuSpec* gpu_spec(std::string_view gpu);

// Normalises "H100", "h100-sxm", "p5.48xlarge", "ml.p5e.48xlarge", "gb200"... to
// h100 | h200 | b200; nullopt when it names no supported GPU.
std::optional<std::string> normalize_gpu(std::string_view text);

}  // namespace attune::recipe
