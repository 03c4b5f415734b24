// libFuzzer target for the diagnoser's log path, the way diagnose_logs() runs it
// (include/attune/diagnose/log_pass.h): raw bytes -> LogReader -> every
// logical line into the diagnoser's LogPass (FailureClassifier + LogParser) ->
// the failure verdict and the steady state over what the parser collected.
//
// ATTUNE_FUZZ_PARSER picks the parser: a name from parser_names() ("megatron",
// "hf", ...) feeds every line straight to that parser; "" holds the first lines,
// runs detect_framework() on them and replays them into the detected parser
// (the "reader" target). That target also reads inputs starting with the gzip
// magic 1f 8b through LogReader::read_file, the only gzip path there is.
//
// The input is fed to LogReader::feed() in three pieces split at points derived
// from the data, each in its own exactly-sized heap buffer (so ASan sees reads
// past a piece), which exercises physical lines split across feed() calls.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with Clang and libFuzzer
// (ATTUNE_FUZZ=ON, scripts/fuzz.sh), and with replay_main.cpp as a plain
// program that runs the seed corpus and the saved regressions (ctest -L fuzz_corpus).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "attune/diagnose/log_line.h"
#include "attune/diagnose/log_parser.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "attune/diagnose/steady_state.h"
#include "attune/util/error.h"

#ifndef ATTUNE_FUZZ_PARSER
#error "define ATTUNE_FUZZ_PARSER: a parser name, or \"\" to detect the framework like the diagnoser"
#endif

namespace {

using attune::diagnose::LogLine;
using attune::diagnose::LogParser;
using attune::diagnose::LogReader;
using attune::diagnose::ParseSink;

// Documented properties of what LogReader delivers and of the results; a
// violation aborts, so the fuzzer reports it like a crash.
#define FUZZ_CHECK(cond)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                        \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

constexpr std::string_view kParser = ATTUNE_FUZZ_PARSER;
// Lines held for detection in the reader target. diagnose_logs() holds 2000;
// fewer here so that inputs of a few KiB reach both the replay of the held
// lines and the direct path after detection.
constexpr std::size_t kDetectLines = 64;

// The diagnoser's own LogPass, with checks of what it promises around it.
class Pass {
 public:
  Pass() : pass_(std::string(kParser), kDetectLines) {
    if (!kParser.empty()) detector_ = attune::diagnose::make_parser(kParser);
  }

  void feed(const LogLine& line) {
    // LogLine: one logical line, CRLF folded and CR progress updates resolved.
    FUZZ_CHECK(line.text.find('\n') == std::string_view::npos);
    FUZZ_CHECK(line.text.find('\r') == std::string_view::npos);
    FUZZ_CHECK(line.line >= 1 && line.line >= last_line_);
    FUZZ_CHECK(line.rank >= -1);
    last_line_ = line.line;
    if (detector_) (void)detector_->detect(line.text);  // the reader target detects through the pass
    pass_.feed(line);
  }

  void finish() {
    pass_.finish();
    const std::string fw = pass_.framework();
    bool known = false;
    for (const std::string& n : attune::diagnose::parser_names()) known = known || n == fw;
    FUZZ_CHECK(known);
    check_results();
  }

 private:
  void check_results() {
    const ParseSink& sink = pass_.sink();
    // Samples and disturbances name lines that were delivered.
    for (const auto& s : sink.samples) FUZZ_CHECK(s.line >= 1 && s.line <= last_line_);
    for (const auto& d : sink.disturbances) FUZZ_CHECK(d.line >= 1 && d.line <= last_line_);

    for (bool ended_early : {true, false}) {
      const auto f = pass_.classifier().result(ended_early);
      if (f) FUZZ_CHECK(f->line >= 1 && f->line <= last_line_ && f->rank >= -1);
    }

    const auto st = attune::diagnose::steady_state(sink.samples, sink.disturbances);
    FUZZ_CHECK(st.samples_total == static_cast<int>(sink.samples.size()));
    FUZZ_CHECK(st.used.size() == sink.samples.size());
    FUZZ_CHECK(st.samples_used >= 0 && st.samples_used <= st.samples_total);
  }

  attune::diagnose::LogPass pass_;
  std::unique_ptr<LogParser> detector_;  // per-parser targets: its detect() too
  long last_line_ = 0;
};

// FNV-1a: split points that follow the data, so the fuzzer can steer them.
std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

void feed_piece(LogReader& reader, const std::uint8_t* data, std::size_t n) {
  // An exactly-sized copy: a read past the piece is a heap overflow for ASan.
  std::unique_ptr<char[]> piece(new char[n == 0 ? 1 : n]);
  for (std::size_t i = 0; i < n; ++i) piece[i] = static_cast<char>(data[i]);
  reader.feed(std::string_view(piece.get(), n));
}

void read_incrementally(const std::uint8_t* data, std::size_t size, Pass& pass) {
  const std::uint64_t h = hash_bytes(data, size);
  const std::size_t a = static_cast<std::size_t>(h % (size + 1));
  const std::size_t b = a + static_cast<std::size_t>((h >> 32) % (size - a + 1));
  LogReader reader([&](const LogLine& line) { pass.feed(line); });
  feed_piece(reader, data, a);
  feed_piece(reader, data + a, b - a);
  feed_piece(reader, data + b, size - b);
  reader.finish();
}

// LogReader reads gzip only from files: one scratch file per process, removed
// at exit (the string is never destroyed, so the exit handler can still use it).
const std::string& scratch_path() {
  static const std::string* path = [] {
    const char* dir = std::getenv("TMPDIR");
    auto* p = new std::string(std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                              "/attune-fuzz-gz-XXXXXX");
    const int fd = mkstemp(p->data());
    FUZZ_CHECK(fd >= 0);
    close(fd);
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return p;
  }();
  return *path;
}

void read_gzip_file(const std::uint8_t* data, std::size_t size, Pass& pass) {
  const std::string& path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  FUZZ_CHECK(std::fwrite(data, 1, size, f) == size);
  FUZZ_CHECK(std::fclose(f) == 0);
  try {
    LogReader::read_file(path, [&](const LogLine& line) { pass.feed(line); });
  } catch (const attune::InputError&) {
    // A corrupt or truncated gzip stream: the CLI reports it, exit status 2.
    // The lines read before the error still went through the pass.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Pass pass;
  if (kParser.empty() && size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    read_gzip_file(data, size, pass);
  } else {
    read_incrementally(data, size, pass);
  }
  pass.finish();
  return 0;
}
