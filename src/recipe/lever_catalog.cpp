// Lever catalogs: parsing of skills/levers/<framework>.yaml and look-ups.
//
// The file format is documented at the top of each catalog and in
// lever_catalog.h. Parsing is strict: unknown fields, missing fields, wrong
// types and inconsistent entries are InputErrors that name the file and the
// 1-based line, because a typo in a catalog silently widens or narrows what the
// gate lets through.
#include "attune/recipe/lever_catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/util/embedded.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

constexpr std::array<std::string_view, 6> kFrameworks = {"megatron",  "automodel", "torchtitan",
                                                         "hyperpod",  "axolotl",   "bridge"};
constexpr std::array<std::string_view, 4> kHyperPodDialects = {"smp", "nemo1", "checkpointless",
                                                               "llmft"};

bool known_framework(std::string_view fw) {
  return std::find(kFrameworks.begin(), kFrameworks.end(), fw) != kFrameworks.end();
}

SourceLocation where(const std::string& file, const YAML::Node& node) {
  SourceLocation loc;
  loc.file = file;
  const YAML::Mark mark = node.Mark();
  // A null mark has line == -1: the location stays unknown (0).
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& key,
                       const std::string& message) {
  throw InputError(where(file, node), key, message);
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(file, node, key, "expected a single value");
  return node.Scalar();
}

// A scalar that may also be null (`default: ~`), which reads as "".
std::string optional_scalar(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (node.IsNull()) return "";
  return scalar(file, node, key);
}

std::vector<std::string> string_list(const std::string& file, const YAML::Node& node,
                                     const std::string& key) {
  if (node.IsNull()) return {};
  if (!node.IsSequence()) fail(file, node, key, "expected a list");
  std::vector<std::string> out;
  for (const auto& item : node) {
    if (!item.IsScalar()) fail(file, item, key, "expected a list of plain values");
    out.push_back(item.Scalar());
  }
  return out;
}

double number(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(file, node, key, "expected a number");
  try {
    return node.as<double>();
  } catch (const YAML::Exception&) {
    fail(file, node, key, "expected a number, got '" + node.Scalar() + "'");
  }
}

LeverType parse_type(const std::string& file, const YAML::Node& node) {
  const std::string t = scalar(file, node, "type");
  if (t == "int") return LeverType::Int;
  if (t == "float") return LeverType::Float;
  if (t == "bool") return LeverType::Bool;
  if (t == "enum") return LeverType::Enum;
  if (t == "string") return LeverType::String;
  if (t == "list") return LeverType::List;
  fail(file, node, "type",
       "unknown type '" + t + "' (expected int, float, bool, enum, string or list)");
}

bool snake_case(std::string_view s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '_';
  });
}

void check_dialect(const std::string& file, const YAML::Node& node, const std::string& framework,
                   const std::string& dialect) {
  if (dialect.empty()) return;
  // A dialect is one config generation or recipe family of a framework.
  static const std::map<std::string, std::vector<std::string_view>> kDialects = {
      {"hyperpod", {kHyperPodDialects.begin(), kHyperPodDialects.end()}},
      {"torchtitan", {"toml", "python"}},
  };
  const auto known = kDialects.find(framework);
  if (known == kDialects.end()) fail(file, node, "dialect", "dialects exist only in the hyperpod and torchtitan catalogs");
  if (std::find(known->second.begin(), known->second.end(), dialect) == known->second.end()) {
    std::string names;
    for (const auto& d : known->second) names += (names.empty() ? "" : ", ") + std::string(d);
    fail(file, node, "dialect", "unknown dialect '" + dialect + "' (expected " + names + ")");
  }
}

// Two entries clash when their dialects overlap ("" overlaps every dialect).
bool dialects_overlap(const std::string& a, const std::string& b) {
  return a.empty() || b.empty() || a == b;
}

bool dialect_matches(const std::string& entry_dialect, std::string_view wanted) {
  return wanted.empty() || entry_dialect.empty() || entry_dialect == wanted;
}

// Megatron-style flags: `--a-b` and `--a_b` are the same flag.
bool same_key(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (a.size() != b.size() || a.size() < 3 || a.substr(0, 2) != "--" || b.substr(0, 2) != "--") {
    return false;
  }
  for (size_t i = 2; i < a.size(); ++i) {
    const char x = a[i] == '_' ? '-' : a[i];
    const char y = b[i] == '_' ? '-' : b[i];
    if (x != y) return false;
  }
  return true;
}

