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
//
// It fails closed (docs/diagnose.md, "What is refused"): read_file() takes
// only a regular file, whose first 64 KiB must be text (not_text_reason) and
// which holds at most kMaxLogBytes; every line is bounded by kMaxLineBytes, so
// memory stays bounded whatever the bytes are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "attune/diagnose/log_line.h"

namespace attune::diagnose {

// Why `head`, the first bytes of a log, is not a text log, or "" when it is.
// Refused: a NUL byte anywhere in it ("NUL byte at offset N"; a UTF-16 byte
// order mark is named as such), or more than kMaxNonTextShare of its bytes,
// and more than kMinNonTextBytes, that are not text: bytes of invalid UTF-8
// sequences, and control bytes other than \t \n \v \f \r \b \a and ESC
// (colours, progress bars and bells are normal in logs). A multi-byte
// character cut by the end of `head` counts as text.
std::string not_text_reason(std::string_view head);

class LogReader {
 public:
  using Callback = std::function<void(const LogLine&)>;

  // What read_file() judges, and the caps (docs/diagnose.md).
  static constexpr std::size_t kSniffBytes = std::size_t{64} << 10;
  static constexpr double kMaxNonTextShare = 0.10;
  static constexpr std::size_t kMinNonTextBytes = 8;
  static constexpr std::uint64_t kMaxLogBytes = std::uint64_t{16} << 30;  // per file, decompressed
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
  struct Limits {
    std::uint64_t max_log_bytes = kMaxLogBytes;
    std::size_t max_line_bytes = kMaxLineBytes;
    // > 0: read_file() reads the first this many bytes only (of the text,
    // decompressed): the part of a log a measurement covered, without what
    // the run printed after attune decided to stop it.
    std::uint64_t read_bytes = 0;
  };

  explicit LogReader(Callback on_line);
  LogReader(Callback on_line, Limits limits);
  ~LogReader();
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // Reads the whole file (gzip detected by the magic bytes 1f 8b) and delivers
  // every logical line. Throws InputError naming the file if it cannot be
  // read, is not a regular file, is not text, or holds more than
  // max_log_bytes (decompressed); no line is delivered for a file refused
  // for what it is (type, size, not text).
  void read_file(const std::string& path);
  // One-shot form of the above.
  static void read_file(const std::string& path, const Callback& on_line);

  // Incremental interface: feed raw bytes in any split, then finish() once.
  // read_file() is built on these; they are public for streams and tests.
  // They judge nothing, but bound every line: a physical line over
  // max_line_bytes keeps its first and last CR-separated parts (what the
  // normaliser reads of a progress bar) if they fit, else its first
  // max_line_bytes (a whole UTF-8 character); the rest up to its newline is
  // dropped and counted in truncated_lines().
  void feed(std::string_view bytes);
  void finish();

  // Physical lines cut to max_line_bytes so far.
  std::size_t truncated_lines() const { return truncated_lines_; }

  // Normalises an in-memory text (tests, small snippets).
  static void read_text(std::string_view text, const Callback& on_line);

 private:
  class Normaliser;
  void deliver(std::string_view line);
  void append_partial(std::string_view bytes);

  Limits limits_;
  std::unique_ptr<Normaliser> norm_;
  std::string partial_;    // bytes of a physical line split across feed() calls
  std::string bounded_;    // an over-long line, bounded
  bool dropping_ = false;  // partial_ was cut: drop bytes up to the newline
  std::size_t truncated_lines_ = 0;
};

}  // namespace attune::diagnose
