#include "profile_builder.h"

#include <algorithm>
#include <limits>

namespace attune::diagnose::profile {
namespace {

// 2^62 ns ≈ 146 years: room for epoch timestamps, while sums and differences
// of in-range values can never overflow int64.
constexpr std::int64_t kMaxTimestampNs = std::int64_t{1} << 62;
constexpr std::size_t kTopKernels = 10;
constexpr double kNsPerS = 1e9;

std::size_t index_of(KernelKind k) { return static_cast<std::size_t>(k); }

std::optional<double> share(double part, double whole) {
  if (whole <= 0) return std::nullopt;
  return part / whole;
}

// Per-kind unions of one device and what follows from them, in ns.
struct DeviceTimes {
  double window = 0, compute = 0, communication = 0, memory = 0, overlap = 0, busy = 0;
};

DeviceTimes measure(std::array<std::vector<Interval>, kKernelKindCount>& by_kind,
                    std::int64_t first_start, std::int64_t last_end) {
  for (auto& v : by_kind) merge_intervals(v);
  const auto& comp = by_kind[index_of(KernelKind::kCompute)];
  const auto& comm = by_kind[index_of(KernelKind::kCommunication)];
  const auto& mem = by_kind[index_of(KernelKind::kMemory)];
  DeviceTimes t;
  t.window = static_cast<double>(last_end - first_start);
  t.compute = static_cast<double>(union_length(comp));
  t.communication = static_cast<double>(union_length(comm));
  t.memory = static_cast<double>(union_length(mem));
  t.overlap = static_cast<double>(intersection_length(comm, comp));
  t.busy = static_cast<double>(union_length(union_of(union_of(comp, comm), mem)));
  return t;
}

}  // namespace

ProfileBuilder::NameStats& ProfileBuilder::stats_for(std::string_view name, bool memory_category) {
  auto it = names_.find(name);
  if (it != names_.end()) return it->second;
  NameStats fresh;
  fresh.kind = memory_category ? KernelKind::kMemory : classify_kernel(name);
  return names_.emplace(std::string(name), fresh).first->second;
}

ProfileBuilder::DeviceTimeline& ProfileBuilder::timeline(long long device) {
  if (cached_timeline_ != nullptr && cached_device_ == device) return *cached_timeline_;
  auto [it, inserted] = devices_.try_emplace(device);
  cached_device_ = device;
  cached_timeline_ = &it->second;
  return it->second;
}

void ProfileBuilder::add_launch(long long device, std::int64_t start_ns, std::int64_t end_ns,
                                std::string_view name, bool memory_category) {
  if (start_ns < 0 || end_ns < start_ns || end_ns > kMaxTimestampNs) {
    skip_launch();
    return;
  }
  NameStats& st = stats_for(name, memory_category);
  st.total_ns += static_cast<double>(end_ns - start_ns);
  ++st.count;
  DeviceTimeline& t = timeline(device);
  const bool first = t.launches++ == 0;
  t.first_start = first ? start_ns : std::min(t.first_start, start_ns);
  t.last_end = first ? end_ns : std::max(t.last_end, end_ns);
  t.by_kind[index_of(st.kind)].push_back(Interval{start_ns, end_ns});
}

namespace {
// Launch counts come from the file (nsys "Instances"): add without overflowing.
long long add_counts(long long a, long long b) {
  long long sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? std::numeric_limits<long long>::max() : std::numeric_limits<long long>::min();
  return sum;
}
}  // namespace

void ProfileBuilder::add_total(std::string_view name, std::int64_t total_ns, long long count) {
  has_totals_ = true;
  NameStats& st = stats_for(name, false);
  st.total_ns += static_cast<double>(total_ns);
  st.count = add_counts(st.count, count);
}

void ProfileBuilder::add_step(long long number) { steps_.insert(number); }

void ProfileBuilder::fill_top_kernels(ProfileSummary& s) const {
  std::vector<const std::pair<const std::string, NameStats>*> all;
  all.reserve(names_.size());
  for (const auto& entry : names_) {
    all.push_back(&entry);
    s.summed_kernel_s += entry.second.total_ns / kNsPerS;
    s.kernel_launches = add_counts(s.kernel_launches, entry.second.count);
  }
  const std::size_t n = std::min(kTopKernels, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    [](const auto* a, const auto* b) {
                      if (a->second.total_ns != b->second.total_ns) {
                        return a->second.total_ns > b->second.total_ns;
                      }
                      return a->first < b->first;
                    });
  for (std::size_t i = 0; i < n; ++i) {
    const auto& [name, st] = *all[i];
    const double total_s = st.total_ns / kNsPerS;
    s.top_kernels.push_back(TopKernel{name, std::string(kind_name(st.kind)), total_s, st.count,
                                      share(total_s, s.summed_kernel_s).value_or(0.0)});
  }
}

// Sums over devices, then divides: per-GPU averages (overlap is per GPU).
void ProfileBuilder::fill_timeline(ProfileSummary& s) {
  DeviceTimes sum;
  int used = 0;
  for (auto& [id, t] : devices_) {
    const DeviceTimes d = measure(t.by_kind, t.first_start, t.last_end);
    sum.window += d.window;
    sum.compute += d.compute;
    sum.communication += d.communication;
    sum.memory += d.memory;
    sum.overlap += d.overlap;
    sum.busy += d.busy;
    ++used;
    for (auto& v : t.by_kind) std::vector<Interval>().swap(v);  // free as we go
  }
  s.share_basis = "window";
  s.devices = used;
  if (used == 0) {
    s.notes.push_back("no GPU kernels, copies or sets in the profile (a CPU-only trace?)");
    return;
  }
  const double per_gpu = static_cast<double>(used) * kNsPerS;
  s.window_s = sum.window / per_gpu;
  s.compute_s = sum.compute / per_gpu;
  s.communication_s = sum.communication / per_gpu;
  s.memory_s = sum.memory / per_gpu;
  s.exposed_communication_s = (sum.communication - sum.overlap) / per_gpu;
  s.idle_s = (sum.window - sum.busy) / per_gpu;
  if (sum.communication > 0) {
    s.overlap_pct = 100.0 * sum.overlap / sum.communication;
  } else {
    s.notes.push_back("no communication kernels: overlap is undefined");
  }
  s.compute_share = share(sum.compute, sum.window);
  s.communication_share = share(sum.communication, sum.window);
  s.memory_share = share(sum.memory, sum.window);
  s.exposed_communication_share = share(sum.communication - sum.overlap, sum.window);
  s.idle_share = share(sum.window - sum.busy, sum.window);
  if (used > 1) {
    s.notes.push_back(std::to_string(used) +
                      " devices: times are per-GPU averages; top kernels sum all devices");
  }
}

void ProfileBuilder::fill_totals(ProfileSummary& s) const {
  std::array<double, kKernelKindCount> by_kind{};
  for (const auto& [name, st] : names_) by_kind[index_of(st.kind)] += st.total_ns / kNsPerS;
  s.compute_s = by_kind[index_of(KernelKind::kCompute)];
  s.communication_s = by_kind[index_of(KernelKind::kCommunication)];
  s.memory_s = by_kind[index_of(KernelKind::kMemory)];
  s.share_basis = "summed_kernel_time";
  s.compute_share = share(s.compute_s, s.summed_kernel_s);
  s.communication_share = share(s.communication_s, s.summed_kernel_s);
  s.memory_share = share(s.memory_s, s.summed_kernel_s);
  s.notes.push_back(
      "cuda_gpu_kern_sum has no timestamps: window, idle, overlap and exposed communication are "
      "unknown (export cuda_gpu_trace for them); times are summed kernel time over all devices "
      "and streams, concurrent kernels counted twice");
}

ProfileSummary ProfileBuilder::build(std::string source) {
  ProfileSummary s;
  s.source = std::move(source);
  fill_top_kernels(s);
  if (has_totals_ && devices_.empty()) {
    fill_totals(s);
  } else {
    fill_timeline(s);
  }
  if (!steps_.empty()) s.steps = static_cast<int>(steps_.size());
  if (skipped_ > 0) {
    s.notes.push_back(std::to_string(skipped_) +
                      " GPU events without a usable start/duration were skipped");
  }
  s.notes.insert(s.notes.end(), notes_.begin(), notes_.end());
  return s;
}

}  // namespace attune::diagnose::profile
