// StatusLine: the live line a long command (tune, bench) keeps at the bottom
// of a terminal — redrawn in place, cleared before a plain line is printed
// above it — and plain lines only when stderr is not a terminal. A progress
// bar for it is bar(done, total).
#pragma once

#include <string>

namespace attune::cli {

class StatusLine {
 public:
  explicit StatusLine(bool quiet = false);
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool live() const { return tty_; }
  // Redraws the live line (only on a terminal).
  void show(const std::string& text);
  // A line of its own above the live one (nothing when quiet).
  void line(const std::string& text);

 private:
  void clear();
  bool tty_, quiet_;
  bool shown_ = false;
};

// "[#####---------------]": `done` of `total` in `width` cells.
std::string bar(double done, double total, int width = 20);

}  // namespace attune::cli
