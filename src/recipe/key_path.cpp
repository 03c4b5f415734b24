#include "attune/recipe/key_path.h"

#include <stdexcept>

namespace attune::recipe {

namespace {
bool needs_quotes(std::string_view key) {
  return key.find_first_of(".[]\"") != std::string_view::npos || key.empty();
}
}  // namespace

std::vector<PathPart> parse_key_path(std::string_view path) {
  std::vector<PathPart> parts;
  size_t i = 0;
  auto fail = [&](const char* why) {
    throw std::invalid_argument("malformed key path '" + std::string(path) + "': " + why);
  };
  if (path.empty()) fail("empty");
  while (i < path.size()) {
    if (path[i] == '[') {
      size_t close = path.find(']', i);
      if (close == std::string_view::npos || close == i + 1) fail("unclosed or empty '['");
      int idx = 0;
      for (size_t j = i + 1; j < close; ++j) {
        if (path[j] < '0' || path[j] > '9') fail("list index must be a number");
        idx = idx * 10 + (path[j] - '0');
      }
      parts.push_back({"", idx});
      i = close + 1;
    } else if (path[i] == '"') {
      size_t close = path.find('"', i + 1);
      if (close == std::string_view::npos) fail("unclosed quote");
      parts.push_back({std::string(path.substr(i + 1, close - i - 1)), -1});
      i = close + 1;
    } else {
      size_t end = path.find_first_of(".[", i);
      if (end == std::string_view::npos) end = path.size();
      if (end == i) fail("empty key");
      parts.push_back({std::string(path.substr(i, end - i)), -1});
      i = end;
    }
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) fail("trailing '.'");
    } else if (i < path.size() && path[i] != '[') {
      fail("expected '.' or '['");
    }
  }
  return parts;
}

// Built by appending: GCC 12 at -O3 misreports `"\"" + s + "\""` as an
// overlapping memcpy (-Wrestrict, GCC bug 105651).
std::string append_key(const std::string& prefix, std::string_view key) {
  std::string out = prefix;
  if (!out.empty()) out.push_back('.');
  bool quote = needs_quotes(key);
  if (quote) out.push_back('"');
  out.append(key);
  if (quote) out.push_back('"');
  return out;
}

std::string strip_override_prefix(std::string_view key) {
  while (!key.empty() && key.front() == '+') key.remove_prefix(1);
  if (key.rfind("recipes.", 0) == 0) key.remove_prefix(8);
  return std::string(key);
}

std::string append_index(const std::string& prefix, int index) {
  return prefix + "[" + std::to_string(index) + "]";
}

std::string join_key_path(const std::vector<PathPart>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out = p.index >= 0 ? append_index(out, p.index) : append_key(out, p.key);
  }
  return out;
}

}  // namespace attune::recipe
