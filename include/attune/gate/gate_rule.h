// GateRule and GateRuleSet: the correctness gate's rules as data. Built-in
// rules live in gate/*.yaml (one file per framework plus common.yaml) and are
// compiled into the binary; a site may add stricter rules from its own file
// (--gate-rules) but can never remove or redefine a built-in one.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attune::gate {

enum class GateAction {
  Refuse,         // any change of a matching key is refused
  Numerics,       // refused unless the user opts in with --allow <allow>
  BenchmarkOnly,  // never changed; a recipe that has it enabled is flagged
  Invariant,      // may change only as a follow-up that keeps every derived invariant
};

std::string to_string(GateAction a);

struct GateRule {
  std::string id;         // "megatron.learning_rate"
  std::string framework;  // "common" or a framework name
  std::string category;   // "learning_rate", "fp8", ...
  GateAction action = GateAction::Refuse;
  std::string allow;      // for Numerics
  std::vector<std::string> keys;  // catalog-key space; '*' and '?' globs
  std::string reason;
  std::string source;
  std::string file;       // where the rule was defined
  bool builtin = true;

  // True when `key` is one of the rule's keys, matches a glob, or lies under
  // one (a rule key `dataset` covers `dataset.path` and `dataset[0]`).
  bool matches(std::string_view key) const;
};

struct GateRuleSet {
  std::vector<GateRule> rules;
  // framework -> invariant name -> keys (train_steps, lr_horizon, dataset, ...)
  std::map<std::string, std::map<std::string, std::vector<std::string>>> invariants;

  // The compiled-in rules (parsed once).
  static const GateRuleSet& builtin();
  // Built-in rules plus a site file's; throws InputError on a malformed file,
  // an id that redefines a built-in rule, or an action that would loosen the gate.
  static GateRuleSet with_site_rules(const std::vector<std::string>& files);

  std::vector<const GateRule*> matching(std::string_view framework, std::string_view key) const;
  const std::vector<std::string>& invariant_keys(std::string_view framework, std::string_view name) const;
  // Every --allow name the rules know.
  std::vector<std::string> allow_names() const;
};

// Parses one rule file (YAML). `builtin` marks compiled-in rules.
GateRuleSet parse_gate_rules(const std::string& name, const std::string& yaml_text, bool builtin);

}  // namespace attune::gate
