#include "attune/gate/correctness_gate.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "attune/util/error.h"
#include "attune/util/text.h"
#include "attribution.h"
#include "invariants.h"
#include "settings.h"

namespace attune::gate {

GateRefusal::GateRefusal(Verdict v) : std::runtime_error("the correctness gate refused the recipe"), verdict_(std::move(v)) {}

namespace {

const char* kVocabPadding = "vocab_padding";

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Judges one changed key against the rules, the lever catalog and the options.
class KeyJudge {
 public:
  KeyJudge(const GateRuleSet& rules, const GateOptions& options, const recipe::Recipe& r)
      : rules_(rules), options_(options), recipe_(r), framework_(recipe::to_string(r.framework())) {}

  void judge(KeyChange& c) const {
    const recipe::LeverCatalog& cat = recipe_.adapter().catalog();
    const recipe::LeverDef* lever = cat.by_key(rule_key(c.key), recipe_.dialect());
    if (lever) c.lever = lever->name;
    if (lever && c.new_value && !typed_value(*lever, *c.new_value)) {
      return refuse(c, framework_ + ".lever_value",
                    "'" + c.new_value->str() + "' is not " + type_words(lever->type) + " that can be read exactly, as lever " +
                        lever->name + " needs (a value known only at run time, or more words than the flag takes)");
    }
    if (lever && c.new_value && !legal_value(*lever, *c.new_value)) {
      return refuse(c, framework_ + ".lever_value",
                    "'" + c.new_value->str() + "' is not one of the throughput-equivalent values of lever " +
                        lever->name);
    }
    // The values of a choice lever are equivalent only among themselves: from
    // one outside them (an 8-bit optimizer to a fused AdamW) is a new objective.
    if (lever && c.old_value && !legal_value(*lever, *c.old_value)) {
      return refuse(c, framework_ + ".lever_value",
                    "the original's '" + c.old_value->str() + "' is not one of the throughput-equivalent values of lever " +
                        lever->name + ", so changing it changes what is trained");
    }
    auto matched = rules_.matching(framework_, rule_key(c.key));
    if (judge_by_rules(c, matched)) return;
    if (lever) return judge_lever(c, *lever);
    if (const recipe::PlanKey* pk = plan_key(cat, rule_key(c.key))) {
      // The batch decomposition may move as a follow-up; the invariants then
      // decide. Every other plan key (sequence, architecture) is frozen.
      if (pk->name == "gbs" || pk->name == "grad_accum" || pk->name == "dp") {
        return set(c, ChangeStatus::FollowUp, framework_ + ".follow_up",
                   "may change only while every invariant is kept");
      }
      return refuse(c, framework_ + ".plan_key", "a setting the plan is computed from (" + pk->name + ")");
    }
    if (contains(normalized_allow_keys(), c.key)) return set(c, ChangeStatus::AllowedKey, "", "allowed by --allow-key");
    if (options_.unknown_keys_parity) {
      return set(c, ChangeStatus::Parity, "unknown-key",
                 "no rule or catalog knows this key; accepted only if the loss-parity check passes");
    }
    refuse(c, "unknown-key",
           "no lever catalog marks this key throughput-only and no rule knows it (fail closed); "
           "pass --allow-key " + c.key + " to accept it");
  }

 private:
  bool judge_by_rules(KeyChange& c, const std::vector<const GateRule*>& matched) const {
    const GateRule* numerics = nullptr;
    const GateRule* invariant = nullptr;
    for (const GateRule* r : matched) {
      if (r->action == GateAction::Refuse || r->action == GateAction::BenchmarkOnly) {
        refuse(c, r->id, r->reason);
        return true;
      }
      if (r->action == GateAction::Numerics && (!numerics || !opted_in(*numerics))) numerics = r;
      if (r->action == GateAction::Invariant) invariant = r;
    }
    if (numerics) {
      if (opted_in(*numerics)) {
        set(c, ChangeStatus::OptedIn, numerics->id, numerics->reason + " (allowed by --allow " + numerics->allow + ")");
      } else {
        refuse(c, numerics->id, numerics->reason + "; pass --allow " + numerics->allow + " to accept it");
      }
      return true;
    }
    if (invariant) {
      set(c, ChangeStatus::FollowUp, invariant->id, "may change only while every invariant is kept");
      return true;
    }
    return false;
  }

