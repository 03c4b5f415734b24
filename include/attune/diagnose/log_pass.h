// LogPass: one pass over a run's logical log lines, as the diagnoser makes it.
// The first lines are held until the framework is known from them (or given),
// then replayed into that framework's LogParser; a line that becomes a step
// sample goes to the FailureClassifier as a step line, every other line as
// text. diagnose_logs(), the run watch (a log read while it is written) and
// the fuzz targets drive the same pass.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attune/diagnose/failure_classifier.h"
#include "attune/diagnose/log_line.h"
#include "attune/diagnose/log_parser.h"

namespace attune::diagnose {

class LogPass {
 public:
  static constexpr std::size_t kDetectLines = 2000;
  // Lines are held for detection up to this many bytes too, so that 2000
  // lines of up to LogReader::kMaxLineBytes do not hold gigabytes.
  static constexpr std::size_t kDetectBytes = std::size_t{8} << 20;

  // framework: a parser name, or "" to detect it from the first
  // `detect_lines` lines (or kDetectBytes). Throws InputError for an unknown
  // framework name.
  explicit LogPass(const std::string& framework, std::size_t detect_lines = kDetectLines);

  void feed(const LogLine& line);
  // Once, after the last line: the framework is decided (detect_framework
  // over the held lines, Megatron when nothing has evidence) and the held
  // lines are parsed.
  void finish();

  const ParseSink& sink() const { return sink_; }
  ParseSink& sink() { return sink_; }
  const FailureClassifier& classifier() const { return classifier_; }
  // The framework decided ("" while lines are still held for detection).
  std::string framework() const { return parser_ ? parser_->framework() : ""; }
  // The framework the log shows: the decided one, or "unknown" when nothing
  // had evidence of one and the fallback parser read no step from it either
  // (a log of no known framework is not called Megatron's).
  std::string framework_shown() const;

  // Incremental reading, for a log read while the run writes it. While lines
  // are held, provisional() parses them with the framework detect_framework
  // names from the lines so far (detected again when lines arrived since the
  // last call, and every held line parsed again when the verdict changes);
  // nothing while no parser has evidence. Once the framework is decided the
  // provisional parse is dropped and these read the pass itself, so after
  // finish() they give exactly what sink() does. The provisional parse never
  // reaches sink() or the classifier: they see every line once, under the
  // decided framework. A pass whose caller never asks pays nothing for it.
  void provisional();
  const StepSeries& samples_so_far() const;
  std::string framework_so_far() const;  // "" while nothing has evidence

 private:
  bool guessed_ = false;  // no parser had evidence: the fallback parses
  struct Held {
    std::string text;
    long line;
    int rank;
  };

  void start_parser(const std::string& framework);
  void parse(const LogLine& line);

  std::size_t detect_lines_;
  std::unique_ptr<LogParser> parser_;
  std::vector<Held> held_;
  std::size_t held_bytes_ = 0;
  ParseSink sink_;
  FailureClassifier classifier_;

  // The provisional parse of the held lines (only once provisional() asked).
  std::unique_ptr<LogParser> early_parser_;
  std::unique_ptr<ParseSink> early_sink_;
  bool held_grew_ = false;  // lines held since the last provisional()
};

}  // namespace attune::diagnose
