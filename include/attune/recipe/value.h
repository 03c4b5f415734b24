// Value: one setting's value as a recipe file states it. It keeps the text the
// file uses (without quotes) and what kind of scalar it is, so a value can be
// compared semantically (1e-4 == 0.0001) yet written back in the file's own style.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attune::recipe {

enum class ValueKind { Null, Bool, Int, Float, String, List };

struct Value {
  ValueKind kind = ValueKind::Null;
  std::string text;          // scalar text as written, unquoted ("1e-4", "true", "bf16")
  std::vector<Value> items;  // for List

  static Value null();
  static Value boolean(bool b);
  static Value integer(long long v);
  static Value number(double v);
  static Value string(std::string s);
  static Value list(std::vector<Value> items);
  // Infers the kind from plain (unquoted) scalar text: null/~/empty, true/false,
  // integers, floats (1e-4, .5, inf), otherwise a string.
  static Value parse(std::string_view text);

  bool is_null() const { return kind == ValueKind::Null; }
  std::optional<bool> as_bool() const;        // true/false/yes/no/on/off/1/0
  std::optional<long long> as_int() const;    // exact integers only (also "8.0")
  std::optional<double> as_double() const;
  std::string str() const;                    // display form; lists as [a, b]

  // Semantic equality: numbers by value, booleans by truth, strings exactly.
  bool same_as(const Value& other) const;
};

std::string to_string(ValueKind kind);

}  // namespace attune::recipe
