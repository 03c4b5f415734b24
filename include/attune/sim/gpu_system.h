// GpuSystem: one kind of GPU node the simulator knows — peaks by precision,
// HBM, NVLink domain and bandwidth, network per GPU, achievable matmul
// throughput (MAMF) and NCCL bus bandwidth by collective, inside a node and
// across nodes, with the message-size curve. Figures and their sources:
// vendor datasheets and the calibration measurements (docs/simulator.md). The peaks and the usable HBM
// are not the simulator's own: they are the recipe module's GPU catalog
// (recipe::gpu_spec), the one the diagnoser's MFU and headroom read, so a
// layout the simulator fits is one the diagnoser calls within HBM.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attune::sim {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

struct GpuSystem {
  std::string id;            // h100 | h200 | b200 | gb200 | a100 | h100-96gb
  std::string display;
  double bf16_tflops = 0;    // dense peak: recipe::gpu_spec's
  double fp8_tflops = 0;     // recipe::gpu_spec's
  double hbm_gib = 0;        // usable capacity: recipe::gpu_spec's
  double hbm_tbps = 0;       // memory bandwidth, TB/s
  double mamf_bf16 = 0;      // best achievable matmul TFLOP/s (large shapes)
  double mamf_fp8 = 0;
  int gpus_per_node = 8;
  int nvlink_domain = 8;     // GPUs reachable over NVLink
  double nvlink_gbps = 0;    // GB/s per direction per GPU
  // NCCL bus bandwidth at large messages (GB/s).
  double allreduce_busbw_nvlink = 0;
  double alltoall_busbw_nvlink = 0;
  double allreduce_busbw_network = 0;
  double alltoall_busbw_network = 0;
  double network_gbps_per_gpu = 0;  // scale-out line rate, GB/s
  double pcie_gbps = 55;            // host link (CPU offload)
};

// The catalog, one system per recipe::gpu_specs() entry; nullptr for an
// unknown id (looked up as recipe::gpu_spec looks names up).
const GpuSystem* find_gpu_system(std::string_view id);
const std::vector<GpuSystem>& gpu_systems();

// Achievable fraction of a GEMM's peak by its size in GFLOP (small GEMMs do not
// fill the GPU). (docs/simulator.md).
double gemm_efficiency(double gflop);

// Seconds for one collective over `ranks` GPUs moving `bytes` per GPU of
// message, inside the NVLink domain or across the network.
double collective_seconds(const GpuSystem& g, Collective c, double bytes, int ranks, bool crosses_nodes);

}  // namespace attune::sim
