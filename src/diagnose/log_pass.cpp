#include "attune/diagnose/log_pass.h"

#include "attune/util/error.h"

namespace attune::diagnose {

LogPass::LogPass(const std::string& framework, std::size_t detect_lines) : detect_lines_(detect_lines) {
  if (!framework.empty()) start_parser(framework);  // nothing to detect: no lines held
}

void LogPass::feed(const LogLine& line) {
  if (!parser_) {
    held_.push_back({std::string(line.text), line.line, line.rank});
    if (held_.size() >= detect_lines_) start_parser("");
    return;
  }
  parse(line);
}

void LogPass::finish() {
  if (!parser_) start_parser("");
}

void LogPass::start_parser(const std::string& framework) {
  std::string fw = framework;
  if (fw.empty()) {
    std::vector<std::string> first;
    first.reserve(held_.size());
    for (const auto& h : held_) first.push_back(h.text);
    fw = detect_framework(first);
  }
  parser_ = make_parser(fw.empty() ? "megatron" : fw);
  if (!parser_) throw InputError({}, "--framework", "unknown log framework '" + fw + "'");
  for (const auto& h : held_) parse(LogLine{h.text, h.line, h.rank});
  held_.clear();
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

}  // namespace attune::diagnose
