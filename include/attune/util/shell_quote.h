// Shell words for any bytes: how attune writes a value into a script it
// generates (a batch script, a launcher) so that bash reads exactly that
// value back, never code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attune {

// One shell word: 'text' with each ' written '\''. "" -> ''. Safe for every
// byte but NUL (which no shell word can hold).
inline std::string shell_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  for (const char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

// The words, each quoted, separated by one space.
inline std::string quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

}  // namespace attune