  void judge_lever(KeyChange& c, const recipe::LeverDef& lever) const {
    if (lever.safety == recipe::LeverSafety::Throughput) return set(c, ChangeStatus::Lever, "", "throughput lever");
    std::string id = framework_ + "." + lever.allow_name;
    if (contains(options_.allow, lever.allow_name)) {
      return set(c, ChangeStatus::OptedIn, id, "numerics lever (allowed by --allow " + lever.allow_name + ")");
    }
    refuse(c, id, "changes numerics; pass --allow " + lever.allow_name + " to accept it");
  }

  bool opted_in(const GateRule& r) const { return contains(options_.allow, r.allow); }

  // A number or switch lever takes one value the reader resolved exactly; an
  // unresolved `$VAR` or a list is not a value of it that anyone checked.
  static bool typed_value(const recipe::LeverDef& lever, const recipe::Value& v) {
    if (v.is_null()) return true;
    switch (lever.type) {
      case recipe::LeverType::Int: return v.as_int().has_value();
      case recipe::LeverType::Float: return v.kind != recipe::ValueKind::List && v.as_double().has_value();
      case recipe::LeverType::Bool: return v.as_bool().has_value();
      default: return true;
    }
  }

  static std::string type_words(recipe::LeverType t) {
    switch (t) {
      case recipe::LeverType::Int: return "a whole number";
      case recipe::LeverType::Float: return "a number";
      case recipe::LeverType::Bool: return "true or false";
      default: return "a value";
    }
  }

  // An enum lever is throughput-only among its catalogued values; another value
  // (a KD loss where a CE implementation was, an 8-bit optimizer) may not be.
  static bool legal_value(const recipe::LeverDef& lever, const recipe::Value& v) {
    if (lever.type != recipe::LeverType::Enum || v.is_null()) return true;
    std::string text = to_lower(v.str());
    for (const auto& legal : lever.values) {
      std::string l = to_lower(legal);
      if (text == l || (text.size() > l.size() && text.compare(text.size() - l.size(), l.size(), l) == 0 &&
                        text[text.size() - l.size() - 1] == '.')) {
        return true;
      }
    }
    return false;
  }

  const recipe::PlanKey* plan_key(const recipe::LeverCatalog& cat, const std::string& key) const {
    for (const auto& pk : cat.plan_keys) {
      bool dialect = pk.dialect.empty() || pk.dialect == recipe_.dialect();
      if (dialect && (pk.key == key || contains(pk.aliases, key))) return &pk;
    }
    return nullptr;
  }

  std::vector<std::string> normalized_allow_keys() const {
    std::vector<std::string> out;
    for (const auto& k : options_.allow_keys) out.push_back(normalize_key(recipe_, k));
    return out;
  }

  static void set(KeyChange& c, ChangeStatus s, const std::string& rule, const std::string& reason) {
    c.status = s;
    c.rule = rule;
    c.reason = reason;
  }
  static void refuse(KeyChange& c, const std::string& rule, const std::string& reason) {
    set(c, ChangeStatus::Refused, rule, reason);
  }

