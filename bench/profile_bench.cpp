// Benchmark: reading a large synthetic PyTorch profiler (Kineto) Chrome trace.
// Writes a trace of N MB to a temporary file, in Kineto's own layout and event
// mix (cpu_op, cuda_runtime launches, ac2g flows, kernels with args objects,
// NCCL kernels on a second stream overlapping compute, memcpys,
// ProfilerStep annotations), then times read_profile on it and prints the
// throughput and the peak RSS: the reader streams, so the peak stays far below
// the trace size. Checks that every kernel written was counted.
// Run: ./build/bench/profile_bench [MEGABYTES]   (default 2048)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "attune/diagnose/profile.h"

namespace {

constexpr int kOpsPerStep = 400;
constexpr int kCommEvery = 8;     // one NCCL kernel per this many compute kernels
constexpr int kMemcpyEvery = 16;

const char* const kComputeKernels[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, "
    "false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
    "void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>(__nv_bfloat16 const*, "
    "int, unsigned char*, float*, int, int, int, int, bool, float, __nv_fp8_interpretation_t)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
    "void transformer_engine::rmsnorm::rmsnorm_fwd_tuned_kernel<transformer_engine::rmsnorm::Kernel_traits<"
    "float, __nv_bfloat16, __nv_bfloat16, float, unsigned int, 4096u, 1u, 4u, 1u, 16u>>(transformer_engine::"
    "rmsnorm::FwdParams)",
};
const char* const kCommKernels[] = {
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)",
};

class TraceWriter {
 public:
  explicit TraceWriter(std::FILE* f) : f_(f) {}

  void header() {
    std::fputs(
        "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA H100 "
        "80GB HBM3\", \"totalGlobalMem\": 85045231616,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      "
        "\"maxThreadsPerBlock\": 1024, \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }\n  ],\n  "
        "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 64, \"pg_count\": 3, "
        "\"nccl_version\": \"2.21.5\"},\n  \"traceEvents\": [\n",
        f_);
  }

  void footer() {
    std::fprintf(f_,
                 "  {\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": %.3f, \"pid\": 0, \"tid\": 0,\n"
                 "    \"args\": {\n      \"name\": \"python3\"\n    }\n  }\n  ],\n  \"traceName\": "
                 "\"traces/bench_rank0.json\",\n  \"baseTimeNanoseconds\": 1740461600000000000\n}\n",
                 cpu_us_);
  }

  // One training step: the annotation, then launches, kernels, flows.
  void step(long n) {
    const double step_start = cpu_us_;
    const double step_dur = kOpsPerStep * 6.0;
    ++corr_;
    std::fprintf(f_,
                 "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%ld\", \"pid\": "
                 "1166, \"tid\": 1166,\n    \"ts\": %.3f, \"dur\": %.3f,\n    \"args\": {\n      \"External id\": "
                 "%ld, \"Record function id\": 0, \"Ev Idx\": %ld\n    }\n  },\n",
                 n, step_start, step_dur, corr_, corr_);
    ++events_;
    for (int i = 0; i < kOpsPerStep; ++i) op(i);
  }

  long long events() const { return events_; }
  long long gpu_events() const { return gpu_events_; }

 private:
  void op(int i) {
    cpu_op(i % kCommEvery == 0 ? "record_param_comms" : "aten::mm");
    launch();
    kernel(kComputeKernels[i % 6], 7, 20.0 + (i % 5) * 7.25, false);
    if (i % kCommEvery == 0) {
      // Collective on its own stream, spanning the next few compute kernels.
      kernel(kCommKernels[(i / kCommEvery) % 3], 20, 90.5, true);
    }
    if (i % kMemcpyEvery == 0) memcpy();
  }

  void cpu_op(const char* name) {
    ++corr_;
    std::fprintf(f_,
                 "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1166, \"tid\": 2571,\n"
                 "    \"ts\": %.3f, \"dur\": 4.125,\n    \"args\": {\n      \"External id\": %ld,\"Record function "
                 "id\": 0, \"Sequence number\": %ld, \"Fwd thread id\": 1, \"Ev Idx\": %ld,\n      \"Input Dims\": "
                 "[[4096, 7168], [7168, 2048]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]\n    }\n  },\n",
                 name, cpu_us_, corr_, corr_, corr_);
    cpu_us_ += 2.0;
    ++events_;
  }

  void launch() {
    std::fprintf(f_,
                 "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1166, "
                 "\"tid\": 2571,\n    \"ts\": %.3f, \"dur\": 3.5,\n    \"args\": {\n      \"External id\": %ld,\n      "
                 "\"cbid\": 211, \"correlation\": %ld\n    }\n  },\n"
                 "  {\n    \"ph\": \"s\", \"id\": %ld, \"pid\": 1166, \"tid\": 2571, \"ts\": %.3f,\n    \"cat\": "
                 "\"ac2g\", \"name\": \"ac2g\"\n  },\n",
                 cpu_us_, corr_, corr_, corr_, cpu_us_);
    cpu_us_ += 4.0;
    events_ += 2;
  }

