// Clock: the time as attune's waiting code reads it, and its way to wait.
// The campaign loop and the run watchdog take one, so a test can run a
// campaign of many simulated hours (hangs, time limits, a watchdog's
// cancel) in milliseconds with a fake that advances when slept on, the way
// ninja's builder runs with a fake disk. steady_clock() is the real one.
#pragma once

#include <functional>

namespace attune {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary start; never goes back.
  virtual double now_s() = 0;
  // Waits `seconds`, returning early once `interrupted` says true (the real
  // clock asks it at least every 0.1 s). Safe to call from several threads.
  virtual void sleep_s(double seconds, const std::function<bool()>& interrupted) = 0;
};

// The machine's monotonic clock.
Clock& steady_clock();

}  // namespace attune
