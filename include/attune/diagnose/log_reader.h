// LogReader: turns a training log (plain text or gzip, possibly gigabytes) into
// a stream of normalised LogLines. It undoes the quirks of real logs so that the
// parsers and the failure classifier only see clean records:
//   - ANSI escape sequences (ESC [ ... letter) removed, CRLF folded to LF;
//   - progress-bar updates separated by bare CR: only the last non-empty part kept;
//   - rank/launcher prefixes stripped, the rank kept: "[rank3]:", "3: " (srun
//     --label), "[default3]:" / "task/0 [default3]:" (NeMo-Run), "stdout: ",
//     "stderr: ", viewer line numbers "[80746] ";
//   - physical lines of exactly 80 characters joined with the next (hard wrap);
//   - a log record glued to a progress bar split onto its own logical line;
//   - the same text printed by several ranks delivered once (the first rank's),
//     while repeats from one rank are all delivered.
// The file is read in 1 MiB chunks; a LogLine's text points into buffers owned
// by the reader and is valid only during the callback.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "attune/diagnose/log_line.h"

namespace attune::diagnose {

class LogReader {
 public:
  using Callback = std::function<void(const LogLine&)>;

  explicit LogReader(Callback on_line);
  ~LogReader();
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // Reads the whole file (gzip detected by the magic bytes 1f 8b) and delivers
  // every logical line. Throws InputError naming the file if it cannot be read.
  void read_file(const std::string& path);
  // One-shot form of the above.
  static void read_file(const std::string& path, const Callback& on_line);

  // Incremental interface: feed raw bytes in any split, then finish() once.
  // read_file() is built on these; they are public for streams and tests.
  void feed(std::string_view bytes);
  void finish();

  // Normalises an in-memory text (tests, small snippets).
  static void read_text(std::string_view text, const Callback& on_line);

 private:
  class Normaliser;
  std::unique_ptr<Normaliser> norm_;
  std::string partial_;  // bytes of a physical line split across feed() calls
};

}  // namespace attune::diagnose
