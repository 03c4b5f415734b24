#include "nsys_stats_reader.h"

#include "attune/util/error.h"
#include "csv_line.h"
#include "decimal.h"

namespace attune::diagnose::profile {
namespace {

// A plain CSV must show its header early; nsys stdout may print a preamble
// (export progress, notices) before its first "Processing [...]" line.
constexpr long kMaxLinesBeforeHeader = 100;

const char* const kExpected =
    "expected a PyTorch profiler (Kineto) Chrome trace JSON, or nsys stats output: a "
    "cuda_gpu_trace CSV (Start (ns), Duration (ns), Name) or cuda_gpu_kern_sum "
    "(Total Time (ns), Instances, Name)";

// "Total Time (us)" → 3: the power of ten that turns the unit into ns.
int unit_scale(std::string_view header) {
  const std::size_t open = header.rfind('(');
  if (open == std::string_view::npos) return 0;
  const std::string_view unit = header.substr(open);
  if (unit == "(us)" || unit == "(\xC2\xB5s)" || unit == "(\xCE\xBCs)") return 3;  // µ and μ
  if (unit == "(ms)") return 6;
  if (unit == "(s)" || unit == "(sec)") return 9;
  return 0;
}

// Fixed-width header cells are separated by two or more spaces (single
// spaces occur inside names such as "Total Time (ns)").
void split_wide(std::string_view t, std::vector<std::string>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && t[i] == ' ') ++i;
    if (i >= t.size()) break;
    std::size_t end = t.find("  ", i);
    if (end == std::string_view::npos) end = t.size();
    out.emplace_back(trim(t.substr(i, end - i)));
    i = end;
  }
}

bool is_rule(std::string_view t) {
  return !t.empty() && t.find_first_not_of("- ") == std::string_view::npos;
}

// The report name in "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):".
std::string_view report_of(std::string_view t) {
  const std::size_t close = t.rfind(')');
  const std::size_t open = t.rfind('(', close);
  if (close == std::string_view::npos || open == std::string_view::npos) return {};
  return t.substr(open + 1, close - open - 1);
}

}  // namespace

NsysStatsReader::NsysStatsReader(ProfileBuilder& out, std::string name_for_errors)
    : out_(out), file_(std::move(name_for_errors)) {}

