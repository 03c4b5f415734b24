#include "json_scan.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace attune::diagnose::profile {
namespace {

// Bytes that matter while skipping an object or array.
constexpr std::array<bool, 256> make_structural() {
  std::array<bool, 256> t{};
  t['"'] = t['{'] = t['}'] = t['['] = t[']'] = true;
  return t;
}
constexpr std::array<bool, 256> kStructural = make_structural();

bool ends_scalar(char c) { return is_json_space(c) || c == ',' || c == '}' || c == ']'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at body[i..i+4), or -1.
long hex4(std::string_view body, std::size_t i) {
  if (i + 4 > body.size()) return -1;
  long v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int h = hex_value(body[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// body[i] == '\\' and body[i+1] == 'u': appends the code point, returns the
// index after the escape (and after a low surrogate joined to it).
std::size_t decode_unicode_escape(std::string_view body, std::size_t i, std::string& out) {
  constexpr std::uint32_t kReplacement = 0xFFFD;
  const long hi = hex4(body, i + 2);
  if (hi < 0) {  // not an escape after all: keep the text
    out += "\\u";
    return i + 2;
  }
  std::size_t next = i + 6;
  if (hi >= 0xD800 && hi <= 0xDBFF) {
    const bool has_low = next + 1 < body.size() && body[next] == '\\' && body[next + 1] == 'u';
    const long lo = has_low ? hex4(body, next + 2) : -1;
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      append_utf8(0x10000 + ((static_cast<std::uint32_t>(hi) - 0xD800) << 10) +
                      (static_cast<std::uint32_t>(lo) - 0xDC00),
                  out);
      return next + 6;
    }
    append_utf8(kReplacement, out);
    return next;
  }
  append_utf8(hi >= 0xDC00 && hi <= 0xDFFF ? kReplacement : static_cast<std::uint32_t>(hi), out);
  return next;
}

char simple_escape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

// From s[j] inside a string that has escapes: one past the closing quote.
std::size_t escaped_string_end(std::string_view s, std::size_t j) {
  for (; j < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == '"') {
      return j + 1;
    }
  }
  return kIncomplete;
}

}  // namespace

std::size_t json_string_end(std::string_view s, std::size_t i) {
  constexpr std::size_t kShort = 32;  // keys and most values: a plain loop beats memchr's call
  std::size_t j = i + 1;
  const std::size_t short_end = std::min(s.size(), j + kShort);
  for (; j < short_end; ++j) {
    if (s[j] == '"') return j + 1;
    if (s[j] == '\\') return escaped_string_end(s, j);
  }
  if (j >= s.size()) return kIncomplete;
  const void* q = std::memchr(s.data() + j, '"', s.size() - j);
  if (q == nullptr) return kIncomplete;
  const std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
  // No backslash before the first quote: it closes the string.
  if (std::memchr(s.data() + j, '\\', quote - j) == nullptr) return quote + 1;
  return escaped_string_end(s, j);
}

std::size_t json_scalar_end(std::string_view s, std::size_t i) {
  for (; i < s.size(); ++i) {
    if (ends_scalar(s[i])) return i;
  }
  return kIncomplete;
}

std::size_t json_value_end(std::string_view s, std::size_t i) {
  if (i >= s.size()) return kIncomplete;
  if (s[i] == '"') return json_string_end(s, i);
  if (s[i] != '{' && s[i] != '[') return json_scalar_end(s, i);
  long long depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (!kStructural[static_cast<unsigned char>(c)]) {
      ++i;
    } else if (c == '"') {
      i = json_string_end(s, i);
      if (i == kIncomplete) return kIncomplete;
    } else if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else {
      ++i;
      if (--depth == 0) return i;
    }
  }
  return kIncomplete;
}

void decode_json_string(std::string_view body, std::string& out) {
  out.clear();
  std::size_t i = 0;
  while (i < body.size()) {
    const void* bs = std::memchr(body.data() + i, '\\', body.size() - i);
    const std::size_t at = bs == nullptr ? body.size()
                                         : static_cast<std::size_t>(static_cast<const char*>(bs) - body.data());
    out.append(body.substr(i, at - i));
    if (at + 1 >= body.size()) {  // no escape, or a trailing lone backslash
      out.append(body.substr(at));
      return;
    }
    const char kind = body[at + 1];
    if (kind == 'u') {
      i = decode_unicode_escape(body, at, out);
    } else if (const char c = simple_escape(kind); c != 0) {
      out += c;
      i = at + 2;
    } else {
      out.append(body.substr(at, 2));
      i = at + 2;
    }
  }
}

std::size_t ValueSkipper::feed(std::string_view s, std::size_t i) {
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 0) return i + 1;
      }
      continue;
    }
    if (scalar_) {
      if (ends_scalar(c)) return i;
      continue;
    }
    if (depth_ == 0 && (c == ',' || c == '}' || c == ']')) return i;  // value ended (or was empty)
    started_ = started_ || !is_json_space(c);
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) return i + 1;
    } else if (depth_ == 0 && !is_json_space(c)) {
      scalar_ = true;
    }
  }
  return kIncomplete;
}

}  // namespace attune::diagnose::profile
