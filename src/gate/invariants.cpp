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

// A number computed from what the run alone knows is written as what it is
// computed from, so that it counts as kept only when none of that changed.
std::string unknown_from(const recipe::Plan& p) {
  return "unknown (" + p.unknown_text() + "; mbs=" + std::to_string(p.mbs) + " tp=" + std::to_string(p.tp) +
         " pp=" + std::to_string(p.pp) + " cp=" + std::to_string(p.cp) + " world=" + std::to_string(p.world) +
         " gbs=" + std::to_string(p.gbs) + " ga=" + std::to_string(p.grad_accum) + " seq=" + std::to_string(p.seq_len) +
         ")";
}

std::string gbs_text(const recipe::Plan& p) { return p.gbs_known() ? std::to_string(p.gbs) : unknown_from(p); }
std::string seq_text(const recipe::Plan& p) { return p.seq_len_known() ? std::to_string(p.seq_len) : unknown_from(p); }
// Axolotl's sample packing fills bins of micro_batch_size x sequence_len
// tokens: a micro-batch / grad-accumulation swap that keeps their product
// still changes which samples train together.
std::string pack_text(const recipe::Plan& p) {
  return p.pack_tokens > 0 ? std::to_string(p.pack_tokens) + " tokens per packed micro-batch" : "(no packing)";
}

std::string tokens_text(const recipe::Plan& p) {
  return p.gbs_known() && p.seq_len_known() ? std::to_string(p.tokens_per_step) : unknown_from(p);
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
  bool tokens_known = d.plan.gbs_known() && d.plan.seq_len_known();
  if (auto s = steps.as_int()) {
    d.train_tokens = tokens_known ? std::to_string(*s * d.plan.tokens_per_step) : unknown_from(d.plan);
  } else if (auto n = samples.as_int()) {
    d.train_tokens = d.plan.seq_len_known() ? std::to_string(*n * d.plan.seq_len) : unknown_from(d.plan);
  }
  return d;
}

std::string or_unset(const std::string& s) { return s.empty() ? "(not set)" : s; }


}  // namespace

std::vector<Invariant> compute_invariants(const GateRuleSet& rules, const RecipeView& original,
                                          const RecipeView& candidate) {
  Derived a = derive(rules, original), b = derive(rules, candidate);
  return {
      {"gbs", gbs_text(a.plan), gbs_text(b.plan), "samples"},
      {"tokens_per_step", tokens_text(a.plan), tokens_text(b.plan), "tokens"},
      {"seq_len", seq_text(a.plan), seq_text(b.plan), "tokens"},
      {"pack_tokens", pack_text(a.plan), pack_text(b.plan), ""},
      {"train_steps", or_unset(a.train_steps), or_unset(b.train_steps), "steps"},
      {"train_samples", or_unset(a.train_samples), or_unset(b.train_samples), "samples"},
      {"train_tokens", or_unset(a.train_tokens), or_unset(b.train_tokens), "tokens"},
      {"lr_horizon", a.lr_horizon, b.lr_horizon, ""},
      {"dataset", or_unset(a.dataset), or_unset(b.dataset), ""},
      {"seed", or_unset(a.seed), or_unset(b.seed), ""},
  };
}

}  // namespace attune::gate
