#include "attune/diagnose/timer_table.h"
#include "attune/util/text.h"

#include <algorithm>

namespace attune::diagnose {

std::string to_string(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::Total: return "total";
    case PhaseKind::Compute: return "compute";
    case PhaseKind::DataParallelComm: return "dp_comm";
    case PhaseKind::PipelineComm: return "pp_comm";
    case PhaseKind::Data: return "data";
    case PhaseKind::Optimizer: return "optimizer";
    case PhaseKind::Other: return "other";
  }
  return "other";
}

namespace {

// DeepSpeed prints "fwd_microstep" beside "fwd"; older releases spell them out.
std::string_view without_microstep(std::string_view name) {
  constexpr std::string_view kSuffix = "_microstep";
  if (name.ends_with(kSuffix)) name.remove_suffix(kSuffix.size());
  return name;
}

}  // namespace

PhaseKind phase_kind(std::string_view raw) {
  const std::string_view name = without_microstep(raw);
  if (name == "forward-backward") return PhaseKind::Total;
  if (name == "forward-compute" || name == "backward-compute" || name == "fwd" || name == "bwd_inner" ||
      name == "forward" || name == "backward_inner")
    return PhaseKind::Compute;
  // Megatron: gradient all-reduce / reduce-scatter and parameter all-gather
  // that overlap did not hide; DeepSpeed: bwd_allreduce is the non-overlapped
  // gradient reduction, optimizer_allgather ZeRO's parameter gather.
  if (contains(name, "grads-all-reduce") || name == "all-grads-sync" || name == "params-all-gather" ||
      contains(name, "grads-reduce-scatter") || name == "bwd_allreduce" || name == "backward_allreduce" ||
      name == "optimizer_allgather")
    return PhaseKind::DataParallelComm;
  if (contains(name, "-send") || contains(name, "-recv")) return PhaseKind::PipelineComm;
  if (name == "batch-generator" || name == "broadcast-data") return PhaseKind::Data;
  if (name == "optimizer" || name == "step" || name == "optimizer_step") return PhaseKind::Optimizer;
  return PhaseKind::Other;
}

void TimerTable::begin_report() { ++report_; }

void TimerTable::fold(Stats& s) {
  if (s.last_report < 0) return;
  if (s.reports == 0) {
    s.first_min = s.cur_min;
    s.first_max = s.cur_max;
  } else {
    s.sum_min += s.cur_min;
    s.sum_max += s.cur_max;
  }
  ++s.reports;
}

void TimerTable::add(std::string_view name, double min_ms, double max_ms) {
  if (report_ == 0) report_ = 1;  // a timer line without a header is its own report
  auto it = phases_.find(name);
  if (it == phases_.end()) {
    it = phases_.emplace(std::string(name), Stats{}).first;
    it->second.order = phases_.size() - 1;
  }
  Stats& s = it->second;
  if (s.last_report == report_) {
    s.cur_min = std::min(s.cur_min, min_ms);
    s.cur_max = std::max(s.cur_max, max_ms);
    return;
  }
  fold(s);
  s.last_report = report_;
  s.cur_min = min_ms;
  s.cur_max = max_ms;
}

std::vector<PhaseTime> TimerTable::phases() const {
  std::vector<std::pair<std::size_t, PhaseTime>> ordered;
  for (const auto& [name, stats] : phases_) {
    Stats s = stats;
    fold(s);  // the report still open
    PhaseTime p;
    p.name = name;
    p.kind = phase_kind(name);
    p.reports = s.reports;
    const int later = s.reports - 1;
    p.min_ms = later > 0 ? s.sum_min / later : s.first_min;
    p.max_ms = later > 0 ? s.sum_max / later : s.first_max;
    ordered.emplace_back(s.order, std::move(p));
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PhaseTime> out;
  for (auto& [order, p] : ordered) out.push_back(std::move(p));
  return out;
}

TimeBreakdown TimerTable::breakdown() const {
  TimeBreakdown b;
  auto add_to = [](std::optional<double>& slot, double v) { slot = slot.value_or(0) + v; };
  // DeepSpeed prints both per-micro-step and per-step figures: prefer the
  // per-step ones when both are there.
  bool global = false;
  for (const auto& [name, s] : phases_) global |= !name.ends_with("_microstep") && phase_kind(name) != PhaseKind::Other;
  for (const PhaseTime& p : phases()) {
    if (global && p.name.ends_with("_microstep")) continue;
    switch (p.kind) {
      case PhaseKind::Total:
        b.total_ms = p.max_ms;
        if (p.max_ms > 0) b.straggler_spread = (p.max_ms - p.min_ms) / p.max_ms;
        break;
      case PhaseKind::Compute: add_to(b.compute_ms, p.max_ms); break;
      case PhaseKind::DataParallelComm: add_to(b.dp_comm_ms, p.max_ms); break;
      case PhaseKind::PipelineComm: add_to(b.pp_comm_ms, p.max_ms); break;
      case PhaseKind::Data: add_to(b.data_ms, p.max_ms); break;
      case PhaseKind::Optimizer: add_to(b.optimizer_ms, p.max_ms); break;
      case PhaseKind::Other: break;
    }
  }
  return b;
}

}  // namespace attune::diagnose
