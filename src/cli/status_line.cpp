#include "attune/cli/status_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace attune::cli {

namespace {
constexpr std::size_t kWidest = 160;  // a live line longer than this would wrap and stop redrawing in place
}

StatusLine::StatusLine(bool quiet) : tty_(!quiet && isatty(fileno(stderr))), quiet_(quiet) {}

StatusLine::~StatusLine() { clear(); }

void StatusLine::show(const std::string& text) {
  if (!tty_) return;
  fmt::print(stderr, "\r\x1b[2K{}", text.substr(0, kWidest));
  std::fflush(stderr);
  shown_ = true;
}

void StatusLine::line(const std::string& text) {
  if (quiet_) return;
  clear();
  fmt::print(stderr, "{}\n", text);
}

void StatusLine::clear() {
  if (shown_) fmt::print(stderr, "\r\x1b[2K");
  shown_ = false;
}

std::string bar(double done, double total, int width) {
  const int filled = total > 0 ? std::clamp(static_cast<int>(width * done / total + 0.5), 0, width) : 0;
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '-') + "]";
}

}  // namespace attune::cli
