// Reading small YAML input files the way every attune file reader reports
// errors: a parse error or a bad value becomes an InputError naming the file,
// line, column and key. Shared by the wrapper, perturbation, scenario and
// cluster-definition readers.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "attune/util/error.h"

namespace attune {

// Where a node stands in its file (1-based line and column).
inline SourceLocation yaml_where(const std::string& file, const YAML::Node& n) {
  return {file, n.Mark().line + 1, n.Mark().column + 1};
}

// Parses `text`; a syntax error is an InputError at its line and column.
inline YAML::Node load_yaml(const std::string& file, const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
}

// A scalar's text; anything else is an InputError naming `key`.
inline std::string yaml_scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) throw InputError(yaml_where(file, n), key, "expected a single value");
  return n.Scalar();
}

// A mapping key's text; a key that is not a scalar ({[a]: b}) is an
// InputError naming the mapping it is in.
inline std::string yaml_key(const std::string& file, const YAML::Node& key, const std::string& mapping) {
  if (!key.IsScalar()) throw InputError(yaml_where(file, key), mapping, "expected a plain name as the key");
  return key.Scalar();
}

}  // namespace attune
