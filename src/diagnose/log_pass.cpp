#include "attune/diagnose/log_pass.h"

#include "attune/util/error.h"

namespace attune::diagnose {

namespace {

// Lines with no step of any framework that still name Megatron: its source
// paths or modules in a traceback, Megatron-Core's own classes and messages.
template <class Lines>
bool names_megatron(const Lines& held) {
  for (const auto& h : held) {
    const std::string_view t = h.text;
    for (std::string_view hint : {"Megatron-LM/", "megatron-lm/", "megatron/training", "megatron/core", "megatron.core.",
                                  "class TELinear(", "found NaN in local grad norm for bucket"}) {
      if (t.find(hint) != std::string_view::npos) return true;
    }
  }
  return false;
}

}  // namespace

LogPass::LogPass(const std::string& framework, std::size_t detect_lines) : detect_lines_(detect_lines) {
  if (!framework.empty()) start_parser(framework);  // nothing to detect: no lines held
}

void LogPass::feed(const LogLine& line) {
  if (!parser_) {
    held_.push_back({std::string(line.text), line.line, line.rank});
    held_bytes_ += line.text.size();
    held_grew_ = true;
    if (early_parser_) {
      const Held& h = held_.back();
      early_parser_->feed(LogLine{h.text, h.line, h.rank}, *early_sink_);
    }
    if (held_.size() >= detect_lines_ || held_bytes_ >= kDetectBytes) start_parser("");
    return;
  }
  parse(line);
}

void LogPass::finish() {
  if (!parser_) start_parser("");
  parser_->finish(sink_);
}

void LogPass::start_parser(const std::string& framework) {
  std::string fw = framework;
  if (fw.empty()) {
    std::vector<std::string> first;
    first.reserve(held_.size());
    for (const auto& h : held_) first.push_back(h.text);
    fw = detect_framework(first);
  }
  guessed_ = fw.empty() && !names_megatron(held_);
  parser_ = make_parser(fw.empty() ? "megatron" : fw);
  if (!parser_) throw InputError({}, "--framework", "unknown log framework '" + fw + "'");
  for (const auto& h : held_) parse(LogLine{h.text, h.line, h.rank});
  held_.clear();
  held_.shrink_to_fit();
  held_bytes_ = 0;
  early_parser_.reset();
  early_sink_.reset();
}

// A line that adds a step sample goes to the classifier as a step line;
// memory reports and the like that update the last sample do not.
void LogPass::parse(const LogLine& line) {
  const std::size_t before = sink_.samples.size();
  parser_->feed(line, sink_);
  if (sink_.samples.size() > before) {
    classifier_.feed_step(line, sink_.samples.back());
  } else {
    classifier_.feed(line);
  }
}

void LogPass::provisional() {
  if (parser_ || !held_grew_) return;
  held_grew_ = false;
  std::vector<std::string> first;
  first.reserve(held_.size());
  for (const auto& h : held_) first.push_back(h.text);
  const std::string fw = detect_framework(first);
  // No evidence yet, or the same verdict (whose parser has seen every held line).
  if (fw.empty() || (early_parser_ && early_parser_->framework() == fw)) return;
  early_parser_ = make_parser(fw);
  early_sink_ = std::make_unique<ParseSink>();
  for (const auto& h : held_) early_parser_->feed(LogLine{h.text, h.line, h.rank}, *early_sink_);
}

std::string LogPass::framework_shown() const {
  if (guessed_ && sink_.samples.empty()) return "unknown";
  return framework();
}

const StepSeries& LogPass::samples_so_far() const {
  static const StepSeries kNone;
  if (parser_) return sink_.samples;
  return early_sink_ ? early_sink_->samples : kNone;
}

std::string LogPass::framework_so_far() const {
  if (parser_) return parser_->framework();
  return early_parser_ ? early_parser_->framework() : "";
}

}  // namespace attune::diagnose
