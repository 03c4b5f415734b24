// TimerTable: the per-phase times a framework prints beside its step lines —
// Megatron's timers ("(min, max) time across ranks (ms):" blocks and the older
// "time (ms) | forward-compute: ..." line; NeMo 2 prints the same) and
// DeepSpeed's wall-clock breakdown ("time (ms) | fwd: .. | bwd_allreduce: ..").
// Each printed block is one report; a phase's figure is the mean over the
// reports after the first (the first interval carries the warm-up). Phases are
// sorted into data loading, compute, data-parallel and pipeline
// communication, and optimizer, so the diagnosis can say where a step goes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::diagnose {

enum class PhaseKind { Total, Compute, DataParallelComm, PipelineComm, Data, Optimizer, Other };
std::string to_string(PhaseKind kind);
// By the names Megatron and DeepSpeed give their timers.
PhaseKind phase_kind(std::string_view name);

struct PhaseTime {
  std::string name;
  PhaseKind kind = PhaseKind::Other;
  double min_ms = 0;  // across ranks (equal to max where only one figure is printed)
  double max_ms = 0;
  int reports = 0;    // reports that printed this phase
};

// Where a step goes, in ms per iteration, from the phases present.
struct TimeBreakdown {
  std::optional<double> total_ms;             // forward-backward (Megatron) / fwd+bwd+step (DeepSpeed)
  std::optional<double> compute_ms;           // forward + backward compute
  std::optional<double> dp_comm_ms;           // gradient reduce / parameter gather not hidden by overlap
  std::optional<double> pp_comm_ms;           // pipeline send/recv, bubbles included
  std::optional<double> data_ms;              // batch generator
  std::optional<double> optimizer_ms;
  std::optional<double> straggler_spread;     // (max - min) / max of the total across ranks
};

class TimerTable {
 public:
  // A new block of timers starts (one per logged interval).
  void begin_report();
  // One phase of the current report; a phase seen twice in one report (one
  // figure per rank) keeps the min and max.
  void add(std::string_view name, double min_ms, double max_ms);

  bool empty() const { return phases_.empty(); }
  int reports() const { return report_; }
  // Phases in the order first printed, averaged over the reports after the first.
  std::vector<PhaseTime> phases() const;
  TimeBreakdown breakdown() const;

 private:
  struct Stats {
    std::size_t order = 0;
    int last_report = -1;
    double cur_min = 0, cur_max = 0;     // the current report's figures
    double first_min = 0, first_max = 0; // the first report's
    double sum_min = 0, sum_max = 0;     // reports after the first
    int reports = 0;
  };
  static void fold(Stats& s);

  std::map<std::string, Stats, std::less<>> phases_;
  int report_ = 0;
};

}  // namespace attune::diagnose
