// The validity rules that hold across frameworks (world divisible by
// TP·PP·CP, heads by TP, layers by PP, experts by EP, the global batch by
// micro batch · DP, ...); each adapter adds its own in framework_rules().
#include <string>

#include "attune/recipe/adapter.h"
#include "attune/recipe/recipe.h"

namespace attune::recipe {

namespace {

class RuleSink {
 public:
  RuleSink(const Recipe& recipe, std::vector<RuleViolation>& out) : recipe_(recipe), out_(out) {}

  // Records a violation of `rule` unless `ok`; `lever` names the key to show.
  void require(bool ok, const std::string& rule, const std::string& lever, const std::string& message,
               bool error = true) {
    if (ok) return;
    std::string key = recipe_.key_of(lever);
    out_.push_back({rule, key.empty() ? lever : key, message, error});
  }

 private:
  const Recipe& recipe_;
  std::vector<RuleViolation>& out_;
};

std::string s(long long v) { return std::to_string(v); }

bool megatron_family(Framework f) {
  return f == Framework::Megatron || f == Framework::Bridge || f == Framework::AutoModel ||
         f == Framework::HyperPod;
}

void positive_rules(RuleSink& r, const Plan& p) {
  const std::pair<const char*, long long> sizes[] = {{"tp", p.tp}, {"pp", p.pp}, {"vp", p.vp}, {"cp", p.cp},
                                                     {"ep", p.ep}, {"etp", p.etp}, {"mbs", p.mbs}};
  for (const auto& [name, v] : sizes) {
    r.require(v >= 1, "positive-size", name, std::string(name) + " must be >= 1, got " + s(v));
  }
}

void world_rules(RuleSink& r, const Recipe& recipe, const Plan& p) {
  Framework f = recipe.framework();
  if (f == Framework::Torchtitan || f == Framework::Axolotl || recipe.dialect() == "smp") return;
  long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
  r.require(mp > 0 && p.world % mp == 0, "world-divisible", "tp",
            "world size " + s(p.world) + " must be divisible by tp*pp*cp = " + s(mp));
  if (p.ep > 1 && megatron_family(f)) {
    long long emp = static_cast<long long>(p.etp) * p.ep * p.pp;
    r.require(p.world % emp == 0, "moe-world-divisible", "ep",
              "world size " + s(p.world) + " must be divisible by etp*ep*pp = " + s(emp));
  }
}

void batch_rules(RuleSink& r, const Recipe& recipe, const Plan& p) {
  BatchRule rule = recipe.adapter().batch_rule(recipe);
  if (rule != BatchRule::Explicit && rule != BatchRule::Torchtitan) return;
  long long per_step = static_cast<long long>(p.mbs) * p.dp;
  if (!p.batch_phases.empty()) {
    // Megatron asserts each phase's batch divides into micro-batches when it starts.
    for (long long b : p.batch_phases) {
      if (per_step > 0 && b % per_step == 0) continue;
      r.require(false, "batch-schedule-divisible", "mbs",
                "the batch schedule's phase of " + s(b) + " samples must be divisible by mbs*dp = " + s(p.mbs) + "*" +
                    s(p.dp) + " = " + s(per_step));
      return;
    }
    return;
  }
  r.require(per_step > 0 && p.gbs % per_step == 0, "gbs-divisible", "gbs",
            "global batch " + s(p.gbs) + " must be divisible by mbs*dp = " + s(p.mbs) + "*" + s(p.dp) + " = " +
                s(per_step));
}

void model_rules(RuleSink& r, const Recipe& recipe, const Plan& p) {
  if (!recipe.model()) return;
  const ModelSpec& m = *recipe.model();
  if (m.heads > 0) {
    r.require(m.heads % p.tp == 0, "heads-divisible-by-tp", "tp",
              "num_attention_heads " + s(m.heads) + " must be divisible by tp " + s(p.tp));
  }
  if (m.kv_heads > 0 && p.tp > 1) {
    r.require(m.kv_heads % p.tp == 0 || p.tp % m.kv_heads == 0, "kv-heads-tp", "tp",
              "num_query_groups " + s(m.kv_heads) + " must be a multiple or a divisor of tp " + s(p.tp));
  }
  // AutoModel splits the layers over the stages itself, unevenly when it must
  // (its DeepSeek-V3 recipe runs 61 layers on pp 4).
  if (m.layers > 0 && recipe.framework() != Framework::Axolotl && recipe.framework() != Framework::AutoModel) {
    bool uneven = recipe.find("--decoder-first-pipeline-num-layers") ||
                  recipe.find("--decoder-last-pipeline-num-layers") ||
                  recipe.find("--pipeline-model-parallel-layout");
    r.require(uneven || m.layers % p.pp == 0, "layers-divisible-by-pp", "pp",
              "num_layers " + s(m.layers) + " must be divisible by pp " + s(p.pp));
    if (p.vp > 1 && m.layers % p.pp == 0) {
      r.require(uneven || (m.layers / p.pp) % p.vp == 0, "layers-divisible-by-vp", "vp",
                "layers per pipeline stage " + s(m.layers / p.pp) + " must be divisible by vp " + s(p.vp));
    }
  }
  if (p.ep > 1) {
    r.require(m.experts > 0, "ep-needs-moe", "ep", "ep " + s(p.ep) + " > 1 needs a mixture-of-experts model");
    if (m.experts > 0) {
      r.require(m.experts % p.ep == 0, "experts-divisible-by-ep", "ep",
                "num_experts " + s(m.experts) + " must be divisible by ep " + s(p.ep));
    }
  }
}

void sequence_rules(RuleSink& r, const Recipe& recipe, const Plan& p) {
  if (p.seq_len <= 0) return;
  if (recipe.framework() == Framework::Torchtitan) {
    long long need = p.cp > 1 ? 2LL * p.cp * p.tp : p.tp;
    r.require(p.seq_len % need == 0, "seq-divisible-by-cp", "cp",
              "seq_len " + s(p.seq_len) + " must be divisible by " + (p.cp > 1 ? "tp*2*cp = " : "tp = ") + s(need));
    return;
  }
  if (p.cp > 1) {
    r.require(p.seq_len % (2LL * p.cp) == 0, "seq-divisible-by-cp", "cp",
              "seq_length " + s(p.seq_len) + " must be divisible by 2*cp = " + s(2LL * p.cp));
  }
}

void pipeline_rules(RuleSink& r, const Plan& p) {
  r.require(p.vp <= 1 || p.pp > 1, "vp-needs-pp", "vp",
            "virtual pipeline stages (vp " + s(p.vp) + ") need pp > 1");
}

}  // namespace

std::vector<RuleViolation> Adapter::validate(const Recipe& recipe, const Plan& plan) const {
  std::vector<RuleViolation> out;
  RuleSink sink(recipe, out);
  if (!plan.unknown.empty()) {
    // The numbers standing in for what only the run knows would make every
    // rule's answer up: none is checked, and the gate keeps the layout as it is.
    sink.require(false, "unknown-layout", plan.unknown.begin()->first,
                 plan.unknown_text() + " known only at run time: the validity rules are not checked", false);
    return out;
  }
  positive_rules(sink, plan);
  if (has_errors(out)) return out;  // the arithmetic below assumes positive sizes
  world_rules(sink, recipe, plan);
  batch_rules(sink, recipe, plan);
  model_rules(sink, recipe, plan);
  sequence_rules(sink, recipe, plan);
  pipeline_rules(sink, plan);
  framework_rules(recipe, plan, out);
  return out;
}

}  // namespace attune::recipe
