#include "attune/recipe/recipe_diff.h"

#include <cstdio>
#include <map>

#include "attune/util/error.h"

namespace attune::recipe {

namespace {

// Settings that count: a launch script's shell variables (var.*) only feed
// flags and exports, which are compared themselves.
std::vector<Entry> settings(const Document& doc) {
  std::vector<Entry> out;
  for (auto& e : doc.entries()) {
    if (doc.format() != Format::Script || e.path.rfind("var.", 0) != 0) out.push_back(e);
  }
  return out;
}

std::map<std::string, Entry> by_path(const Document& doc) {
  std::map<std::string, Entry> out;
  for (auto& e : settings(doc)) out.emplace(e.path, e);
  return out;
}

std::string lever_of(const Recipe& r, const std::string& path) {
  const LeverDef* def = r.adapter().catalog().by_key(r.adapter().catalog_key(r, path), r.dialect());
  return def ? def->name : "";
}

void diff_keys(const Recipe& a, const Recipe& b, RecipeDiff& out) {
  auto left = by_path(a.document());
  auto right = by_path(b.document());
  // File order of the first recipe, then keys only the second one has.
  for (const auto& e : settings(a.document())) {
    auto it = right.find(e.path);
    if (it == right.end()) {
      out.keys.push_back({e.path, e.value, std::nullopt, lever_of(a, e.path)});
    } else if (!e.value.same_as(it->second.value)) {
      out.keys.push_back({e.path, e.value, it->second.value, lever_of(a, e.path)});
    }
  }
  for (const auto& e : settings(b.document())) {
    if (!left.count(e.path)) out.keys.push_back({e.path, std::nullopt, e.value, lever_of(b, e.path)});
  }
}

// The variables of a framework whose file has no environment section, which
// the launch exports: spelled as the wrapper writes them.
void diff_launch_env(const Recipe& a, const Recipe& b, RecipeDiff& out) {
  const auto& left = a.launch().env;
  const auto& right = b.launch().env;
  auto lever = [&](const Recipe& r, const std::string& name) { return lever_of(r, "env." + name); };
  for (const auto& [name, value] : left) {
    const auto it = right.find(name);
    if (it == right.end()) out.keys.push_back({"launch.env." + name, Value::parse(value), std::nullopt, lever(a, name)});
    else if (!Value::parse(value).same_as(Value::parse(it->second)))
      out.keys.push_back({"launch.env." + name, Value::parse(value), Value::parse(it->second), lever(a, name)});
  }
  for (const auto& [name, value] : right) {
    if (!left.count(name)) out.keys.push_back({"launch.env." + name, std::nullopt, Value::parse(value), lever(b, name)});
  }
}

// A value's meaning as text: numbers by value, booleans by truth.
std::string canonical(const Value& v) {
  switch (v.kind) {
    case ValueKind::Null: return "null";
    case ValueKind::Bool: return v.as_bool().value_or(false) ? "true" : "false";
    case ValueKind::Int:
    case ValueKind::Float: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_double().value_or(0));
      return buf;
    }
    case ValueKind::List: {
      std::string out = "[";
      for (const Value& item : v.items) out += canonical(item) + ",";
      return out + "]";
    }
    case ValueKind::String: break;
  }
  return "\"" + v.text + "\"";
}

void diff_plans(const Plan& p, const Plan& q, RecipeDiff& out) {
  auto cmp = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) out.derived.push_back({name, x, y});
  };
  auto n = [](long long v) { return std::to_string(v); };
  cmp("world", n(p.world), n(q.world));
  cmp("tp", n(p.tp), n(q.tp));
  cmp("pp", n(p.pp), n(q.pp));
  cmp("vp", n(p.vp), n(q.vp));
  cmp("cp", n(p.cp), n(q.cp));
  cmp("ep", n(p.ep), n(q.ep));
  cmp("dp", n(p.dp), n(q.dp));
  cmp("mbs", n(p.mbs), n(q.mbs));
  cmp("gbs", n(p.gbs), n(q.gbs));
  cmp("grad_accum", n(p.grad_accum), n(q.grad_accum));
  cmp("seq_len", n(p.seq_len), n(q.seq_len));
  cmp("tokens_per_step", n(p.tokens_per_step), n(q.tokens_per_step));
  cmp("recompute", p.recompute, q.recompute);
  cmp("precision", p.precision, q.precision);
}

}  // namespace

RecipeDiff diff_recipes(const Recipe& a, const Recipe& b) {
  if (a.framework() != b.framework()) {
    throw InputError({b.config_path(), 0, 0}, "",
                     "cannot compare a " + framework_title(a.framework()) + " recipe with a " +
                         framework_title(b.framework()) + " recipe");
  }
  RecipeDiff out;
  diff_keys(a, b, out);
  diff_launch_env(a, b, out);
  diff_plans(a.plan(), b.plan(), out);
  return out;
}

std::string settings_identity(const Recipe& r) {
  std::map<std::string, std::string> settings_by_path;
  for (const Entry& e : settings(r.document())) settings_by_path[e.path] = canonical(e.value);
  for (const auto& [name, value] : r.launch().env) settings_by_path["launch.env." + name] = canonical(Value::parse(value));
  std::string out;
  for (const auto& [path, value] : settings_by_path) out += path + "=" + value + "\n";
  return out;
}

nlohmann::json to_json(const RecipeDiff& d) {
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& k : d.keys) {
    nlohmann::json j = {{"key", k.key}, {"old", value_to_json(k.old_value)}, {"new", value_to_json(k.new_value)}};
    if (!k.lever.empty()) j["lever"] = k.lever;
    keys.push_back(j);
  }
  nlohmann::json derived = nlohmann::json::array();
  for (const auto& x : d.derived) derived.push_back({{"name", x.name}, {"old", x.old_value}, {"new", x.new_value}});
  return {{"changes", keys}, {"derived", derived}};
}

RecipeDiff diff_recipe_files(const std::string& a, const std::string& b, const RecipeOptions& options) {
  return diff_recipes(Recipe::load(a, options), Recipe::load(b, options));
}

}  // namespace attune::recipe