void NsysStatsReader::fail(long number, const std::string& message) const {
  throw InputError(SourceLocation{file_, static_cast<int>(std::min<long>(number, 1'000'000'000)), 0}, "",
                   message);
}

// Report boundaries end any table and say which report follows.
bool NsysStatsReader::section_marker(std::string_view t) {
  Section next;
  if (t.starts_with("Processing [")) {
    next = Section::kNone;
  } else if (t.starts_with("** ") && t.ends_with(":")) {
    const std::string_view report = report_of(t);
    next = report == "cuda_gpu_kern_sum" || report == "gpukernsum" ? Section::kKernSum
           : report.starts_with("cuda_gpu_trace") || report == "gputrace" ? Section::kGpuTrace
                                                                           : Section::kOther;
  } else if (t.ends_with("Statistics:")) {  // nsys before 2022: "CUDA Kernel Statistics:"
    next = t == "CUDA Kernel Statistics:" ? Section::kKernSum : Section::kOther;
  } else {
    return false;
  }
  section_ = next;
  saw_marker_ = true;
  table_ = Table::kNone;
  return true;
}

void NsysStatsReader::line(std::string_view text, long number) {
  const std::string_view t = trim(text);
  if (section_marker(t)) return;
  if (table_ != Table::kNone) {
    if (t.empty()) {
      if (fixed_width_) table_ = Table::kNone;  // a text table ends at a blank line
      return;
    }
    if (ignoring_) return;
    if (fixed_width_) {
      fixed_width_row(t, number);
    } else {
      csv_row(t, number);
    }
    return;
  }
  if (t.empty() || section_ == Section::kOther) return;
  if (try_header(t, number)) return;
  if (source_ == Table::kNone && !saw_marker_ && ++searched_lines_ > kMaxLinesBeforeHeader) {
    fail(number, std::string("no profile header in the first lines: ") + kExpected);
  }
}

bool NsysStatsReader::try_header(std::string_view t, long number) {
  const bool fixed_width = t.find(',') == std::string_view::npos;
  Columns c;
  if (fixed_width) {
    split_wide(t, fields_);
    c.count = fields_.size();
  } else {
    c.count = split_csv_line(t, fields_);
    if (c.count == std::string_view::npos) return false;
  }
  for (std::size_t i = 0; i < c.count; ++i) {
    const std::string_view h = trim(fields_[i]);
    if (h == "Name") c.name = i;
    if (h == "Instances") c.instances = i;
    if (h == "Device" || h == "DevId" || h == "Device ID") c.device = i;
    if (h.starts_with("Total Time")) {
      c.total = i;
      c.total_scale = unit_scale(h);
    } else if (h.starts_with("Start")) {
      c.start = i;
      c.start_scale = unit_scale(h);
    } else if (h.starts_with("Duration")) {
      c.duration = i;
      c.duration_scale = unit_scale(h);
    }
  }
  const bool kern_sum = c.name != kAbsent && c.total != kAbsent && c.instances != kAbsent;
  const bool trace = c.name != kAbsent && c.start != kAbsent && c.duration != kAbsent;
  if (!kern_sum && !trace) return false;
  cols_ = c;
  start_table(trace ? Table::kGpuTrace : Table::kKernSum, fixed_width, number);
  return true;
}

void NsysStatsReader::start_table(Table table, bool fixed_width, long number) {
  if (fixed_width && table == Table::kGpuTrace) {
    fail(number,
         "the text table of cuda_gpu_trace cannot be split into columns reliably (cells hold "
         "spaces); export it with `nsys stats --report cuda_gpu_trace --format csv`");
  }
  if (fixed_width && cols_.name + 1 != cols_.count) {
    fail(number, "a cuda_gpu_kern_sum text table must have Name as its last column");
  }
  if (source_ == Table::kNone) source_ = table;
  table_ = table;
  fixed_width_ = fixed_width;
  ignoring_ = table != source_;
  if (ignoring_) {
    out_.add_note("a second kernel table of another kind (line " + std::to_string(number) +
                  ") was ignored");
  }
}

void NsysStatsReader::csv_row(std::string_view t, long number) {
  const std::size_t n = split_csv_line(t, fields_);
  if (n == std::string_view::npos) fail(number, "a quoted CSV field does not end on its line");
  if (n != cols_.count) {
    fail(number, "the row has " + std::to_string(n) + " fields but the header has " +
                     std::to_string(cols_.count) + " (an unquoted comma in a name?)");
  }
  if (table_ == Table::kGpuTrace) {
    trace_row();
  } else {
    kern_sum_row(fields_[cols_.total], fields_[cols_.instances], fields_[cols_.name], number);
  }
}

// Numbers first, separated by spaces; the name (spaces and all) is the rest.
void NsysStatsReader::fixed_width_row(std::string_view t, long number) {
  if (is_rule(t)) return;
  fields_.resize(std::max(fields_.size(), cols_.count));
  std::size_t i = 0;
  for (std::size_t k = 0; k + 1 < cols_.count; ++k) {
    while (i < t.size() && t[i] == ' ') ++i;
    const std::size_t end = std::min(t.find(' ', i), t.size());
    if (i >= end) fail(number, "the row has fewer columns than the table's header");
    fields_[k].assign(t.substr(i, end - i));
    i = end;
  }
  fields_[cols_.count - 1].assign(trim(t.substr(std::min(i, t.size()))));
  kern_sum_row(fields_[cols_.total], fields_[cols_.instances], fields_[cols_.name], number);
}

void NsysStatsReader::kern_sum_row(std::string_view total, std::string_view instances,
                                   std::string_view name, long number) {
  // The text form writes thousands separators: "1,575,151,965".
  number_buf_.clear();
  for (char ch : trim(total)) {
    if (ch != ',') number_buf_ += ch;
  }
  const auto total_ns = parse_scaled_decimal(number_buf_, cols_.total_scale);
  number_buf_.clear();
  for (char ch : trim(instances)) {
    if (ch != ',') number_buf_ += ch;
  }
  const auto count = parse_scaled_decimal(number_buf_, 0);
  if (!total_ns || *total_ns < 0) fail(number, "Total Time is not a number: '" + std::string(total) + "'");
  if (!count || *count < 0) fail(number, "Instances is not a number: '" + std::string(instances) + "'");
  out_.add_total(trim(name), *total_ns, *count);
}

void NsysStatsReader::trace_row() {
  const auto start = parse_scaled_decimal(trim(fields_[cols_.start]), cols_.start_scale);
  const auto duration = parse_scaled_decimal(trim(fields_[cols_.duration]), cols_.duration_scale);
  if (!start || !duration || *duration < 0) {
    out_.skip_launch();
    return;
  }
  std::int64_t end = 0;
  if (__builtin_add_overflow(*start, *duration, &end)) {
    out_.skip_launch();
    return;
  }
  const long long device = cols_.device == kAbsent ? 0 : device_id(fields_[cols_.device]);
  out_.add_launch(device, *start, end, fields_[cols_.name], false);
}

// "NVIDIA H100 80GB HBM3 (0)" → a small index, in order of appearance.
long long NsysStatsReader::device_id(const std::string& device) {
  const auto next = static_cast<long long>(device_ids_.size());
  return device_ids_.try_emplace(device, next).first->second;
}

std::string NsysStatsReader::finish() {
  if (source_ == Table::kNone) fail(0, std::string("no kernel table found: ") + kExpected);
  return source_ == Table::kGpuTrace ? "nsys_gpu_trace" : "nsys_kern_sum";
}

}  // namespace attune::diagnose::profile