  void kernel(const char* name, int stream, double dur, bool comm) {
    double& clock = comm ? comm_us_ : gpu_us_;
    if (comm && clock < gpu_us_) clock = gpu_us_;
    std::fprintf(f_,
                 "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,\n    "
                 "\"ts\": %.3f, \"dur\": %.3f,\n    \"args\": {\n      \"External id\": %ld,\n      \"queued\": 0, "
                 "\"device\": 0, \"context\": 1,\n      \"stream\": %d, \"correlation\": %ld,\n      \"registers per "
                 "thread\": 72,\n      \"shared memory\": 1320,\n      \"blocks per SM\": 0.15151516,\n      \"warps "
                 "per SM\": 3.787879,\n      \"grid\": [20, 1, 1],\n      \"block\": [800, 1, 1],\n      \"est. "
                 "achieved occupancy %%\": 6\n    }\n  },\n"
                 "  {\n    \"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": %d, \"ts\": %.3f,\n    \"cat\": \"ac2g\", "
                 "\"name\": \"ac2g\", \"bp\": \"e\"\n  },\n",
                 name, stream, clock, dur, corr_, stream, corr_, corr_, stream, clock);
    clock += dur + 1.5;
    events_ += 2;
    ++gpu_events_;
  }

  void memcpy() {
    ++corr_;
    std::fprintf(f_,
                 "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", "
                 "\"pid\": 0, \"tid\": 7,\n    \"ts\": %.3f, \"dur\": 1.25,\n    \"args\": {\n      \"External id\": "
                 "%ld,\n      \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": %ld,\n      "
                 "\"bytes\": 131072, \"memory bandwidth (GB/s)\": 78.76923076923077\n    }\n  },\n",
                 gpu_us_, corr_, corr_);
    gpu_us_ += 2.75;
    ++events_;
    ++gpu_events_;
  }

  std::FILE* f_;
  double cpu_us_ = 1740461679470000.0;
  double gpu_us_ = 1740461679470100.0;
  double comm_us_ = 0;
  long corr_ = 0;
  long long events_ = 0;
  long long gpu_events_ = 0;
};

struct Written {
  std::string path;
  long long events = 0;
  long long gpu_events = 0;
  long steps = 0;
};

Written write_trace(double megabytes) {
  Written w;
  w.path = (std::filesystem::temp_directory_path() / "attune_profile_bench.json").string();
  std::FILE* f = std::fopen(w.path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(w.path.c_str());
    std::exit(1);
  }
  static char buf[1 << 20];
  std::setvbuf(f, buf, _IOFBF, sizeof buf);
  TraceWriter t(f);
  t.header();
  const double target = megabytes * 1024 * 1024;
  while (static_cast<double>(std::ftell(f)) < target) t.step(++w.steps);
  t.footer();
  std::fclose(f);
  w.events = t.events() + 1;
  w.gpu_events = t.gpu_events();
  return w;
}

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // Linux: KiB
}

}  // namespace

int main(int argc, char** argv) {
  const double mb = argc > 1 ? std::atof(argv[1]) : 2048.0;
  const Written w = write_trace(mb);
  const double bytes = static_cast<double>(std::filesystem::file_size(w.path));
  const long rss_before = peak_rss_mib();
  const auto start = std::chrono::steady_clock::now();
  const attune::diagnose::ProfileSummary p = attune::diagnose::read_profile(w.path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%.0f MB trace, %lld events (%lld GPU), %ld steps: %.2f s, %.0f MB/s; peak RSS %ld MiB (%ld MiB before "
      "reading)\n",
      bytes / 1048576, w.events, w.gpu_events, w.steps, s, bytes / 1048576 / s, peak_rss_mib(), rss_before);
  std::printf("compute %.3f s, communication %.3f s, exposed %.3f s, overlap %.1f %%, idle %.3f s, window %.3f s\n",
              p.compute_s, p.communication_s, p.exposed_communication_s.value_or(-1), p.overlap_pct.value_or(-1),
              p.idle_s.value_or(-1), p.window_s.value_or(-1));
  std::filesystem::remove(w.path);
  if (p.kernel_launches != w.gpu_events || p.steps.value_or(0) != w.steps) {
    std::fprintf(stderr, "mismatch: read %lld GPU events and %d steps\n", p.kernel_launches, p.steps.value_or(0));
    return 1;
  }
  return 0;
}
