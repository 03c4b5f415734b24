// LogParser: reads one framework's per-step lines (iteration lines, memory
// reports, disturbances such as checkpoint saves) into StepSamples. One parser
// per framework; the factory picks it by name and detect_framework() picks the
// name from the first lines of a log.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/diagnose/log_line.h"
#include "attune/diagnose/step_sample.h"
#include "attune/diagnose/timer_table.h"

namespace attune::diagnose {

// What the parsers collect from one log. Peaks are maxima over every memory
// report seen (all ranks), in GiB; capacity only where the framework prints it.
struct ParseSink {
  StepSeries samples;
  std::vector<Disturbance> disturbances;
  std::optional<double> peak_mem_allocated_gib;
  std::optional<double> peak_mem_reserved_gib;
  std::optional<double> mem_capacity_gib;
  TimerTable timers;  // Megatron timers / DeepSpeed wall-clock breakdown, when printed
};

class LogParser {
 public:
  virtual ~LogParser() = default;
  // "megatron", "bridge", "nemo", "automodel", "torchtitan", "deepspeed", "hf".
  virtual std::string framework() const = 0;
  // Evidence score that this line comes from this framework (0 = none).
  virtual int detect(std::string_view line) const = 0;
  // Parses one normalised line; parsers keep state between lines (log
  // intervals, memory reports that arrive before their iteration line).
  virtual void feed(const LogLine& line, ParseSink& sink) = 0;
  // The log ended: a parser holding part of a record (a hard-wrapped line
  // being rejoined) hands it over.
  virtual void finish(ParseSink& /*sink*/) {}
};

// nullptr if the framework is unknown.
std::unique_ptr<LogParser> make_parser(std::string_view framework);
// All framework names, in tie-break order for detection.
std::vector<std::string> parser_names();
// Detects the framework from the first lines (sum of detect scores over up to
// 2000 lines); "" when no parser finds any evidence. Ties go to the earlier
// name in parser_names() (plain Megatron before its derivatives).
std::string detect_framework(const std::vector<std::string>& first_lines);

}  // namespace attune::diagnose