size_t literal_chars(std::string_view pattern) {
  return static_cast<size_t>(std::count_if(pattern.begin(), pattern.end(),
                                           [](char c) { return c != '*' && c != '?'; }));
}

LeverDef parse_lever(const std::string& file, const YAML::Node& node, const std::string& framework) {
  if (!node.IsMap()) fail(file, node, "levers", "each lever must be a mapping");
  LeverDef lever;
  bool has_type = false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string field = scalar(file, it->first, "levers");
    const YAML::Node value = it->second;  // a copy: it-> yields a temporary proxy
    if (field == "name") {
      lever.name = scalar(file, value, field);
    } else if (field == "key") {
      lever.key = scalar(file, value, field);
    } else if (field == "aliases") {
      lever.aliases = string_list(file, value, field);
    } else if (field == "pattern") {
      lever.pattern = scalar(file, value, field);
    } else if (field == "type") {
      lever.type = parse_type(file, value);
      has_type = true;
    } else if (field == "values") {
      lever.values = string_list(file, value, field);
    } else if (field == "min") {
      lever.min = number(file, value, field);
    } else if (field == "max") {
      lever.max = number(file, value, field);
    } else if (field == "default") {
      lever.default_value = optional_scalar(file, value, field);
    } else if (field == "trades") {
      lever.trades = scalar(file, value, field);
    } else if (field == "constraints") {
      lever.constraints = string_list(file, value, field);
    } else if (field == "safety") {
      const std::string s = scalar(file, value, field);
      if (s == "throughput") {
        lever.safety = LeverSafety::Throughput;
      } else if (s == "numerics") {
        lever.safety = LeverSafety::Numerics;
      } else {
        fail(file, value, field, "unknown safety '" + s + "' (expected throughput or numerics)");
      }
    } else if (field == "allow") {
      lever.allow_name = scalar(file, value, field);
    } else if (field == "dialect") {
      lever.dialect = scalar(file, value, field);
    } else {
      fail(file, it->first, field,
           "unknown lever field (expected name, key, aliases, pattern, type, values, min, max, "
           "default, trades, constraints, safety, allow, dialect)");
    }
  }
  const std::string label = lever.name.empty() ? std::string("levers") : lever.name;
  if (lever.name.empty()) fail(file, node, "name", "lever has no name");
  if (!snake_case(lever.name)) {
    fail(file, node, lever.name, "lever name must be snake_case ([a-z][a-z0-9_]*)");
  }
  if (lever.key.empty() == lever.pattern.empty()) {
    fail(file, node, label, "lever needs exactly one of 'key' or 'pattern'");
  }
  if (!lever.pattern.empty() && !lever.aliases.empty()) {
    fail(file, node, label, "a pattern lever cannot have aliases");
  }
  if (!has_type) fail(file, node, label, "lever has no type");
  if (lever.trades.empty()) fail(file, node, label, "lever has no 'trades' description");
  if (lever.type == LeverType::Enum) {
    if (lever.values.empty()) fail(file, node, label, "enum lever needs 'values'");
    if (!lever.default_value.empty() &&
        std::find(lever.values.begin(), lever.values.end(), lever.default_value) ==
            lever.values.end()) {
      fail(file, node, label, "default '" + lever.default_value + "' is not one of the values");
    }
  } else if (!lever.values.empty()) {
    fail(file, node, label, "'values' is only for enum levers");
  }
  if ((lever.min || lever.max) && lever.type != LeverType::Int && lever.type != LeverType::Float) {
    fail(file, node, label, "min/max are only for int and float levers");
  }
  if (lever.min && lever.max && *lever.min > *lever.max) {
    fail(file, node, label, "min is greater than max");
  }
  if (lever.safety == LeverSafety::Numerics && lever.allow_name.empty()) {
    fail(file, node, label, "a numerics lever needs an 'allow' name");
  }
  if (lever.safety == LeverSafety::Throughput && !lever.allow_name.empty()) {
    fail(file, node, label, "'allow' is only for 'safety: numerics' levers");
  }
  check_dialect(file, node, framework, lever.dialect);
  return lever;
}

