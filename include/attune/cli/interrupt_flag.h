// InterruptFlag: Ctrl-C (SIGINT) and SIGTERM turned into a flag that a
// long command polls (it then cancels what is running and reports), for as
// long as the object lives; the previous handlers come back afterwards.
#pragma once

#include <csignal>

namespace attune::cli {

class InterruptFlag {
 public:
  InterruptFlag();
  ~InterruptFlag();
  InterruptFlag(const InterruptFlag&) = delete;
  InterruptFlag& operator=(const InterruptFlag&) = delete;
  bool raised() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace attune::cli
