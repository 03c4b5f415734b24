#include "attune/recipe/value.h"
#include "attune/util/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace attune::recipe {

namespace {

bool parse_int_text(std::string_view s, long long* out) {
  std::string t;
  for (char c : s) {
    if (c != '_') t.push_back(c);  // TOML/YAML 1.1 digit separators
  }
  if (t.empty()) return false;
  size_t start = (t[0] == '+' || t[0] == '-') ? 1 : 0;
  if (start == t.size()) return false;
  for (size_t i = start; i < t.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
  }
  const char* b = t.data() + (t[0] == '+' ? 1 : 0);
  auto r = std::from_chars(b, t.data() + t.size(), *out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool parse_float_text(std::string_view s, double* out) {
  std::string t;
  for (char c : s) {
    if (c != '_') t.push_back(c);
  }
  if (t.empty()) return false;
  std::string l = to_lower(t);
  if (l == ".inf" || l == "inf" || l == "+inf" || l == "+.inf") { *out = INFINITY; return true; }
  if (l == "-.inf" || l == "-inf") { *out = -INFINITY; return true; }
  if (l == ".nan" || l == "nan") { *out = NAN; return true; }
  // Must look like a number: digits with optional sign, point and exponent.
  bool digit = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E') continue;
    else return false;
  }
  if (!digit) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

}  // namespace

Value Value::null() { return Value{ValueKind::Null, "null", {}}; }
Value Value::boolean(bool b) { return Value{ValueKind::Bool, b ? "true" : "false", {}}; }
Value Value::integer(long long v) { return Value{ValueKind::Int, std::to_string(v), {}}; }
Value Value::number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return Value{ValueKind::Float, s, {}};
}
Value Value::string(std::string s) { return Value{ValueKind::String, std::move(s), {}}; }
Value Value::list(std::vector<Value> items) {
  Value v{ValueKind::List, "", std::move(items)};
  v.text = v.str();
  return v;
}

Value Value::parse(std::string_view text) {
  std::string l = to_lower(text);
  if (l.empty() || l == "null" || l == "~") return Value{ValueKind::Null, std::string(text), {}};
  if (l == "true" || l == "false") return Value{ValueKind::Bool, std::string(text), {}};
  long long i;
  if (parse_int_text(text, &i)) return Value{ValueKind::Int, std::string(text), {}};
  double d;
  if (parse_float_text(text, &d)) return Value{ValueKind::Float, std::string(text), {}};
  return Value{ValueKind::String, std::string(text), {}};
}

std::optional<bool> Value::as_bool() const {
  if (kind == ValueKind::List) return std::nullopt;
  std::string l = to_lower(text);
  if (l == "true" || l == "yes" || l == "on" || l == "1") return true;
  if (l == "false" || l == "no" || l == "off" || l == "0") return false;
  return std::nullopt;
}

std::optional<long long> Value::as_int() const {
  if (kind == ValueKind::List || kind == ValueKind::Null || kind == ValueKind::Bool) return std::nullopt;
  long long i;
  if (parse_int_text(text, &i)) return i;
  double d;
  if (parse_float_text(text, &d) && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
    return static_cast<long long>(d);
  }
  return std::nullopt;
}

std::optional<double> Value::as_double() const {
  if (kind == ValueKind::List || kind == ValueKind::Null || kind == ValueKind::Bool) return std::nullopt;
  double d;
  if (parse_float_text(text, &d)) return d;
  return std::nullopt;
}

std::string Value::str() const {
  if (kind != ValueKind::List) return text;
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i].str();
  }
  return out + "]";
}

bool Value::same_as(const Value& o) const {
  if (kind == ValueKind::List || o.kind == ValueKind::List) {
    if (kind != o.kind || items.size() != o.items.size()) return false;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].same_as(o.items[i])) return false;
    }
    return true;
  }
  if (is_null() || o.is_null()) return is_null() && o.is_null();
  if (kind == ValueKind::Bool || o.kind == ValueKind::Bool) {
    auto a = as_bool(), b = o.as_bool();
    return a && b && *a == *b;
  }
  auto a = as_double(), b = o.as_double();
  if (a && b) return *a == *b || (std::isnan(*a) && std::isnan(*b));
  return text == o.text;
}

std::string to_string(ValueKind kind) {
  switch (kind) {
    case ValueKind::Null: return "null";
    case ValueKind::Bool: return "bool";
    case ValueKind::Int: return "int";
    case ValueKind::Float: return "float";
    case ValueKind::String: return "string";
    case ValueKind::List: return "list";
  }
  return "?";
}

}  // namespace attune::recipe
