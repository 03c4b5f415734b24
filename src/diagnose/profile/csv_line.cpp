#include "csv_line.h"

namespace attune::diagnose::profile {
namespace {

constexpr std::size_t kNone = std::string_view::npos;

// A quoted field from line[i] (just after the opening quote) into f; returns
// the index after the closing quote, or kNone when it never closes.
std::size_t read_quoted(std::string_view line, std::size_t i, std::string& f) {
  for (;;) {
    const std::size_t q = line.find('"', i);
    if (q == kNone) return kNone;
    f.append(line.substr(i, q - i));
    if (q + 1 < line.size() && line[q + 1] == '"') {
      f += '"';
      i = q + 2;
      continue;
    }
    return q + 1;
  }
}

}  // namespace

std::size_t split_csv_line(std::string_view line, std::vector<std::string>& fields) {
  std::size_t n = 0;
  std::size_t i = 0;
  for (;;) {
    if (n == fields.size()) fields.emplace_back();
    std::string& f = fields[n++];
    f.clear();
    const bool quoted = i < line.size() && line[i] == '"';
    if (quoted) {
      i = read_quoted(line, i + 1, f);
      if (i == kNone) return kNone;
    }
    // Text between a closing quote and the comma is not valid CSV: dropped.
    const std::size_t comma = line.find(',', i);
    const std::size_t end = comma == kNone ? line.size() : comma;
    if (!quoted) f.append(line.substr(i, end - i));
    if (comma == kNone) return n;
    i = comma + 1;
  }
}

}  // namespace attune::diagnose::profile
