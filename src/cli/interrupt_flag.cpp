#include "attune/cli/interrupt_flag.h"

namespace attune::cli {

namespace {
volatile std::sig_atomic_t g_raised = 0;
extern "C" void on_signal(int) { g_raised = 1; }
}  // namespace

InterruptFlag::InterruptFlag() {
  g_raised = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptFlag::~InterruptFlag() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool InterruptFlag::raised() const { return g_raised != 0; }

}  // namespace attune::cli
