// Recipe::set — one lever edit and the follow-ups that keep the recipe valid
// and its objective unchanged: DP from the world size, grad accumulation or
// an explicit global batch so the global batch is kept (each framework's
// batch rule: docs/architecture.md, the recipe module), Megatron's vocabulary
// divisor so a TP change keeps the padded vocabulary.
#include <algorithm>
#include <numeric>
#include <set>

#include "attune/recipe/key_path.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::recipe {

namespace {

struct Target {
  std::optional<LeverDef> lever;  // a copy: pattern levers get their concrete key
  std::string doc_key;            // for raw keys
  bool plan_key = false;          // the edit targets a plan key (gbs, seq_len...) itself
};

std::string lever_names(const LeverCatalog& cat, const std::string& dialect) {
  std::string out;
  int n = 0;
  for (const auto& l : cat.levers) {
    if (!l.pattern.empty() || (!l.dialect.empty() && l.dialect != dialect)) continue;
    if (n++ == 12) return out + ", ...";
    out += (out.empty() ? "" : ", ") + l.name;
  }
  return out;
}

Target resolve_target(const Recipe& r, const std::string& name, bool allow_new_key) {
  const LeverCatalog& cat = r.adapter().catalog();
  if (const LeverDef* def = cat.by_name(r.adapter().edit_lever(r, name), r.dialect()); def && !def->key.empty()) {
    return {*def, "", false};
  }
  std::string raw = strip_override_prefix(name);
  std::string ck = r.adapter().catalog_key(r, raw);
  if (const LeverDef* def = cat.by_key(ck, r.dialect())) {
    LeverDef concrete = *def;
    if (!concrete.pattern.empty()) concrete.key = ck;
    if (auto e = r.find(ck)) concrete.key = r.adapter().catalog_key(r, e->path);
    return {concrete, "", false};
  }
  bool is_plan_key = false;
  for (const auto& pk : cat.plan_keys) {
    if (pk.key == ck || std::find(pk.aliases.begin(), pk.aliases.end(), ck) != pk.aliases.end()) is_plan_key = true;
  }
  std::string dk = r.adapter().doc_key(r, ck);
  if (r.document().find(dk)) return {std::nullopt, dk, is_plan_key};
  if (r.document().find(raw)) return {std::nullopt, raw, is_plan_key};
  if (allow_new_key) return {std::nullopt, dk, is_plan_key};
  throw InputError({r.config_path(), 0, 0}, name,
                   "unknown lever or key: not a " + framework_title(r.framework()) +
                       " lever (" + lever_names(cat, r.dialect()) +
                       ") and not set in the file; pass --add to add a new key");
}

class FollowUpSolver {
 public:
  FollowUpSolver(Recipe& work, const Plan& before, std::vector<Change>& out)
      : r_(work), before_(before), out_(out) {}

  void resolve_explicit_dp(const std::string& lever) {
    static const std::set<std::string> layout = {"tp", "pp", "cp", "ep", "nodes", "gpus_per_node", "dp_replicate"};
    if (!layout.count(lever)) return;
    Plan p = r_.plan();
    switch (r_.framework()) {
      case Framework::Torchtitan: {
        auto shard = r_.find_named("dp_shard");
        if (shard && shard->value.as_int() && *shard->value.as_int() > 0) {
          int rest = std::max(1, int_of("dp_replicate", 1) * p.cp * p.tp * p.pp);
          set_int("dp_shard", p.world / rest, p.world % rest == 0, "data_parallel_shard_degree takes the GPUs the other degrees leave");
        }
        break;
      }
      case Framework::HyperPod:
        if (r_.dialect() == "smp") resolve_smp_shard_degree(p);
        break;
      case Framework::AutoModel: {
        auto dp = r_.find_named("dp");
        if (dp && dp->value.as_int()) {
          int mp = std::max(1, p.tp * p.cp * p.pp);
          set_int("dp", p.world / mp, p.world % mp == 0, "dp_size = world / (tp*cp*pp)");
        }
        break;
      }
      case Framework::Axolotl: {
        auto shard = r_.find_named("dp_shard");
        if (shard && shard->value.as_int()) {
          // The expert-parallel plugin takes EP out of the same mesh: ep * dp_shard = world.
          const int ep = p.ep > 1 ? p.ep : 1;
          int rest = std::max(1, int_of("dp_replicate", 1) * p.tp * p.cp * ep);
          set_int("dp_shard", p.world / rest, p.world % rest == 0,
                  ep > 1 ? "dp_shard_size = world / (dp_replicate*tp*cp*ep)" : "dp_shard_size = world / (dp_replicate*tp*cp)");
        }
        break;
      }
      default:
        break;
    }
  }

