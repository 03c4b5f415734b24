// LogPass: one pass over a run's logical log lines, as the diagnoser makes it.
// The first lines are held until the framework is known from them (or given),
// then replayed into that framework's LogParser; a line that becomes a step
// sample goes to the FailureClassifier as a step line, every other line as
// text. diagnose_logs() and the fuzz targets drive the same pass.
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

  // framework: a parser name, or "" to detect it from the first
  // `detect_lines` lines. Throws InputError for an unknown framework name.
  explicit LogPass(const std::string& framework, std::size_t detect_lines = kDetectLines);

  void feed(const LogLine& line);
  // Once, after the last line.
  void finish();

  const ParseSink& sink() const { return sink_; }
  ParseSink& sink() { return sink_; }
  const FailureClassifier& classifier() const { return classifier_; }
  std::string framework() const { return parser_ ? parser_->framework() : ""; }

 private:
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
  ParseSink sink_;
  FailureClassifier classifier_;
};

}  // namespace attune::diagnose
