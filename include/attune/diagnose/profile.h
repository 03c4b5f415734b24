// ProfileSummary: where a training step's GPU time goes, read from a profile —
// compute, communication, memory copies, idle — and how much communication
// hides behind compute. It answers "is this run communication-bound?" with
// measured numbers rather than the step-time log alone. Read from a PyTorch
// profiler (Kineto) Chrome trace (plain or .gz, streamed: traces of many GB
// are never held in memory), an `nsys stats` cuda_gpu_trace CSV (per launch),
// or a cuda_gpu_kern_sum CSV / stdout table (totals only). The definitions
// follow Holistic Trace Analysis (HTA) so the numbers match what users see there.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::diagnose {

// One kernel name's launches, summed over the profile (and over all devices).
struct TopKernel {
  std::string name;
  std::string kind;      // "compute" | "communication" | "memory"
  double total_s = 0;
  long long count = 0;   // launches
  double share = 0;      // of summed kernel time (all kinds), 0..1
};

// Times are seconds per GPU: with several devices each one's intervals are
// merged on their own and the results averaged, since overlap only means
// something within one GPU. Shares are fractions 0..1 of `share_basis`.
struct ProfileSummary {
  std::string source;                  // "chrome_trace" | "nsys_gpu_trace" | "nsys_kern_sum"
  std::optional<double> window_s;      // first kernel start → last kernel end
  // Union of each kind's kernel intervals (time at least one such kernel
  // runs). For nsys_kern_sum: summed kernel time, concurrent streams counted twice.
  double compute_s = 0;
  double communication_s = 0;
  double memory_s = 0;                 // memcpy / memset / DMA
  std::optional<double> exposed_communication_s;  // |comm| − |comm ∩ compute|
  std::optional<double> idle_s;        // window − union of all kernels
  std::optional<double> overlap_pct;   // 100·|comm ∩ compute| / |comm|; null without comm
  std::string share_basis;             // "window" | "summed_kernel_time"
  std::optional<double> compute_share;
  std::optional<double> communication_share;
  std::optional<double> memory_share;
  std::optional<double> exposed_communication_share;
  std::optional<double> idle_share;
  std::optional<int> steps;            // distinct ProfilerStep#N annotations
  std::optional<int> devices;          // GPUs seen; null when the report merges them
  long long kernel_launches = 0;       // GPU activities counted (all kinds)
  double summed_kernel_s = 0;          // Σ durations, all devices and streams
  std::vector<TopKernel> top_kernels;  // top 10 by total time
  std::vector<std::string> notes;      // what could not be measured, and why
};

// Reads a profile file (gzip detected by its magic bytes) and summarises it;
// the format is recognised from the content. Throws InputError naming the
// file (and the line when known) for an unreadable, empty, malformed or
// unrecognised file.
ProfileSummary read_profile(const std::string& path);

// The same for an in-memory profile (tests, fuzzing): throws InputError for
// bad input, never crashes.
ProfileSummary read_profile_text(std::string_view text, const std::string& name_for_errors);

nlohmann::json to_json(const ProfileSummary& p);

}  // namespace attune::diagnose