  void keep_global_batch(const std::string& lever) {
    Plan p = r_.plan();
    if (p.gbs == before_.gbs) return;
    long long per_step = static_cast<long long>(p.mbs) * p.dp;
    switch (r_.adapter().batch_rule(r_)) {
      case BatchRule::Explicit:
      case BatchRule::Torchtitan:
        // The global batch was implied (mbs*dp, or local_batch*dp under a
        // pipeline); pin it so GA absorbs the change.
        set_ll("gbs", before_.gbs, true,
               "the global batch was " + (before_.gbs_rule.empty() ? std::string("implied") : before_.gbs_rule) +
                   "; set explicitly to keep it");
        break;
      case BatchRule::Axolotl:
        set_ll("grad_accum", per_step > 0 ? before_.gbs / per_step : 0, per_step > 0 && before_.gbs % per_step == 0,
               "keeps the global batch micro*GA*dp = " + std::to_string(before_.gbs));
        break;
      case BatchRule::SmpImplied:
        // hf_* recipes have no GA key: the per-GPU batch is the only way back.
        if (lever == "mbs") refuse_smp_micro_batch(p);
        set_ll("mbs", p.dp > 0 ? before_.gbs / p.dp : 0, p.dp > 0 && before_.gbs % p.dp == 0,
               "keeps the global batch train_batch_size*dp = " + std::to_string(before_.gbs));
        break;
    }
  }

  // Megatron, Megatron-Bridge and HyperPod NeMo-1 pad the vocabulary to a
  // multiple of make_vocab_size_divisible_by*TP, so a TP change can change the
  // output layer (docs/gate.md, vocabulary padding). Scaling the divisor by old_tp/new_tp keeps
  // the product, and so the padded vocabulary; when that is not a whole number
  // the divisor is left and the gate refuses the edit.
  void keep_padded_vocab() {
    if (!pads_vocab_by_tp()) return;
    Plan p = r_.plan();
    if (p.tp == before_.tp || p.tp <= 0 || before_.tp <= 0) return;
    long long vocab = 0;
    if (auto v = r_.find_named("vocab"); v && v->value.as_int()) vocab = *v->value.as_int();
    if (vocab <= 0 && r_.model()) vocab = r_.model()->vocab;
    std::string key = r_.key_of("make_vocab_size_divisible_by");
    if (vocab <= 0 || key.empty()) return;
    long long divisor = 128;  // the default of all three
    if (auto d = r_.find_named("make_vocab_size_divisible_by")) {
      if (!d->value.as_int() || *d->value.as_int() <= 0) return;
      divisor = *d->value.as_int();
    }
    long long multiple = divisor * before_.tp;
    long long padded = round_up(vocab, multiple);
    if (round_up(vocab, divisor * p.tp) == padded || multiple % p.tp != 0) return;
    Change c;
    c.key = key;
    if (auto e = r_.document().find(key)) c.old_value = e->value;
    c.new_value = Value::integer(multiple / p.tp);
    c.why = "keeps the padded vocabulary " + std::to_string(padded) + " (make_vocab_size_divisible_by x TP = " +
            std::to_string(multiple) + ")";
    r_.apply(c);
    out_.push_back(c);
  }

  // torchtitan/AutoModel with PP: the local batch is split into pipeline
  // micro-batches and local*dp must divide the global batch. When a layout
  // edit grows DP past that, the local batch shrinks to global/dp; the
  // micro batch (and so the activation memory) stays.
  void keep_local_batch_dividing(const std::string& lever) {
    if (lever == "mbs") return;  // the edit was the local batch itself
    if (r_.framework() != Framework::Torchtitan && r_.framework() != Framework::AutoModel) return;
    Layout l = r_.adapter().read_layout(r_);
    if (l.pp <= 1 || l.local_batch <= 0) return;
    Plan p = r_.plan();
    long long per_pass = static_cast<long long>(l.local_batch) * p.dp;
    if (per_pass <= 0 || p.gbs % per_pass == 0) return;
    long long local = p.dp > 0 && p.gbs % p.dp == 0 ? p.gbs / p.dp : 0;
    set_ll("mbs", local, local > 0 && local < l.local_batch && p.mbs > 0 && local % p.mbs == 0,
           "local_batch_size*dp must divide the global batch; the pipeline micro-batch stays " + std::to_string(p.mbs));
  }

