#include "attune/gate/gate_rule.h"

#include <algorithm>
#include <set>

#include <yaml-cpp/yaml.h>

#include "attune/recipe/lever_catalog.h"
#include "attune/util/embedded.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::gate {

std::string to_string(GateAction a) {
  switch (a) {
    case GateAction::Refuse: return "refuse";
    case GateAction::Numerics: return "numerics";
    case GateAction::BenchmarkOnly: return "benchmark_only";
    case GateAction::Invariant: return "invariant";
  }
  return "?";
}

bool GateRule::matches(std::string_view key) const {
  for (const auto& k : keys) {
    if (recipe::glob_match(k, key)) return true;
    if (key.size() > k.size() && key.substr(0, k.size()) == k && (key[k.size()] == '.' || key[k.size()] == '[')) {
      return true;
    }
  }
  return false;
}

namespace {

SourceLocation where(const std::string& file, const YAML::Node& n) {
  return {file, n.Mark().line + 1, n.Mark().column + 1};
}

std::string required(const std::string& file, const YAML::Node& rule, const char* field) {
  const YAML::Node& n = rule[field];
  if (!n || !n.IsScalar() || n.as<std::string>().empty()) {
    throw InputError(where(file, rule), field, "missing: every gate rule needs id, category, action, keys, reason");
  }
  return n.as<std::string>();
}

GateAction parse_action(const std::string& file, const YAML::Node& n) {
  std::string a = n.as<std::string>();
  if (a == "refuse") return GateAction::Refuse;
  if (a == "numerics") return GateAction::Numerics;
  if (a == "benchmark_only") return GateAction::BenchmarkOnly;
  if (a == "invariant") return GateAction::Invariant;
  throw InputError(where(file, n), "action", "expected refuse, numerics, benchmark_only or invariant, got '" + a + "'");
}

// Megatron flags compare with dashes whatever spelling a file uses.
std::string normalize_flag(std::string key) {
  if (key.rfind("--", 0) == 0) std::replace(key.begin() + 2, key.end(), '_', '-');
  return key;
}

GateRule parse_rule(const std::string& file, const std::string& framework, const YAML::Node& n, bool builtin) {
  static const std::set<std::string> known = {"id", "category", "action", "allow", "keys", "reason", "source"};
  for (const auto& kv : n) {
    std::string k = kv.first.as<std::string>();
    if (!known.count(k)) throw InputError(where(file, kv.first), k, "unknown field of a gate rule");
  }
  GateRule r;
  r.id = required(file, n, "id");
  r.category = required(file, n, "category");
  r.action = parse_action(file, n["action"] ? n["action"] : n);
  r.reason = required(file, n, "reason");
  r.source = n["source"] ? n["source"].as<std::string>() : "";
  r.framework = framework;
  r.file = file;
  r.builtin = builtin;
  if (r.action == GateAction::Numerics) r.allow = required(file, n, "allow");
  const YAML::Node& keys = n["keys"];
  if (!keys || !keys.IsSequence() || keys.size() == 0) {
    throw InputError(where(file, n), "keys", "expected a non-empty list of keys");
  }
  for (const auto& k : keys) r.keys.push_back(normalize_flag(k.as<std::string>()));
  return r;
}

void parse_invariants(const std::string& framework, const YAML::Node& inv, GateRuleSet& out) {
  for (const auto& kv : inv) {
    auto& list = out.invariants[framework][kv.first.as<std::string>()];
    for (const auto& k : kv.second) list.push_back(normalize_flag(k.as<std::string>()));
  }
}

}  // namespace

GateRuleSet parse_gate_rules(const std::string& name, const std::string& text, bool builtin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError({name, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  if (!root.IsMap() || !root["framework"] || !root["rules"] || !root["rules"].IsSequence()) {
    throw InputError({name, 1, 1}, "", "expected a gate rule file: {framework: NAME, rules: [...]}");
  }
  GateRuleSet out;
  std::string framework = root["framework"].as<std::string>();
  std::set<std::string> ids;
  for (const auto& n : root["rules"]) {
    GateRule r = parse_rule(name, framework, n, builtin);
    if (!ids.insert(r.id).second) throw InputError(where(name, n), r.id, "duplicate rule id");
    out.rules.push_back(std::move(r));
  }
  if (root["invariants"]) parse_invariants(framework, root["invariants"], out);
  return out;
}

const GateRuleSet& GateRuleSet::builtin() {
  static const GateRuleSet set = [] {
    GateRuleSet all;
    for (const auto& f : embedded_files()) {
      if (f.path.rfind("gate/", 0) != 0) continue;
      GateRuleSet one = parse_gate_rules(f.path, f.content, true);
      all.rules.insert(all.rules.end(), one.rules.begin(), one.rules.end());
      for (auto& [fw, inv] : one.invariants) all.invariants[fw].insert(inv.begin(), inv.end());
    }
    return all;
  }();
  return set;
}

GateRuleSet GateRuleSet::with_site_rules(const std::vector<std::string>& files) {
  GateRuleSet all = builtin();
  std::set<std::string> ids;
  for (const auto& r : all.rules) ids.insert(r.id);
  for (const auto& file : files) {
    GateRuleSet site = parse_gate_rules(file, read_file(file), false);
    for (auto& r : site.rules) {
      if (!ids.insert(r.id).second) {
        throw InputError({file, 0, 0}, r.id, "a site rule cannot redefine a built-in or earlier rule");
      }
      if (r.action == GateAction::Invariant) {
        throw InputError({file, 0, 0}, r.id,
                         "site rules may only make the gate stricter (refuse, numerics, benchmark_only)");
      }
      all.rules.push_back(std::move(r));
    }
  }
  return all;
}

std::vector<const GateRule*> GateRuleSet::matching(std::string_view framework, std::string_view key) const {
  std::vector<const GateRule*> out;
  for (const auto& r : rules) {
    if ((r.framework == "common" || r.framework == framework) && r.matches(key)) out.push_back(&r);
  }
  return out;
}

const std::vector<std::string>& GateRuleSet::invariant_keys(std::string_view framework, std::string_view name) const {
  static const std::vector<std::string> none;
  auto fw = invariants.find(std::string(framework));
  if (fw == invariants.end()) return none;
  auto it = fw->second.find(std::string(name));
  return it == fw->second.end() ? none : it->second;
}

std::vector<std::string> GateRuleSet::allow_names() const {
  std::set<std::string> names;
  for (const auto& r : rules) {
    if (!r.allow.empty()) names.insert(r.allow);
  }
  return {names.begin(), names.end()};
}

}  // namespace attune::gate
