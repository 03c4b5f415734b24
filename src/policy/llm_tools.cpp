#include "attune/policy/llm_tools.h"

#include <cmath>

#include <fmt/format.h>

namespace attune::policy {

namespace {

using nlohmann::json;

json string_arg(const std::string& description) { return {{"type", "string"}, {"description", description}}; }

json object_schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

json lever_value_properties(bool hybrid) {
  const std::string lever = std::string("A lever of the recipe's lever catalog (\"mbs\", \"recompute\"), a raw key of the "
                                        "recipe file (\"--overlap-grad-reduce\", \"env.NCCL_NVLS_ENABLE\")") +
                            (hybrid ? ", or \"candidate\" to take one of the rules' ranked candidates by its number" : "");
  return {{"lever_or_key", string_arg(lever)},
          {"value", {{"type", json::array({"string", "number", "boolean"})},
                     {"description", hybrid ? "The new value (for \"candidate\": its number in the ranking)" : "The new value"}}}};
}

bool type_fits(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer() || (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  return false;
}

std::optional<std::string> check_value(const std::string& name, const json& value, const json& schema) {
  const json& type = schema.at("type");
  bool fits = false;
  if (type.is_array()) {
    for (const auto& t : type) fits = fits || type_fits(value, t.get<std::string>());
  } else {
    fits = type_fits(value, type.get<std::string>());
  }
  if (!fits) return fmt::format("argument '{}' must be of type {}, got {}", name, type.dump(), value.dump());
  if (schema.contains("minimum") && value.is_number() && value.get<double>() < schema["minimum"].get<double>())
    return fmt::format("argument '{}' must be at least {}, got {}", name, schema["minimum"].dump(), value.dump());
  if (schema.contains("maximum") && value.is_number() && value.get<double>() > schema["maximum"].get<double>())
    return fmt::format("argument '{}' must be at most {}, got {}", name, schema["maximum"].dump(), value.dump());
  if (value.is_string() && value.get<std::string>().empty()) return fmt::format("argument '{}' is empty", name);
  return std::nullopt;
}

}  // namespace

std::vector<llm::ToolSpec> llm_policy_tools(bool hybrid) {
  json propose_props = lever_value_properties(hybrid);
  propose_props["rationale"] = string_arg("Why this lever, from the diagnosis and the history");
  propose_props["expected_effect"] = string_arg("What you expect it to do to throughput and memory");
  return {
      {"propose",
       "Propose the next trial: one lever (or raw key) of the incumbent set to a new value. The correctness gate judges "
       "the edited file; a refusal, an unknown lever or a repeat comes back as this call's result.",
       object_schema(std::move(propose_props), {"lever_or_key", "value", "rationale", "expected_effect"})},
      {"predict",
       "Free: the corrected performance model's prediction for that edit of the incumbent (throughput, memory, whether "
       "it fits, and whether the gate allows it). Costs no GPU time.",
       object_schema(lever_value_properties(hybrid), {"lever_or_key", "value"})},
      {"read_log",
       "Lines of a trial's run logs that contain `pattern` (a plain substring), at most max_lines of them.",
       object_schema({{"trial", {{"type", "integer"}, {"minimum", 0}, {"description", "Trial number (0 = baseline)"}}},
                      {"pattern", string_arg("Text to look for")},
                      {"max_lines", {{"type", "integer"}, {"minimum", 1}, {"maximum", 200}}}},
                     {"trial", "pattern"})},
      {"read_profile", "Where a trial's GPU time went (the profile split of its latest diagnosis), when it was profiled.",
       object_schema({{"trial", {{"type", "integer"}, {"minimum", 0}}}}, {"trial"})},
      {"stop", "End the campaign: nothing left is worth its GPU time.",
       object_schema({{"reason", string_arg("Why nothing left is worth trying")}}, {"reason"})},
  };
}

std::optional<std::string> check_tool_call(const llm::ToolCall& call, const std::vector<llm::ToolSpec>& tools) {
  const llm::ToolSpec* tool = nullptr;
  for (const auto& t : tools) tool = t.name == call.name ? &t : tool;
  if (!tool) {
    std::string names;
    for (const auto& t : tools) names += (names.empty() ? "" : ", ") + t.name;
    return fmt::format("there is no tool '{}' (tools: {})", call.name, names);
  }
  if (!call.parse_error.empty()) return "the arguments are not a JSON object: " + call.parse_error;
  if (!call.arguments.is_object()) return "the arguments are not a JSON object";
  const json& props = tool->input_schema.at("properties");
  for (const auto& [name, value] : call.arguments.items()) {
    if (!props.contains(name)) return fmt::format("unknown argument '{}' for {}", name, call.name);
    if (auto why = check_value(name, value, props.at(name))) return why;
  }
  for (const auto& r : tool->input_schema.at("required")) {
    if (!call.arguments.contains(r.get<std::string>())) return fmt::format("missing argument '{}' for {}", r.get<std::string>(), call.name);
  }
  return std::nullopt;
}

std::string value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::floor(v) == v && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    return fmt::format("{}", v);
  }
  return value.dump();
}

}  // namespace attune::policy
