#include "attune/policy/rule_book.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>

#include "attune/util/embedded.h"
#include "attune/util/yaml_input.h"

namespace attune::policy {

namespace {

constexpr const char* kBuiltin = "skills/rules.yaml";

double number(const std::string& file, const YAML::Node& n, const std::string& key) {
  const std::string t = yaml_scalar(file, n, key);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0') throw InputError(yaml_where(file, n), key, "expected a number, got '" + t + "'");
  return v;
}

bool boolean(const std::string& file, const YAML::Node& n, const std::string& key) {
  const std::string t = yaml_scalar(file, n, key);
  if (t == "true") return true;
  if (t == "false") return false;
  throw InputError(yaml_where(file, n), key, "expected true or false, got '" + t + "'");
}

RuleCondition condition(const std::string& file, const YAML::Node& n) {
  RuleCondition c;
  if (!n) return c;
  if (!n.IsMap()) throw InputError(yaml_where(file, n), "when", "expected a mapping of conditions");
  for (const auto& kv : n) {
    const std::string key = yaml_key(file, kv.first, "when");
    const YAML::Node& v = kv.second;
    if (key == "failure") c.failure = yaml_scalar(file, v, key);
    else if (key == "headroom_gib_at_least") c.headroom_gib_at_least = number(file, v, key);
    else if (key == "headroom_gib_below") c.headroom_gib_below = number(file, v, key);
    else if (key == "exposed_comm_share_at_least") c.exposed_comm_share_at_least = number(file, v, key);
    else if (key == "bubble_share_at_least") c.bubble_share_at_least = number(file, v, key);
    else if (key == "launch_bound") c.launch_bound = boolean(file, v, key);
    else if (key == "moe") c.moe = boolean(file, v, key);
    else if (key == "pp_at_least") c.pp_at_least = static_cast<int>(number(file, v, key));
    else if (key == "tp_at_least") c.tp_at_least = static_cast<int>(number(file, v, key));
    else if (key == "cp_at_least") c.cp_at_least = static_cast<int>(number(file, v, key));
    else throw InputError(yaml_where(file, kv.first), "when." + key, "unknown condition");
  }
  return c;
}

std::vector<std::string> parts(const std::string& file, const YAML::Node& n) {
  if (!n.IsSequence()) throw InputError(yaml_where(file, n), "rules.acts_on", "expected a list of step parts");
  std::vector<std::string> out;
  for (const auto& p : n) {
    out.push_back(yaml_scalar(file, p, "rules.acts_on"));
    const auto& known = step_parts();
    if (std::find(known.begin(), known.end(), out.back()) == known.end())
      throw InputError(yaml_where(file, p), "rules.acts_on", "unknown step part '" + out.back() + "'");
  }
  return out;
}

const std::set<std::string>& directions() {
  static const std::set<std::string> d = {"up", "down", "on", "off", "any"};
  return d;
}

// A value's place in its order; nullopt when it has none.
std::optional<double> rank(const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (!v.empty() && *end == '\0') return x;
  static const std::array<std::pair<const char*, double>, 10> words = {{{"none", 0},
                                                                        {"off", 0},
                                                                        {"false", 0},
                                                                        {"unset", 0},
                                                                        {"default", 0.5},
                                                                        {"selective", 1},
                                                                        {"layers", 1},
                                                                        {"on", 1},
                                                                        {"true", 1},
                                                                        {"full", 3}}};
  for (const auto& [w, r] : words) {
    if (v == w) return r;
  }
  if (v.rfind("zero-", 0) == 0) return std::strtod(v.c_str() + 5, nullptr);
  if (v == "all layers") return 1e9;
  if (v.rfind("full (", 0) == 0) return 2;    // partial full recompute: between selective and full
  if (v.rfind("selective (", 0) == 0) return 1.5;
  return std::nullopt;
}

}  // namespace

int RuleBook::stage_rank(const std::string& stage) const {
  const auto it = std::find(stages.begin(), stages.end(), stage);
  return static_cast<int>(it - stages.begin());
}

const Rule* RuleBook::match(const std::string& dimension, const std::string& from, const std::string& to,
                            const RuleEvidence& evidence) const {
  for (const Rule& r : rules) {
    if (r.lever == dimension && goes(r.direction, from, to) && holds(r.when, evidence)) return &r;
  }
  return nullptr;
}

const LeverCombination* RuleBook::combination_for(const std::vector<std::string>& dimensions) const {
  for (const LeverCombination& c : combinations) {
    const bool all = std::all_of(dimensions.begin(), dimensions.end(), [&](const std::string& d) {
      return std::find(c.levers.begin(), c.levers.end(), d) != c.levers.end();
    });
    if (all) return &c;
  }
  return nullptr;
}

const std::vector<std::string>& step_parts() {
  static const std::vector<std::string> p = {"compute", "recompute", "memory_bound", "tp_comm", "cp_comm",
                                             "ep_comm", "dp_comm",   "pp_comm",      "bubble",  "optimizer",
                                             "offload", "data",      "other"};
  return p;
}

bool holds(const RuleCondition& c, const RuleEvidence& e) {
  if (c.failure && *c.failure != e.failure) return false;
  if (!c.failure && !e.failure.empty()) return false;  // a failed run: only the rules that fix it
  if (c.headroom_gib_at_least && (!e.headroom_gib || *e.headroom_gib < *c.headroom_gib_at_least)) return false;
  if (c.headroom_gib_below && (!e.headroom_gib || *e.headroom_gib >= *c.headroom_gib_below)) return false;
  if (c.exposed_comm_share_at_least && e.exposed_comm_share < *c.exposed_comm_share_at_least) return false;
  if (c.bubble_share_at_least && e.bubble_share < *c.bubble_share_at_least) return false;
  if (c.launch_bound && (e.launch_share >= 0.05) != *c.launch_bound) return false;
  if (c.moe && e.moe != *c.moe) return false;
  if (c.pp_at_least && e.pp < *c.pp_at_least) return false;
  if (c.tp_at_least && e.tp < *c.tp_at_least) return false;
  if (c.cp_at_least && e.cp < *c.cp_at_least) return false;
  return true;
}

bool goes(const std::string& direction, const std::string& from, const std::string& to) {
  if (direction == "any") return from != to;
  const auto a = rank(from), b = rank(to);
  if (!a || !b) return false;
  if (direction == "up" || direction == "on") return *b > *a;
  return *b < *a;
}

RuleBook parse_rule_book(const std::string& name, const std::string& text) {
  const YAML::Node root = load_yaml(name, text);
  if (!root.IsMap()) throw InputError({name, 1, 1}, "", "expected a mapping with stages, rules and combinations");
  RuleBook book;
  for (const auto& kv : root) {
    const std::string key = yaml_key(name, kv.first, "");
    if (key != "tie_margin" && key != "stages" && key != "rules" && key != "combinations")
      throw InputError(yaml_where(name, kv.first), key, "unknown key (expected tie_margin, stages, rules, combinations)");
  }
  if (root["tie_margin"]) book.tie_margin = number(name, root["tie_margin"], "tie_margin");
  for (const auto& s : root["stages"]) book.stages.push_back(yaml_scalar(name, s, "stages"));
  std::set<std::string> ids;
  for (const auto& n : root["rules"]) {
    Rule r;
    r.line = n.Mark().line + 1;
    for (const auto& kv : n) {
      const std::string key = yaml_key(name, kv.first, "rules");
      if (key == "id") r.id = yaml_scalar(name, kv.second, key);
      else if (key == "stage") r.stage = yaml_scalar(name, kv.second, key);
      else if (key == "lever") r.lever = yaml_scalar(name, kv.second, key);
      else if (key == "direction") r.direction = yaml_scalar(name, kv.second, key);
      else if (key == "why") r.why = yaml_scalar(name, kv.second, key);
      else if (key == "when") r.when = condition(name, kv.second);
      else if (key == "acts_on") r.acts_on = parts(name, kv.second);
      else throw InputError(yaml_where(name, kv.first), "rules." + key, "unknown key");
    }
    if (r.id.empty() || r.lever.empty() || r.why.empty())
      throw InputError(yaml_where(name, n), "rules", "a rule needs id, lever and why");
    if (!ids.insert(r.id).second) throw InputError(yaml_where(name, n), "rules.id", "duplicate rule id '" + r.id + "'");
    if (book.stage_rank(r.stage) == static_cast<int>(book.stages.size()))
      throw InputError(yaml_where(name, n), "rules.stage", "stage '" + r.stage + "' is not in stages");
    if (!directions().count(r.direction))
      throw InputError(yaml_where(name, n), "rules.direction", "expected up, down, on, off or any, got '" + r.direction + "'");
    book.rules.push_back(std::move(r));
  }
  for (const auto& n : root["combinations"]) {
    LeverCombination c;
    for (const auto& l : n["levers"]) c.levers.push_back(yaml_scalar(name, l, "combinations.levers"));
    if (n["why"]) c.why = yaml_scalar(name, n["why"], "combinations.why");
    if (c.levers.size() < 2) throw InputError(yaml_where(name, n), "combinations.levers", "a combination needs two levers or more");
    book.combinations.push_back(std::move(c));
  }
  return book;
}

const RuleBook& builtin_rule_book() {
  static const RuleBook book = [] {
    const EmbeddedFile* f = find_embedded(kBuiltin);
    if (!f) throw InputError({kBuiltin, 0, 0}, "", "the rules are not compiled in");
    return parse_rule_book(kBuiltin, f->content);
  }();
  return book;
}

}  // namespace attune::policy
