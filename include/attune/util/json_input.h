// Reading small JSON records field by field, the way attune's own JSON files
// (the run journal, a simulated run's status file) are read back: an absent
// key keeps the caller's default, a value of the wrong kind is an InputError
// whose key names the field, and non-finite numbers travel as the strings
// "inf", "-inf" and "nan" (JSON has no spelling for them).
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attune/util/error.h"

namespace attune::json_field {

// An optional number as JSON: the number, or null.
inline nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// A number field read back: nullopt when it is absent or not a number (null).
inline std::optional<double> optional_number(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

inline nlohmann::json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

[[noreturn]] inline void wrong_type(const std::string& key, const char* expected, const nlohmann::json& v) {
  throw InputError({}, key, fmt::format("expected {}, got {}", expected, v.type_name()));
}

inline const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

inline void read_string(const nlohmann::json& j, const char* key, std::string& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (!v->is_string()) wrong_type(key, "a string", *v);
  out = v->get<std::string>();
}

inline void read_int(const nlohmann::json& j, const char* key, int& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (!v->is_number_integer()) wrong_type(key, "an integer", *v);
  const auto n = v->get<long long>();
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
    throw InputError({}, key, fmt::format("{} is out of range", n));
  out = static_cast<int>(n);
}

inline void read_double(const nlohmann::json& j, const char* key, double& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (v->is_number()) {
    out = v->get<double>();
    return;
  }
  if (v->is_string()) {
    const auto& s = v->get_ref<const std::string&>();
    if (s == "nan") {
      out = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (s == "inf" || s == "-inf") {
      out = s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
      return;
    }
  }
  wrong_type(key, "a number", *v);
}

inline void read_bool(const nlohmann::json& j, const char* key, bool& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (!v->is_boolean()) wrong_type(key, "true or false", *v);
  out = v->get<bool>();
}

inline void read_strings(const nlohmann::json& j, const char* key, std::vector<std::string>& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (!v->is_array()) wrong_type(key, "a list of strings", *v);
  std::vector<std::string> items;
  for (const nlohmann::json& item : *v) {
    if (!item.is_string()) wrong_type(key, "a list of strings", item);
    items.push_back(item.get<std::string>());
  }
  out = std::move(items);
}

inline void read_env(const nlohmann::json& j, const char* key, std::map<std::string, std::string>& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return;
  if (!v->is_object()) wrong_type(key, "an object of strings", *v);
  std::map<std::string, std::string> env;
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) wrong_type(std::string(key) + "." + k, "a string", value);
    env[k] = value.get<std::string>();
  }
  out = std::move(env);
}

}  // namespace attune::json_field