PlanKey parse_plan_key(const std::string& file, const YAML::Node& node, const std::string& framework) {
  if (!node.IsMap()) fail(file, node, "plan_keys", "each plan key must be a mapping");
  PlanKey pk;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string field = scalar(file, it->first, "plan_keys");
    const YAML::Node value = it->second;  // a copy: it-> yields a temporary proxy
    if (field == "name") {
      pk.name = scalar(file, value, field);
    } else if (field == "key") {
      pk.key = scalar(file, value, field);
    } else if (field == "aliases") {
      pk.aliases = string_list(file, value, field);
    } else if (field == "dialect") {
      pk.dialect = scalar(file, value, field);
    } else if (field == "min") {
      pk.min = number(file, value, field);
    } else {
      fail(file, it->first, field, "unknown plan key field (expected name, key, aliases, dialect, min)");
    }
  }
  if (pk.name.empty()) fail(file, node, "name", "plan key has no name");
  if (!snake_case(pk.name)) fail(file, node, pk.name, "plan key name must be snake_case");
  if (pk.key.empty()) fail(file, node, pk.name, "plan key has no key");
  check_dialect(file, node, framework, pk.dialect);
  return pk;
}

RefusedKey parse_refused(const std::string& file, const YAML::Node& node) {
  if (!node.IsMap()) fail(file, node, "refused", "each refused entry must be a mapping");
  RefusedKey r;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string field = scalar(file, it->first, "refused");
    if (field == "key") {
      r.key = scalar(file, it->second, field);
    } else if (field == "reason") {
      r.reason = scalar(file, it->second, field);
    } else {
      fail(file, it->first, field, "unknown refused field (expected key, reason)");
    }
  }
  if (r.key.empty()) fail(file, node, "key", "refused entry has no key");
  if (r.reason.empty()) fail(file, node, r.key, "refused entry has no reason");
  return r;
}

const YAML::Node& require_sequence(const std::string& file, const YAML::Node& node,
                                   const std::string& key) {
  if (!node.IsSequence()) fail(file, node, key, "expected a list");
  return node;
}

// Every spelling (key and aliases) of a lever.
std::vector<std::string> spellings(const LeverDef& l) {
  std::vector<std::string> out;
  if (!l.key.empty()) out.push_back(l.key);
  out.insert(out.end(), l.aliases.begin(), l.aliases.end());
  if (!l.pattern.empty()) out.push_back(l.pattern);
  return out;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star = std::string_view::npos;  // position of the last '*' in pattern
  size_t mark = 0;                       // text position matched by that '*'
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

LeverCatalog parse_lever_catalog(const std::string& name, const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    SourceLocation loc{name, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                       e.mark.column >= 0 ? e.mark.column + 1 : 0};
    throw InputError(loc, "", "malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    throw InputError(where(name, root), "", "a lever catalog must be a mapping");
  }

  LeverCatalog cat;
  bool has_env_root = false;
  // Optional, because a default-constructed YAML::Node counts as defined.
  std::optional<YAML::Node> levers_node, plan_node, refused_node;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string field = scalar(name, it->first, "");
    const YAML::Node value = it->second;  // a copy: it-> yields a temporary proxy
    if (field == "framework") {
      cat.framework = scalar(name, value, field);
    } else if (field == "title") {
      cat.title = scalar(name, value, field);
    } else if (field == "source") {
      (void)scalar(name, value, field);
    } else if (field == "env_root") {
      cat.env_root = optional_scalar(name, value, field);
      has_env_root = true;
    } else if (field == "plan_keys") {
      plan_node.emplace(value);
    } else if (field == "levers") {
      levers_node.emplace(value);
    } else if (field == "refused") {
      refused_node.emplace(value);
    } else {
      fail(name, it->first, field,
           "unknown catalog field (expected framework, title, source, env_root, plan_keys, "
           "levers, refused)");
    }
  }
  if (cat.framework.empty()) fail(name, root, "framework", "catalog has no framework");
  if (!known_framework(cat.framework)) {
    fail(name, root, "framework", "unknown framework '" + cat.framework + "'");
  }
  if (cat.title.empty()) fail(name, root, "title", "catalog has no title");
  if (!has_env_root) fail(name, root, "env_root", "catalog has no env_root");
  if (!levers_node) fail(name, root, "levers", "catalog has no levers");

  for (const auto& n : require_sequence(name, *levers_node, "levers")) {
    LeverDef lever = parse_lever(name, n, cat.framework);
    for (const auto& other : cat.levers) {
      if (!dialects_overlap(other.dialect, lever.dialect)) continue;
      if (other.name == lever.name) {
        fail(name, n, lever.name, "duplicate lever name");
      }
      for (const auto& a : spellings(lever)) {
        for (const auto& b : spellings(other)) {
          if (same_key(a, b)) {
            fail(name, n, lever.name, "key '" + a + "' is already used by lever '" + other.name + "'");
          }
        }
      }
    }
    cat.levers.push_back(std::move(lever));
  }
  if (plan_node) {
    for (const auto& n : require_sequence(name, *plan_node, "plan_keys")) {
      PlanKey pk = parse_plan_key(name, n, cat.framework);
      for (const auto& other : cat.plan_keys) {
        if (other.name == pk.name && dialects_overlap(other.dialect, pk.dialect)) {
          fail(name, n, pk.name, "duplicate plan key name");
        }
      }
      // A plan key is frozen; it must not also be a lever.
      for (const auto& lever : cat.levers) {
        if (!dialects_overlap(lever.dialect, pk.dialect) || lever.key.empty()) continue;
        if (same_key(lever.key, pk.key)) {
          fail(name, n, pk.name, "key '" + pk.key + "' is also lever '" + lever.name + "'");
        }
      }
      cat.plan_keys.push_back(std::move(pk));
    }
  }
  if (refused_node) {
    for (const auto& n : require_sequence(name, *refused_node, "refused")) {
      cat.refused.push_back(parse_refused(name, n));
    }
  }
  return cat;
}

