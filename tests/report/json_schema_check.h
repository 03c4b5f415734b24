// A small JSON Schema validator for the keywords docs/export-schema.json uses:
// type (a name or a list), required, properties, additionalProperties (false),
// items, enum, pattern, $ref within the document, and the annotations ($schema,
// $id, $defs, title, description). A keyword it does not know is an error, so
// the schema cannot use one that this check would silently skip.
#pragma once

#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::test {

class SchemaCheck {
 public:
  explicit SchemaCheck(nlohmann::json root) : root_(std::move(root)) {}

  // Every way `value` breaks the schema, each with its JSON pointer.
  std::vector<std::string> errors(const nlohmann::json& value) {
    errors_.clear();
    check(root_, value, "");
    return errors_;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }

  void fail(const std::string& at, const std::string& what) { errors_.push_back((at.empty() ? "/" : at) + ": " + what); }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at) {
    static const std::set<std::string> known = {"$schema", "$id", "$defs", "title", "description", "type", "required",
                                                "properties", "additionalProperties", "items", "enum", "pattern", "$ref"};
    for (const auto& [k, _] : s.items()) {
      if (!known.count(k)) fail(at, "the schema uses keyword '" + k + "' this check does not know");
    }
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"].get<std::string>();
      check(root_.at(nlohmann::json::json_pointer(ref.substr(1))), v, at);
    }
    if (s.contains("type")) {
      const nlohmann::json types = s["type"].is_array() ? s["type"] : nlohmann::json::array({s["type"]});
      bool any = false;
      for (const auto& t : types) any = any || has_type(v, t.get<std::string>());
      if (!any) return fail(at, "expected type " + types.dump() + ", got " + v.type_name());
    }
    if (s.contains("enum")) {
      bool any = false;
      for (const auto& e : s["enum"]) any = any || e == v;
      if (!any) fail(at, v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("pattern") && v.is_string() && !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>())))
      fail(at, v.dump() + " does not match " + s["pattern"].get<std::string>());
    if (v.is_object()) check_object(s, v, at);
    if (v.is_array() && s.contains("items")) {
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], at + "/" + std::to_string(i));
    }
  }

  void check_object(const nlohmann::json& s, const nlohmann::json& v, const std::string& at) {
    if (s.contains("required")) {
      for (const auto& r : s["required"]) {
        if (!v.contains(r.get<std::string>())) fail(at, "required '" + r.get<std::string>() + "' is missing");
      }
    }
    const nlohmann::json props = s.value("properties", nlohmann::json::object());
    for (const auto& [k, item] : v.items()) {
      if (props.contains(k)) check(props[k], item, at + "/" + k);
      else if (s.contains("additionalProperties") && s["additionalProperties"] == false) fail(at, "'" + k + "' is not allowed");
    }
  }

  nlohmann::json root_;
  std::vector<std::string> errors_;
};

}  // namespace attune::test
