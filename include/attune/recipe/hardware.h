// Hardware: what a recipe runs on — GPU type, node count, GPUs per node — as far
// as the recipe, the attune wrapper file or the command line say.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string framework_version;  // the wrapper's `framework_version` ("" = not said): recorded, never interpreted
  std::string model;
  Hardware hardware;
};

// A GPU type's peak dense throughput and usable memory: the one catalog of
// them. The diagnoser's MFU and HBM headroom and the simulator's GpuSystem
// (which adds its calibrated bandwidths and MAMF) both read these figures, so
// every command agrees on what fits and what the peak is.
struct GpuSpec {
  std::string name;        // h100 | h200 | b200 | gb200 | a100 | h100-96gb
  double bf16_tflops = 0;  // dense peak, vendor datasheet
  double fp8_tflops = 0;   // 0: no FP8
  double hbm_gib = 0;      // usable: what a process can allocate, not the marketed GB
};
// Every GPU type attune knows, in a fixed order.
const std::vector<GpuSpec>& gpu_specs();
// By catalog name (any case), else by what normalize_gpu makes of the text;
// nullptr for an unknown GPU.
const GpuSpec* gpu_spec(std::string_view gpu);

// Normalises "H100", "h100-sxm", "p5.48xlarge", "ml.p5e.48xlarge", "gb200"... to
// h100 | h200 | b200; nullopt when it names no supported GPU.
std::optional<std::string> normalize_gpu(std::string_view text);

}  // namespace attune::recipe
