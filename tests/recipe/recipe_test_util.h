// Helpers for recipe tests: counting changed lines between two texts.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace attune::recipe::testing {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Lines of `after` that are not at the same index in `before` (for edits that
// keep the line count) — enough to prove "only this line changed".
inline std::vector<std::string> changed_lines(const std::string& before, const std::string& after) {
  auto a = lines_of(before), b = lines_of(after);
  std::vector<std::string> out;
  if (a.size() != b.size()) {
    out.push_back("<line count " + std::to_string(a.size()) + " -> " + std::to_string(b.size()) + ">");
    return out;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) out.push_back(b[i]);
  }
  return out;
}

}  // namespace attune::recipe::testing
