// KeyPath: the parts of a dotted key path such as `a.b[2].c`. A segment may be
// quoted ("a.\"x.y\".c") when a key itself contains a dot.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attune::recipe {

struct PathPart {
  std::string key;  // empty for a pure index part
  int index = -1;   // list index, or -1 for a map key
  bool operator==(const PathPart&) const = default;
};

// Parses `a.b[2].c` into {a}{b}{[2]}{c}. Throws std::invalid_argument when malformed.
std::vector<PathPart> parse_key_path(std::string_view path);
// Inverse of parse_key_path; quotes keys that contain '.', '[' or '"'.
std::string join_key_path(const std::vector<PathPart>& parts);
// Appends one key (quoted when needed) to a path prefix.
std::string append_key(const std::string& prefix, std::string_view key);
std::string append_index(const std::string& prefix, int index);
// A key as written in a launcher override, without Hydra's `+`/`++` and
// HyperPod's `recipes.` prefix: `++recipes.model.x` -> `model.x`.
std::string strip_override_prefix(std::string_view key);

}  // namespace attune::recipe
