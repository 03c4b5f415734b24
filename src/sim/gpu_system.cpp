#include "attune/sim/gpu_system.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "attune/recipe/hardware.h"

namespace attune::sim {

namespace {

// The simulator's own figures for one GPU type; its peaks and HBM come from
// the recipe catalog.
GpuSystem calibrated(const char* id, const char* display, double hbm_tbps, double mamf_bf16, double mamf_fp8,
                     int gpus_per_node, int nvlink_domain, double nvlink_gbps, double allreduce_nvlink,
                     double alltoall_nvlink, double allreduce_network, double alltoall_network, double network_gbps,
                     double pcie_gbps) {
  const recipe::GpuSpec* spec = recipe::gpu_spec(id);
  if (!spec || spec->name != id) throw std::logic_error(std::string("GPU '") + id + "' is not in the recipe catalog");
  GpuSystem g;
  g.id = id;
  g.display = display;
  g.bf16_tflops = spec->bf16_tflops;
  g.fp8_tflops = spec->fp8_tflops;
  g.hbm_gib = spec->hbm_gib;
  g.hbm_tbps = hbm_tbps;
  g.mamf_bf16 = mamf_bf16;
  g.mamf_fp8 = mamf_fp8;
  g.gpus_per_node = gpus_per_node;
  g.nvlink_domain = nvlink_domain;
  g.nvlink_gbps = nvlink_gbps;
  g.allreduce_busbw_nvlink = allreduce_nvlink;
  g.alltoall_busbw_nvlink = alltoall_nvlink;
  g.allreduce_busbw_network = allreduce_network;
  g.alltoall_busbw_network = alltoall_network;
  g.network_gbps_per_gpu = network_gbps;
  g.pcie_gbps = pcie_gbps;
  return g;
}

// Vendor datasheets and published MAMF measurements. H200's BF16 MAMF is "same as H100".
// Fields: HBM TB/s, MAMF BF16 / FP8, GPUs per node, NVLink domain, NVLink GB/s,
// NCCL bus bandwidth all-reduce / all-to-all in the NVLink domain and over
// the network, network GB/s per GPU, PCIe GB/s.
std::vector<GpuSystem> make_catalog() {
  std::vector<GpuSystem> c;
  c.push_back(calibrated("h100", "H100 SXM 80GB", 3.35, 794.5, 1402.6, 8, 8, 450, 370, 320, 370, 48, 50, 55));
  c.push_back(calibrated("h200", "H200 SXM 141GB", 4.8, 794.5, 1453.4, 8, 8, 450, 368, 320, 370, 48, 50, 55));
  c.push_back(calibrated("b200", "B200 180GB", 7.7, 1745.0, 3432.5, 8, 8, 900, 700, 640, 382, 48, 50, 55));
  c.push_back(calibrated("gb200", "GB200 NVL72", 8.0, 1822.0, 3615.6, 4, 72, 900, 680, 640, 382, 48, 50, 55));
  c.push_back(calibrated("a100", "A100 SXM 80GB", 2.0, 271.2, 0, 8, 8, 300, 232, 210, 192, 24, 25, 55));
  // The Grand Teton H100 torchtitan measured on. 500 W cap: clocks drop under
  // sustained GEMM load (about 25% below SXM's MAMF).
  c.push_back(calibrated("h100-96gb", "H100 96GB HBM2e 500W (Grand Teton)", 2.4, 600.0, 1050.0, 8, 8, 450, 370,
                         320, 370, 48, 50, 55));
  return c;
}

// Fraction of large-message bus bandwidth reached at a message size: NCCL is
// latency-bound below ~1 MiB and saturates above ~1 GiB (the 8xH100 NVLS
// curve nccl-tests measures: 1 MiB 14%, 16 MiB 49%, 256 MiB 88% of 480).
double size_factor(double bytes) {
  constexpr double kHalf = 16.0 * 1024 * 1024;  // message size at half bandwidth
  return bytes / (bytes + kHalf);
}

constexpr double kLatencyNvlinkS = 10e-6;
constexpr double kLatencyNetworkS = 20e-6;

}  // namespace

const std::vector<GpuSystem>& gpu_systems() {
  static const std::vector<GpuSystem> catalog = make_catalog();
  return catalog;
}

const GpuSystem* find_gpu_system(std::string_view id) {
  for (const auto& g : gpu_systems()) {
    if (g.id == id) return &g;  // the common case, without a copy (searches call this per setting)
  }
  const recipe::GpuSpec* spec = recipe::gpu_spec(id);  // other spellings, as the catalog reads them
  if (!spec) return nullptr;
  for (const auto& g : gpu_systems()) {
    if (g.id == spec->name) return &g;
  }
  return nullptr;
}

// Calculon's H100 GEMM-efficiency curve: >= 128 GFLOP 0.95, 16 -> 0.90,
// 1 -> 0.60, -> 0.10 at 0, interpolated on log size. Relative to MAMF, so
// large GEMMs reach it.
double gemm_efficiency(double gflop) {
  if (gflop <= 0) return 0.1;
  struct Point {
    double gflop, eff;
  };
  static constexpr Point kCurve[] = {{0.01, 0.12}, {0.1, 0.3}, {1, 0.62}, {16, 0.92}, {128, 1.0}};
  if (gflop <= kCurve[0].gflop) return kCurve[0].eff;
  for (std::size_t i = 1; i < std::size(kCurve); ++i) {
    if (gflop <= kCurve[i].gflop) {
      const double t = (std::log(gflop) - std::log(kCurve[i - 1].gflop)) /
                       (std::log(kCurve[i].gflop) - std::log(kCurve[i - 1].gflop));
      return kCurve[i - 1].eff + t * (kCurve[i].eff - kCurve[i - 1].eff);
    }
  }
  return 1.0;
}

double collective_seconds(const GpuSystem& g, Collective c, double bytes, int ranks, bool crosses_nodes) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = ranks;
  double busbw = 0;
  double traffic = 0;  // bus bytes per GPU
  switch (c) {
    case Collective::AllReduce:
      busbw = crosses_nodes ? g.allreduce_busbw_network : g.allreduce_busbw_nvlink;
      traffic = 2 * (n - 1) / n * bytes;
      break;
    case Collective::AllGather:
    case Collective::ReduceScatter:
      busbw = crosses_nodes ? g.allreduce_busbw_network : g.allreduce_busbw_nvlink;
      traffic = (n - 1) / n * bytes;
      break;
    case Collective::AllToAll:
      busbw = crosses_nodes ? g.alltoall_busbw_network : g.alltoall_busbw_nvlink;
      traffic = (n - 1) / n * bytes;
      break;
    case Collective::SendRecv:
      busbw = crosses_nodes ? g.network_gbps_per_gpu * 0.9 : g.nvlink_gbps * 0.8;
      traffic = bytes;
      break;
  }
  const double latency = (crosses_nodes ? kLatencyNetworkS : kLatencyNvlinkS) * std::log2(n + 1);
  return latency + traffic / (busbw * 1e9 * size_factor(bytes));
}

}  // namespace attune::sim