  const GateRuleSet& rules_;
  const GateOptions& options_;
  const recipe::Recipe& recipe_;
  std::string framework_;
};

// The same value to every loader: equal by value, and written the same where
// a YAML loader could read the spelling differently (`1e-4` is a string to
// PyYAML, 0.0001 to OmegaConf).
bool same_setting(const Setting& a, const Setting& b) {
  if (!equivalent(a.entry.value, b.entry.value)) return false;
  bool spelled = a.entry.loader_dependent || b.entry.loader_dependent;
  return !spelled || a.entry.raw == b.entry.raw;
}

std::vector<KeyChange> changed_keys(const std::map<std::string, Setting>& before,
                                    const std::map<std::string, Setting>& after) {
  std::vector<KeyChange> out;
  for (const auto& [key, s] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      out.push_back({key, s.entry.value, std::nullopt, "", ChangeStatus::Refused, "", ""});
    } else if (!same_setting(s, it->second)) {
      out.push_back({key, s.entry.value, it->second.entry.value, "", ChangeStatus::Refused, "", ""});
    }
  }
  for (const auto& [key, s] : after) {
    if (!before.count(key)) out.push_back({key, std::nullopt, s.entry.value, "", ChangeStatus::Refused, "", ""});
  }
  return out;
}

// A setting the candidate writes twice with different values (and the original
// did not): which one the framework takes is not certain, so nothing is.
void refuse_ambiguous(const std::map<std::string, Setting>& before, const std::map<std::string, Setting>& after,
                      Verdict& v) {
  for (const auto& [key, s] : after) {
    auto it = before.find(key);
    bool was = it != before.end() && it->second.conflicting && equivalent(it->second.entry.value, s.entry.value);
    if (s.conflicting && !was) {
      v.reasons.push_back({"ambiguous-key", key,
                           "set more than once with different values (" + s.entry.value.str() +
                               "); which one the framework uses is not certain"});
    }
  }
}

// A value the run alone knows (`$(nproc)`, an environment variable, an
// interpolation the file cannot resolve) is not one the gate can judge a
// change of, whatever the key.
void refuse_runtime_values(const recipe::Recipe& r, const std::map<std::string, Setting>& before,
                           const std::map<std::string, Setting>& after, KeyChange& c) {
  auto runtime = [&](const std::map<std::string, Setting>& side) {
    auto it = side.find(c.key);
    return it != side.end() && it->second.entry.runtime ? &it->second.entry : nullptr;
  };
  const recipe::Entry* e = runtime(before);
  if (!e) e = runtime(after);
  if (!e || c.status == ChangeStatus::Refused) return;
  c.status = ChangeStatus::Refused;
  c.rule = recipe::to_string(r.framework()) + ".runtime_value";
  c.reason = "'" + (e->raw.empty() ? e->value.str() : e->raw) +
             "' is known only at run time, so what changing it does cannot be checked";
}

// A layout the framework rejects at start up is refused here, not left to
// fail on the cluster: every validity error the original did not have.
void refuse_new_violations(const RecipeView& original, const RecipeView& candidate, Verdict& v) {
  const recipe::Plan& a = original.plan;
  const recipe::Plan& b = candidate.plan;
  if (!a.unknown.empty() || !b.unknown.empty()) {
    // The rules cannot be checked: only a layout left exactly as it was is known to start.
    auto layout = [](const recipe::Plan& p) {
      return std::tuple(p.unknown, p.world, p.tp, p.pp, p.vp, p.cp, p.ep, p.etp, p.dp, p.mbs, p.gbs, p.grad_accum,
                        p.seq_len, p.batch_phases);
    };
    if (layout(a) != layout(b)) {
      v.reasons.push_back({"validity.unknown-layout", "",
                           (a.unknown.empty() ? b : a).unknown_text() +
                               " known only at run time, so whether the new layout starts cannot be checked"});
    }
    return;
  }
  auto violations = [](const RecipeView& view) { return view.recipe.adapter().validate(view.recipe, view.plan); };
  const std::vector<recipe::RuleViolation> had = violations(original);
  for (const auto& x : violations(candidate)) {
    if (!x.error) continue;
    bool old = std::any_of(had.begin(), had.end(), [&](const recipe::RuleViolation& y) {
      return y.error && y.rule == x.rule && y.key == x.key;
    });
    if (!old) v.reasons.push_back({"validity." + x.rule, x.key, x.message});
  }
}

// The wrapper's launch runs too: another command, working directory or
// container runs other code, and an environment variable it sets is judged as
// the same key in the file would be. (Where the job runs is not the objective.)
void judge_launch(const KeyJudge& judge, const recipe::Recipe& a, const recipe::Recipe& b, Verdict& v) {
  const recipe::LaunchSettings& x = a.launch();
  const recipe::LaunchSettings& y = b.launch();
  auto words = [](const std::vector<std::string>& w) {
    std::string out;
    for (const auto& s : w) out += (out.empty() ? "" : " ") + s;
    return out.empty() ? std::string("(default)") : out;
  };
  auto refuse = [&](const std::string& key, const std::string& before, const std::string& after) {
    v.reasons.push_back({"launch-changed", key,
                         key + " differs ('" + before + "' -> '" + after + "'): the run would start other code"});
  };
  if (x.command != y.command) refuse("launch.command", words(x.command), words(y.command));
  if (x.workdir != y.workdir) refuse("launch.workdir", x.workdir, y.workdir);
  if (x.container_image != y.container_image) refuse("launch.container.image", x.container_image, y.container_image);
  if (x.container_mounts != y.container_mounts) {
    refuse("launch.container.mounts", words(x.container_mounts), words(y.container_mounts));
  }
  std::set<std::string> names;
  for (const auto& [k, val] : x.env) names.insert(k);
  for (const auto& [k, val] : y.env) names.insert(k);
  for (const auto& name : names) {
    auto i = x.env.find(name), j = y.env.find(name);
    std::optional<recipe::Value> before, after;
    if (i != x.env.end()) before = recipe::Value::parse(i->second);
    if (j != y.env.end()) after = recipe::Value::parse(j->second);
    if (before && after && before->text == after->text) continue;
    KeyChange c{"env." + name, before, after, "", ChangeStatus::Refused, "", ""};
    judge.judge(c);
    if (c.status == ChangeStatus::Refused) v.reasons.push_back({c.rule, "launch.env." + name, c.reason});
    if (c.status == ChangeStatus::Parity) v.requires_parity = true;
    v.changes.push_back(std::move(c));
  }
}

bool mcore_vocab(const recipe::Recipe& r) {
  return r.framework() == recipe::Framework::Megatron || r.framework() == recipe::Framework::Bridge ||
         (r.framework() == recipe::Framework::HyperPod && (r.dialect() == "nemo1" || r.dialect() == "checkpointless"));
}

long long padded_vocab(long long vocab, long long divisible_by, int tp) {
  long long m = divisible_by * tp;
  return (vocab + m - 1) / m * m;
}

// make_vocab_size_divisible_by as one side states it: the first key of the
// framework's `padded_vocab` invariant the recipe sets, else the default 128.
struct VocabDivisor {
  std::string key;                 // "" when the recipe is silent
  std::optional<long long> value;  // nullopt: set, but not a positive number
};

VocabDivisor vocab_divisor(const GateRuleSet& rules, const RecipeView& view) {
  for (const auto& k : rules.invariant_keys(recipe::to_string(view.recipe.framework()), "padded_vocab")) {
    auto it = view.settings.find(k);
    if (it == view.settings.end()) continue;
    std::optional<long long> v;
    if (!it->second.conflicting) v = it->second.entry.value.as_int();
    if (v && *v <= 0) v.reset();
    return {k, v};
  }
  return {"", 128};
}

// The divisor setting the candidate changed (added, removed or another value), "" when none.
std::string changed_divisor_key(const GateRuleSet& rules, const RecipeView& before, const RecipeView& after) {
  for (const auto& k : rules.invariant_keys(recipe::to_string(before.recipe.framework()), "padded_vocab")) {
    auto a = before.settings.find(k), b = after.settings.find(k);
    bool in_a = a != before.settings.end(), in_b = b != after.settings.end();
    if (in_a != in_b || (in_a && !equivalent(a->second.entry.value, b->second.entry.value))) return k;
  }
  return "";
}

std::string divisor_text(const VocabDivisor& d, const RecipeView& view) {
  if (d.value) return std::to_string(*d.value);
  return "'" + view.settings.at(d.key).entry.value.str() + "'";
}

// Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by*TP
// (docs/gate.md): the padded size is the output layer's shape and the number of
// logits the softmax runs over. Each side is padded with its own divisor, so a TP
// change that also scales the divisor (TP4/128 -> TP1/512) keeps the padded
// vocabulary and is allowed. A TP change alone that moves it needs
// --allow vocab_padding; a divisor change that moves it (or that cannot be
// checked) is refused outright: the divisor is only ever written to keep it.
void check_vocab_padding(const GateRuleSet& rules, const RecipeView& original, const RecipeView& candidate,
                         const GateOptions& options, Verdict& v) {
  const recipe::Recipe& a = original.recipe;
  const recipe::Plan& pa = original.plan;
  const recipe::Plan& pb = candidate.plan;
  const std::string div_key = changed_divisor_key(rules, original, candidate);
  const bool tp_changed = pa.tp != pb.tp;
  auto refuse_divisor = [&](const std::string& why) {
    v.reasons.push_back({"vocab-padding", div_key,
                         why + "; make_vocab_size_divisible_by may change only so that the padded vocabulary "
                               "(a multiple of make_vocab_size_divisible_by x TP) stays the same "
                               "(--allow vocab_padding does not cover it)"});
  };
  if (!mcore_vocab(a)) {
    if (!div_key.empty()) refuse_divisor("this recipe does not pad its vocabulary the Megatron way");
    return;
  }
  long long vocab = 0;
  if (auto e = a.find_named("vocab"); e && e->value.as_int()) vocab = *e->value.as_int();
  if (!vocab && a.model()) vocab = a.model()->vocab;
  VocabDivisor da = vocab_divisor(rules, original), db = vocab_divisor(rules, candidate);
  if (da.value && db.value && vocab) {
    v.invariants.push_back({"padded_vocab", {std::to_string(padded_vocab(vocab, *da.value, pa.tp)),
                                             std::to_string(padded_vocab(vocab, *db.value, pb.tp))}});
  }
  if (!tp_changed && div_key.empty()) return;
  // The same multiple pads every vocabulary to the same size: nothing else to know.
  if (da.value && db.value && *da.value * pa.tp == *db.value * pb.tp) return;
  if (!vocab || !da.value || !db.value) {
    std::string what = !vocab ? "the vocabulary size is unknown (pass --model)"
                              : "make_vocab_size_divisible_by is " +
                                    (da.value ? divisor_text(db, candidate) : divisor_text(da, original)) +
                                    ", not a number";
    if (!div_key.empty()) {
      refuse_divisor(what + ", so the padded vocabulary cannot be checked");
    } else {
      v.warnings.push_back("tp changed but " + what + ": cannot check Megatron's vocab padding");
    }
    return;
  }
  long long x = padded_vocab(vocab, *da.value, pa.tp), y = padded_vocab(vocab, *db.value, pb.tp);
  if (x == y) return;
  std::string change = "padded vocabulary " + std::to_string(x) + " -> " + std::to_string(y) + " (output layer shape)";
  if (!div_key.empty()) {
    std::string tp = tp_changed ? "with tp " + std::to_string(pa.tp) + " -> " + std::to_string(pb.tp)
                                : "at tp " + std::to_string(pa.tp);
    return refuse_divisor("make_vocab_size_divisible_by " + std::to_string(*da.value) + " -> " +
                          std::to_string(*db.value) + " " + tp + " changes the " + change);
  }
  if (contains(options.allow, kVocabPadding)) return;
  v.reasons.push_back({"vocab-padding", a.key_of("tp"),
                       "tp " + std::to_string(pa.tp) + " -> " + std::to_string(pb.tp) + " changes the " + change +
                           "; pass --allow vocab_padding to accept it, or scale make_vocab_size_divisible_by so that "
                           "make_vocab_size_divisible_by x TP stays " + std::to_string(*da.value * pa.tp)});
}

// A setting is on unless it is null, false or the number zero.
bool enabled(const recipe::Value& v) {
  if (v.is_null()) return false;
  if (auto b = v.as_bool()) return *b;
  if (auto d = v.as_double()) return *d != 0.0;
  return true;
}

void flag_benchmark_settings(const GateRuleSet& rules, const RecipeView& view, Verdict& v) {
  for (const auto& [key, s] : view.settings) {
    for (const GateRule* rule : rules.matching(recipe::to_string(view.recipe.framework()), key)) {
      if (rule->action == GateAction::BenchmarkOnly && enabled(s.entry.value)) {
        v.warnings.push_back("benchmark-only setting " + key + " = " + s.entry.value.str() + " (" + rule->id +
                             "): throughput measured with it is not what real training gets");
      }
    }
  }
}

void check_framework(const recipe::Recipe& a, const recipe::Recipe& b) {
  if (a.document().format() != b.document().format()) {
    throw InputError({b.config_path(), 0, 0}, "",
                     "the candidate is a " + recipe::to_string(b.document().format()) + " file but the original is " +
                         recipe::to_string(a.document().format()) + ": compare two files of the same recipe");
  }
  if (a.framework() != b.framework()) {
    throw InputError({b.config_path(), 0, 0}, "",
                     "the candidate is a " + recipe::framework_title(b.framework()) + " recipe but the original is " +
                         recipe::framework_title(a.framework()));
  }
}

}  // namespace

