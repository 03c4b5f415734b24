// Budget: the GPU-hours a campaign may spend. Every run is charged what it
// used on every GPU (failed runs and start-up included); a run is not
// started when its worst case — its time limit on all its GPUs, plus the
// worst cases of the runs still in flight — exceeds what is left.
#pragma once

#include <string>

namespace attune::campaign {

// "200gpuh", "1.5kgpuh", "40gpuh", "200" (GPU-hours). InputError naming
// `flag` for anything else, or a budget that is not positive.
double parse_budget(const std::string& text, const std::string& flag = "--budget");

class Budget {
 public:
  explicit Budget(double gpu_hours) : total_(gpu_hours) {}

  double total() const { return total_; }
  double spent() const { return spent_; }
  double left() const { return total_ - spent_ - in_flight_; }

  // Reserves a run's worst case; false (and nothing reserved) when it does not fit.
  bool reserve(double worst_case_gpu_hours);
  // The run ended: its reservation is released and what it used is charged.
  void settle(double worst_case_gpu_hours, double used_gpu_hours);
  // A run recalled from the journal: charged without a reservation.
  void charge(double used_gpu_hours) { spent_ += used_gpu_hours; }

 private:
  double total_;
  double spent_ = 0;
  double in_flight_ = 0;
};

}  // namespace attune::campaign
