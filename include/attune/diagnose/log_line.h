// LogLine: one logical line of a training log after the quirks of real logs are
// undone — rank prefixes stripped (and the rank kept), ANSI colours and CR-only
// progress updates removed, CRLF folded, lines hard-wrapped at 80 columns
// joined, text glued to a progress bar split off. Parsers and the failure
// classifier read LogLines, never raw bytes.
#pragma once

#include <string_view>

namespace attune::diagnose {

struct LogLine {
  std::string_view text;  // valid only during the callback that receives it
  long line = 0;          // 1-based line number in the file where this logical line starts
  int rank = -1;          // rank from a prefix ([rank3]:, "3: ", "[default3]:"), -1 if none
};

}  // namespace attune::diagnose