CorrectnessGate::CorrectnessGate(GateOptions options)
    : options_(std::move(options)), rules_(GateRuleSet::with_site_rules(options_.rule_files)) {
  std::vector<std::string> known = rules_.allow_names();
  known.push_back(kVocabPadding);
  for (const char* fw : {"megatron", "automodel", "torchtitan", "hyperpod", "axolotl", "bridge"}) {
    for (const auto& l : recipe::lever_catalog(fw).levers) {
      if (!l.allow_name.empty()) known.push_back(l.allow_name);
    }
  }
  for (const auto& a : options_.allow) {
    if (!contains(known, a)) {
      std::sort(known.begin(), known.end());
      known.erase(std::unique(known.begin(), known.end()), known.end());
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InputError({}, "--allow", "unknown opt-in name '" + a + "'; known: " + list);
    }
  }
}

Verdict CorrectnessGate::check(const recipe::Recipe& original, const recipe::Recipe& candidate) const {
  check_framework(original, candidate);
  Verdict v;
  KeyJudge judge(rules_, options_, original);
  const RecipeView before(original), after(candidate);
  refuse_ambiguous(before.settings, after.settings, v);
  for (auto& c : changed_keys(before.settings, after.settings)) {
    judge.judge(c);
    refuse_runtime_values(original, before.settings, after.settings, c);
    if (c.status == ChangeStatus::Refused) v.reasons.push_back({c.rule, c.key, c.reason});
    if (c.status == ChangeStatus::Parity) v.requires_parity = true;
    v.changes.push_back(std::move(c));
  }
  for (const auto& inv : compute_invariants(rules_, before, after)) {
    v.invariants.push_back({inv.name, {inv.before, inv.after}});
    if (inv.moved()) {
      std::string unit = inv.unit.empty() ? "" : " " + inv.unit;
      v.reasons.push_back({"invariant." + inv.name, "",
                           inv.name + " moved: " + inv.before + unit + " -> " + inv.after + unit});
    }
  }
  for (auto& r : unattributed_changes(original.document(), candidate.document())) v.reasons.push_back(std::move(r));
  refuse_new_violations(before, after, v);
  judge_launch(judge, original, candidate, v);
  check_vocab_padding(rules_, before, after, options_, v);
  flag_benchmark_settings(rules_, before, v);
  const recipe::Plan& a = before.plan;
  const recipe::Plan& b = after.plan;
  if (a.dp != b.dp && (original.framework() == recipe::Framework::Torchtitan ||
                       original.framework() == recipe::Framework::Axolotl)) {
    v.warnings.push_back("the data-parallel degree changes (" + std::to_string(a.dp) + " -> " + std::to_string(b.dp) +
                         "): this framework shards the data loader by DP rank, so the sample order changes");
  }
  v.allowed = v.reasons.empty();
  return v;
}

CorrectnessGate::Judgement CorrectnessGate::judge(const recipe::Recipe& original, const recipe::Recipe& candidate) const {
  Judgement j{check(original, candidate), std::nullopt};
  if (j.verdict.allowed) j.approved.emplace(ApprovedRecipe(candidate, j.verdict));
  return j;
}

ApprovedRecipe CorrectnessGate::approve(const recipe::Recipe& original, const recipe::Recipe& candidate) const {
  Judgement j = judge(original, candidate);
  if (!j.approved) throw GateRefusal(std::move(j.verdict));
  return std::move(*j.approved);
}

}  // namespace attune::gate
