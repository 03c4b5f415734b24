// NsysStatsReader: reads Nsight Systems `nsys stats` output line by line —
//   - cuda_gpu_trace CSV: one row per kernel/memcpy/memset launch with
//     "Start (ns)" and "Duration (ns)", so overlap and idle can be measured;
//   - cuda_gpu_kern_sum CSV: one row per kernel name with "Total Time (ns)"
//     and "Instances" (totals only, no timestamps);
//   - the stdout text of cuda_gpu_kern_sum: a fixed-width table under
//     "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):" (numbers with
//     thousands separators, the name last).
// Other reports in the same output (cuda_api_sum, nvtx_sum, ...) are passed
// over; the first kernel table found decides the source. Time units follow
// the header ("(ns)", "(us)", "(ms)", "(s)": `nsys stats --timeunit`).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profile_builder.h"

namespace attune::diagnose::profile {

class NsysStatsReader {
 public:
  NsysStatsReader(ProfileBuilder& out, std::string name_for_errors);

  // One line without its line break; `number` is 1-based, for errors.
  void line(std::string_view text, long number);
  // "nsys_gpu_trace" | "nsys_kern_sum"; throws InputError when no kernel
  // table was found.
  std::string finish();

 private:
  enum class Table { kNone, kKernSum, kGpuTrace };
  enum class Section { kNone, kKernSum, kGpuTrace, kOther };
  struct Columns {
    std::size_t count = 0;
    std::size_t name = kAbsent, total = kAbsent, instances = kAbsent;
    std::size_t start = kAbsent, duration = kAbsent, device = kAbsent;
    int total_scale = 0, start_scale = 0, duration_scale = 0;  // unit → ns, as 10^scale
  };
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  bool section_marker(std::string_view t);
  bool try_header(std::string_view t, long number);
  void start_table(Table table, bool fixed_width, long number);
  void csv_row(std::string_view t, long number);
  void fixed_width_row(std::string_view t, long number);
  void trace_row();
  void kern_sum_row(std::string_view total, std::string_view instances, std::string_view name,
                    long number);
  long long device_id(const std::string& device);
  [[noreturn]] void fail(long number, const std::string& message) const;

  ProfileBuilder& out_;
  std::string file_;
  Section section_ = Section::kNone;
  bool saw_marker_ = false;       // "Processing [...]" / "** ... (report):" seen: nsys stdout
  long searched_lines_ = 0;       // non-blank lines looked at before any table
  Table table_ = Table::kNone;    // the table being read
  bool fixed_width_ = false;
  bool ignoring_ = false;         // a table of the other kind than the source
  Table source_ = Table::kNone;   // the first table's kind
  Columns cols_;
  std::vector<std::string> fields_;
  std::unordered_map<std::string, long long> device_ids_;
  std::string number_buf_;
};

}  // namespace attune::diagnose::profile
