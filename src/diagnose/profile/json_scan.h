// Small JSON scanning helpers for the streaming Chrome-trace reader: they work
// on one contiguous buffer that may end in the middle of a value, and answer
// "incomplete" (npos) instead of guessing, so the caller can wait for more
// bytes. No recursion (nesting depth is a counter), no allocation, every
// access bounds-checked: the input may be anything.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attune::diagnose::profile {

inline constexpr std::size_t kIncomplete = std::string_view::npos;

inline bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// s[i] == '"': index one past the closing quote, or kIncomplete.
std::size_t json_string_end(std::string_view s, std::size_t i);

// A number or literal starting at s[i]: index of the byte after it, or
// kIncomplete when it runs to the end of s (it may continue).
std::size_t json_scalar_end(std::string_view s, std::size_t i);

// Any value starting at s[i] (string, object, array, scalar): index one past
// it, or kIncomplete.
std::size_t json_value_end(std::string_view s, std::size_t i);

// Decodes the body of a JSON string (between the quotes) into UTF-8, with
// \" \\ \/ \b \f \n \r \t and \uXXXX (surrogate pairs joined). Invalid escapes
// are kept as written; a lone surrogate becomes U+FFFD.
void decode_json_string(std::string_view body, std::string& out);

// Skips one JSON value delivered in pieces, keeping only its nesting state:
// top-level values other than traceEvents (deviceProperties of many GPUs...)
// are passed over without being buffered.
class ValueSkipper {
 public:
  void reset() { *this = ValueSkipper{}; }
  // Index in s just past the value's end, or kIncomplete when the value goes
  // on past s (all of s then belongs to it).
  std::size_t feed(std::string_view s, std::size_t i);
  bool consumed_nothing() const { return !started_; }

 private:
  long long depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  bool scalar_ = false;
  bool started_ = false;
};

}  // namespace attune::diagnose::profile
