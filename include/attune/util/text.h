// Small text helpers every module needs (ASCII case folding, substring test,
// trimming blanks, splitting), in one place so that parsers and matchers agree on them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// The pieces between `sep`s (an empty text gives one empty piece).
inline std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (true) {
    const auto at = s.find(sep);
    out.emplace_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

// The lines of a text without their '\n' (and '\r'); no empty last line.
inline std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out = split(s, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  for (auto& line : out) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  return out;
}

}  // namespace attune
