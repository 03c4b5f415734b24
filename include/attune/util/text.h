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