const PlanKey* LeverCatalog::plan_key(std::string_view name, std::string_view dialect) const {
  for (const auto& pk : plan_keys) {
    if (pk.name == name && dialect_matches(pk.dialect, dialect)) return &pk;
  }
  return nullptr;
}

const LeverDef* LeverCatalog::by_name(std::string_view name, std::string_view dialect) const {
  for (const auto& l : levers) {
    if (l.name == name && dialect_matches(l.dialect, dialect)) return &l;
  }
  return nullptr;
}

// Exact keys and aliases win over patterns. A key listed under `refused` never
// matches a pattern lever (it belongs to the family but is not throughput-only),
// so the gate keeps it frozen; the most specific matching pattern wins.
const LeverDef* LeverCatalog::by_key(std::string_view key, std::string_view dialect) const {
  for (const auto& l : levers) {
    if (!dialect_matches(l.dialect, dialect) || l.key.empty()) continue;
    if (same_key(l.key, key)) return &l;
    for (const auto& a : l.aliases) {
      if (same_key(a, key)) return &l;
    }
  }
  for (const auto& r : refused) {
    if (glob_match(r.key, key)) return nullptr;
  }
  const LeverDef* best = nullptr;
  for (const auto& l : levers) {
    if (!dialect_matches(l.dialect, dialect) || l.pattern.empty()) continue;
    if (!glob_match(l.pattern, key)) continue;
    if (!best || literal_chars(l.pattern) > literal_chars(best->pattern)) best = &l;
  }
  return best;
}

const LeverCatalog& lever_catalog(std::string_view framework) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<LeverCatalog>, std::less<>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(framework); it != cache.end()) return *it->second;
  if (!known_framework(framework)) {
    throw std::out_of_range("unknown framework '" + std::string(framework) + "'");
  }
  const std::string path = "skills/levers/" + std::string(framework) + ".yaml";
  const EmbeddedFile* file = find_embedded(path);
  if (file == nullptr) {
    throw std::out_of_range("no built-in lever catalog for framework '" + std::string(framework) +
                            "'");
  }
  auto cat = std::make_unique<LeverCatalog>(parse_lever_catalog(path, file->content));
  if (cat->framework != framework) {
    throw InputError(SourceLocation{path, 0, 0}, "framework",
                     "catalog declares framework '" + cat->framework + "'");
  }
  const LeverCatalog& ref = *cat;
  cache.emplace(std::string(framework), std::move(cat));
  return ref;
}

}  // namespace attune::recipe
