#include "attune/util/clock.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace attune {

namespace {

constexpr double kSleepSlice_s = 0.1;  // how often a sleep asks whether it was interrupted

class SteadyClock final : public Clock {
 public:
  double now_s() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void sleep_s(double seconds, const std::function<bool()>& interrupted) override {
    const double end = now_s() + seconds;
    for (;;) {
      if (interrupted && interrupted()) return;
      const double left = end - now_s();
      if (left <= 0) return;
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, kSleepSlice_s)));
    }
  }
};

}  // namespace

Clock& steady_clock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace attune
