// Small text helpers every module needs (ASCII case folding, substring test,
// trimming blanks), in one place so that parsers and matchers agree on them.
#pragma once

#include <string>
#include <string_view>

namespace attune {

inline bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// ASCII lower case; other bytes (UTF-8) unchanged.
inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// ASCII case-insensitive substring test; `what` must be lower case. Allocates
// nothing (the simulator calls it millions of times a second).
inline bool contains_lower(std::string_view text, std::string_view what) {
  if (what.size() > text.size()) return false;
  for (std::size_t i = 0; i + what.size() <= text.size(); ++i) {
    std::size_t j = 0;
    while (j < what.size()) {
      char c = text[i + j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != what[j]) break;
      ++j;
    }
    if (j == what.size()) return true;
  }
  return false;
}

// Without leading spaces and tabs.
inline std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Without leading and trailing spaces and tabs.
inline std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace attune
