#include "invariants.h"

#include "settings.h"

namespace attune::gate {

namespace {

struct Derived {
  recipe::Plan plan;
  std::string train_steps, train_samples, train_tokens, lr_horizon, dataset, seed;
};

using Settings = std::map<std::string, Setting>;

// Numbers in one spelling, so 1e8 and 100000000.0 compare equal.
std::string canonical(const recipe::Value& v) {
  if (v.kind == recipe::ValueKind::Int || v.kind == recipe::ValueKind::Float) {
    if (auto i = v.as_int()) return std::to_string(*i);
    if (auto d = v.as_double()) return recipe::Value::number(*d).text;
  }
  return v.str();
}

// The first invariant key the recipe sets, as text ("" when none is set).
std::string first_value(const GateRuleSet& rules, const recipe::Recipe& r, const Settings& settings,
                        const std::string& name) {
  for (const auto& k : rules.invariant_keys(recipe::to_string(r.framework()), name)) {
    auto it = settings.find(k);
    if (it != settings.end()) return canonical(it->second.entry.value);
  }
  return "";
}

// All of an invariant's keys that are set, "key=value;..." — identity of a set.
std::string all_values(const GateRuleSet& rules, const recipe::Recipe& r, const Settings& settings,
                       const std::string& name) {
  std::string out;
  for (const auto& k : rules.invariant_keys(recipe::to_string(r.framework()), name)) {
    GateRule probe;
    probe.keys = {k};
    for (const auto& [key, s] : settings) {
      if (probe.matches(key)) out += key + "=" + canonical(s.entry.value) + ";";
    }
  }
  return out;
}

Derived derive(const GateRuleSet& rules, const RecipeView& view) {
  const recipe::Recipe& r = view.recipe;
  const Settings& settings = view.settings;
  Derived d;
  d.plan = view.plan;
  d.train_steps = first_value(rules, r, settings, "train_steps");
  d.train_samples = first_value(rules, r, settings, "train_samples");
  // The schedule horizon defaults to the training length when not set.
  d.lr_horizon = all_values(rules, r, settings, "lr_horizon");
  if (d.lr_horizon.empty()) d.lr_horizon = "= training length";
  d.dataset = all_values(rules, r, settings, "dataset");
  d.seed = all_values(rules, r, settings, "seed");
  recipe::Value steps = recipe::Value::parse(d.train_steps);
  recipe::Value samples = recipe::Value::parse(d.train_samples);
  if (auto s = steps.as_int()) {
    d.train_tokens = std::to_string(*s * d.plan.tokens_per_step);
  } else if (auto n = samples.as_int()) {
    d.train_tokens = std::to_string(*n * d.plan.seq_len);
  }
  return d;
}

std::string or_unset(const std::string& s) { return s.empty() ? "(not set)" : s; }

}  // namespace

std::vector<Invariant> compute_invariants(const GateRuleSet& rules, const RecipeView& original,
                                          const RecipeView& candidate) {
  Derived a = derive(rules, original), b = derive(rules, candidate);
  auto n = [](long long v) { return std::to_string(v); };
  return {
      {"gbs", n(a.plan.gbs), n(b.plan.gbs), "samples"},
      {"tokens_per_step", n(a.plan.tokens_per_step), n(b.plan.tokens_per_step), "tokens"},
      {"seq_len", n(a.plan.seq_len), n(b.plan.seq_len), "tokens"},
      {"train_steps", or_unset(a.train_steps), or_unset(b.train_steps), "steps"},
      {"train_samples", or_unset(a.train_samples), or_unset(b.train_samples), "samples"},
      {"train_tokens", or_unset(a.train_tokens), or_unset(b.train_tokens), "tokens"},
      {"lr_horizon", a.lr_horizon, b.lr_horizon, ""},
      {"dataset", or_unset(a.dataset), or_unset(b.dataset), ""},
      {"seed", or_unset(a.seed), or_unset(b.seed), ""},
  };
}

}  // namespace attune::gate
