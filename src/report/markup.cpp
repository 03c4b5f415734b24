#include "attune/report/markup.h"

#include <algorithm>

#include <fmt/format.h>

namespace attune::report {

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') || c == 0x7f) out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

std::string escape_markdown(std::string_view text) {
  std::string out;
  for (const char c : escape_html(text)) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (c == '|' || c == '\\' || c == '*' || c == '_' || c == '`' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_fence(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string tokens_text(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : "-"; }

}  // namespace attune::report
