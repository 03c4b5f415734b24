// ProfileBuilder: what the profile readers collect while they stream — each GPU
// launch as a compact interval (16 bytes, per device and kind), per-name totals
// for the top-kernel table, ProfilerStep numbers — and the arithmetic that
// turns it into a ProfileSummary once the whole file has been read (kernels of
// different streams arrive out of order, so unions need everything first).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "attune/diagnose/profile.h"
#include "interval_union.h"
#include "kernel_kind.h"

namespace attune::diagnose::profile {

class ProfileBuilder {
 public:
  // One GPU activity with timestamps. `memory_category`: the profiler itself
  // says it is a copy or set (Kineto gpu_memcpy/gpu_memset), whatever its name.
  void add_launch(long long device, std::int64_t start_ns, std::int64_t end_ns,
                  std::string_view name, bool memory_category);
  // A per-name total without timestamps (nsys cuda_gpu_kern_sum rows).
  void add_total(std::string_view name, std::int64_t total_ns, long long count);
  void add_step(long long number);
  // A GPU event whose time could not be used (missing, negative, absurd).
  void skip_launch() { ++skipped_; }
  void add_note(std::string note) { notes_.push_back(std::move(note)); }

  ProfileSummary build(std::string source);

 private:
  struct NameStats {
    KernelKind kind = KernelKind::kCompute;
    double total_ns = 0;  // double: a sum of many launches must not overflow
    long long count = 0;
  };
  struct DeviceTimeline {
    std::array<std::vector<Interval>, kKernelKindCount> by_kind;
    std::int64_t first_start = 0;
    std::int64_t last_end = 0;
    long long launches = 0;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  NameStats& stats_for(std::string_view name, bool memory_category);
  DeviceTimeline& timeline(long long device);
  void fill_top_kernels(ProfileSummary& s) const;
  void fill_timeline(ProfileSummary& s);
  void fill_totals(ProfileSummary& s) const;

  std::unordered_map<std::string, NameStats, Hash, std::equal_to<>> names_;
  std::map<long long, DeviceTimeline> devices_;
  long long cached_device_ = 0;
  DeviceTimeline* cached_timeline_ = nullptr;  // map nodes do not move
  std::unordered_set<long long> steps_;
  bool has_totals_ = false;
  long long skipped_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace attune::diagnose::profile