 private:
  // SMP requires world % (shard_degree*tp*ep) == 0. A shard group that spanned
  // every rank before (shard_degree = world/(tp*ep)) still does after the
  // edit; a smaller (hybrid) one is kept when it still divides, else it
  // shrinks to the largest degree that divides both.
  void resolve_smp_shard_degree(const Plan& p) {
    auto shard = r_.find_named("dp_shard");
    if (!shard || !shard->value.as_int() || *shard->value.as_int() <= 0) return;
    long long s = *shard->value.as_int();
    long long full_before = before_.world / std::max(1, before_.tp * before_.ep);
    long long full = p.world / std::max(1, p.tp * p.ep);
    if (full <= 0 || p.world % std::max(1, p.tp * p.ep) != 0) return;  // the world rule reports it
    if (s == full_before && s != full) {
      set_int("dp_shard", full, true,
              "shard_degree sharded over all world/(tp*ep) = " + std::to_string(full_before) +
                  " ranks; it still does (" + std::to_string(full) + ")");
    } else if (full % s != 0) {
      set_int("dp_shard", std::gcd(s, full), true,
              "shard_degree must divide world/(tp*ep) = " + std::to_string(full) +
                  " (world % (shard_degree*tp*ep) == 0)");
    }
  }

  // SMP hf_* recipes state neither gradient accumulation nor a global batch:
  // the global batch is train_batch_size*world/(tp*cp), so a new micro batch
  // alone always changes it.
  [[noreturn]] void refuse_smp_micro_batch(const Plan& p) {
    long long tbs_before = before_.mbs, tbs = p.mbs;
    std::string message = "HyperPod SMP (hf_*) recipes have no gradient-accumulation or global-batch key: the global batch is "
                          "train_batch_size*world/(tp*cp) = " + std::to_string(tbs_before) + "*" +
                          std::to_string(before_.world) + "/(" + std::to_string(before_.tp) + "*" +
                          std::to_string(before_.cp) + ") = " + std::to_string(before_.gbs) +
                          " samples, so train_batch_size " + std::to_string(tbs) + " alone would make it " +
                          std::to_string(p.gbs) + ".";
    if (tbs > tbs_before && tbs_before > 0 && tbs % tbs_before == 0) {
      long long f = tbs / tbs_before;
      message += " To run " + std::to_string(tbs) + " samples per GPU at the same global batch, multiply tp or cp by " +
                 std::to_string(f) + " instead";
      if ((f & (f - 1)) == 0) message += " (e.g. tp=" + std::to_string(before_.tp * f) + ")";
      message += ": train_batch_size follows.";
    } else {
      message += " Change tp, cp or the node count instead; train_batch_size follows so the global batch is kept.";
    }
    fail(r_.key_of("mbs"), message);
  }

  bool pads_vocab_by_tp() const {
    switch (r_.framework()) {
      case Framework::Megatron:
      case Framework::Bridge:
        return true;
      case Framework::HyperPod:
        return r_.dialect() == "nemo1" || r_.dialect() == "checkpointless";
      default:
        return false;
    }
  }

  static long long round_up(long long n, long long multiple) { return (n + multiple - 1) / multiple * multiple; }

  int int_of(const std::string& name, int fallback) {
    auto e = r_.find_named(name);
    return e && e->value.as_int() ? static_cast<int>(*e->value.as_int()) : fallback;
  }

  void set_int(const std::string& name, long long v, bool exact, const std::string& why) { set_ll(name, v, exact, why); }

  void set_ll(const std::string& name, long long v, bool exact, const std::string& why) {
    std::string key = r_.key_of(name);
    if (!exact || v <= 0) {
      fail(key.empty() ? name : key, "cannot keep the global batch of " + std::to_string(before_.gbs) +
                                          " samples: it is not divisible by the new layout (" + why + ")");
    }
    Change c;
    c.key = key;
    if (auto e = r_.document().find(key)) c.old_value = e->value;
    const Value stated = r_.adapter().document_count(r_, name, v);
    if (c.old_value && c.old_value->same_as(stated)) return;  // already right: no follow-up
    c.new_value = stated;
    c.why = why;
    r_.apply(c);
    out_.push_back(c);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) {
    throw InputError({r_.config_path(), 0, 0}, key, message);
  }

  Recipe& r_;
  const Plan& before_;
  std::vector<Change>& out_;
};

bool same_violation(const RuleViolation& a, const RuleViolation& b) { return a.rule == b.rule && a.key == b.key; }

void check_new_violations(const Recipe& work, const std::vector<RuleViolation>& before) {
  std::vector<RuleViolation> fresh;
  for (const auto& v : work.violations()) {
    bool old = std::any_of(before.begin(), before.end(), [&](const auto& b) { return same_violation(v, b); });
    if (v.error && !old) fresh.push_back(v);
  }
  if (fresh.empty()) return;
  // Every rule the edit breaks, so one message says all that must change.
  std::string message;
  for (const auto& v : fresh) message += (message.empty() ? "" : "; ") + v.message + " (rule " + v.rule + ")";
  throw InputError({work.config_path(), 0, 0}, fresh.front().key, message);
}

std::string lever_label(const Target& t, const std::string& requested) {
  return t.lever ? t.lever->name : requested;
}

// A framework whose file has no environment section (torchtitan's TOML,
// AutoModel's, Axolotl's and HyperPod's YAML) takes its variables from the
// launch: an `env.NAME` edit goes into the wrapper's launch.env, which the
// gate judges with the file. A recipe that is the wrapper's own command line
// keeps its launch.env outside the command, where no edit of it is written.
void refuse_env_of_a_command_recipe(const Recipe& r, const std::vector<Change>& changes, const std::string& requested) {
  if (r.adapter().catalog().env_root != "-" || r.document().format() != Format::Command) return;
  for (const auto& c : changes) {
    if (c.key.rfind("env.", 0) != 0) continue;
    throw InputError({r.config_path(), 0, 0}, requested,
                     "a recipe kept as its command line takes " + c.key.substr(4) +
                         " from the wrapper's launch.env, which attune does not edit: set it there");
  }
}

}  // namespace

EditResult Recipe::set(const std::string& lever_or_key, const std::string& value_text, bool allow_new_key) {
  Target target = resolve_target(*this, lever_or_key, allow_new_key);
  Recipe work(*this);  // edits happen on a copy: a failure leaves this recipe untouched
  EditResult result;
  result.lever = lever_label(target, lever_or_key);
  result.before = plan();
  if (result.before.world_source == "assumed") {
    // An assumed world stays fixed through the edit; otherwise a bigger TP
    // would quietly assume more GPUs instead of fewer data-parallel replicas.
    work.hardware_.nodes = result.before.nodes;
    work.hardware_.gpus_per_node = result.before.gpus_per_node;
  }
  std::vector<RuleViolation> before_violations = violations();
  Value value = Value::parse(value_text);

  if (target.lever) {
    result.changes = adapter_->translate(work, *target.lever, value);
  } else {
    Change c;
    c.key = target.doc_key;
    if (auto e = doc_->find(c.key)) c.old_value = e->value;
    c.new_value = value;
    result.changes = {c};
  }
  refuse_env_of_a_command_recipe(*this, result.changes, lever_or_key);
  for (const auto& c : result.changes) work.apply(c);

  if (!target.plan_key) {
    FollowUpSolver solver(work, result.before, result.follow_ups);
    solver.keep_padded_vocab();
    solver.resolve_explicit_dp(result.lever);
    solver.keep_global_batch(result.lever);
    solver.keep_local_batch_dividing(result.lever);
  }
  result.after = work.plan();
  if (!target.plan_key && result.after.gbs != result.before.gbs) {
    throw InputError({config_path_, 0, 0}, lever_or_key,
                     "the edit would change the global batch from " + std::to_string(result.before.gbs) + " to " +
                         std::to_string(result.after.gbs) + " samples");
  }
  check_new_violations(work, before_violations);
  result.after.world_source = result.before.world_source;
  work.hardware_ = hardware_;
  *this = std::move(work);
  return result;
}

}  // namespace attune::recipe
