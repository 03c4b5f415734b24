#include "attune/sim/effects.h"

#include <algorithm>
#include <cmath>

#include "attune/sim/gpu_system.h"
#include "attune/sim/workload.h"

namespace attune::sim {

namespace {

constexpr std::array<std::string_view, kTermCount> kTermNames = {
    "gemm",         "expert_gemm",    "attention",     "memory_bound",      "launch",       "recompute",
    "tp_comm",      "tp_hide",        "cp_comm",       "cp_hide",           "ep_comm",      "offload",
    "dp_comm",      "dp_tail",        "dp_hide",       "dp_reduce_hide",    "dp_gather_hide", "pp_comm",           "bubble",       "optimizer",
    "data",         "other",          "step",          "memory_states",     "memory_activations",
    "memory_transient", "memory_fragmentation", "memory_overhead", "memory_graphs", "memory_buffers",
    "memory_scores", "memory",
};

constexpr std::array<std::string_view, kPropertyCount - kChoiceCount> kPropertyNames = {
    "tp",          "pp",        "vp",           "cp",         "ep",
    "etp",         "dp",        "mbs",          "micro_batches", "nodes",
    "world",       "recompute", "recompute_layers", "sequence_parallel", "distributed_optimizer",
    "zero_stage",  "reshard_after_forward", "fp8", "offload", "ep_nodes",     "cross_node_dp", "moe",
};

long long ep_nodes(const Workload& w) {
  const recipe::Plan& p = w.plan;
  const int per_node = std::max(1, p.gpus_per_node > 0 ? p.gpus_per_node : 8);
  const long long span = static_cast<long long>(std::max(1, p.etp)) * std::max(1, p.ep);
  return std::max(1LL, (span + per_node - 1) / per_node);
}

}  // namespace

std::string_view term_name(Term t) { return kTermNames[static_cast<std::size_t>(t)]; }

std::optional<Term> term_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kTermCount; ++i) {
    if (kTermNames[i] == name) return static_cast<Term>(i);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& term_names() {
  static const std::vector<std::string_view> v(kTermNames.begin(), kTermNames.end());
  return v;
}

bool is_benefit(Term t) {
  return t == Term::TpHide || t == Term::CpHide || t == Term::DpHide || t == Term::DpReduceHide || t == Term::DpGatherHide;
}

std::string_view property_name(Property p) {
  const auto i = static_cast<std::size_t>(p);
  return i < kChoiceCount ? choice_name(static_cast<Choice>(i)) : kPropertyNames[i - kChoiceCount];
}

std::optional<Property> property_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    if (property_name(static_cast<Property>(i)) == name) return static_cast<Property>(i);
  }
  return std::nullopt;
}

bool is_choice(Property p) { return static_cast<std::size_t>(p) < kChoiceCount; }

long long property_value(const Workload& w, Property p) {
  const recipe::Plan& l = w.plan;
  const Knobs& k = w.knobs;
  if (is_choice(p)) return k.get(static_cast<Choice>(p));
  switch (p) {
    case Property::Tp: return l.tp;
    case Property::Pp: return l.pp;
    case Property::Vp: return l.vp;
    case Property::Cp: return l.cp;
    case Property::Ep: return l.ep;
    case Property::Etp: return l.etp;
    case Property::Dp: return l.dp;
    case Property::Mbs: return l.mbs;
    case Property::Micro: return l.mbs > 0 && l.dp > 0 ? l.gbs / (static_cast<long long>(l.mbs) * l.dp) : 0;
    case Property::Nodes: return l.nodes;
    case Property::World: return l.world;
    case Property::Recompute:
      return k.recompute_granularity == "full" ? 2 : k.recompute_granularity == "selective" ? 1 : 0;
    case Property::RecomputeLayers: return k.recompute_num_layers;
    case Property::SequenceParallel: return k.sequence_parallel && l.tp > 1;
    case Property::DistributedOptimizer: return k.distributed_optimizer;
    case Property::ZeroStage: return k.zero_stage;
    case Property::ReshardAfterForward: return k.reshard_after_forward;
    case Property::Fp8: return k.fp8;
    case Property::Offload: return k.offload_layers != 0 || k.param_offload;
    case Property::EpNodes: return ep_nodes(w);
    case Property::CrossNodeDp: {
      const int per_node = std::max(1, l.gpus_per_node);
      return static_cast<long long>(l.tp) * l.cp * l.dp > per_node && l.dp > 1;
    }
    case Property::Moe: return w.model.is_moe();
    default: return 0;
  }
}

bool Condition::holds(long long v) const {
  return std::any_of(ranges.begin(), ranges.end(), [&](const Range& r) { return v >= r.lo && v <= r.hi; });
}

bool resolve(const Effect& e, const Workload& w, std::vector<ChoiceEffect>& out) {
  ChoiceEffect c;
  c.term = e.term;
  c.factor = e.factor;
  for (const Condition& cond : e.when) {
    if (!is_choice(cond.property)) {
      if (!cond.holds(property_value(w, cond.property))) return true;  // never applies here
      continue;
    }
    if (c.conditions == c.choice.size()) return false;
    std::uint32_t mask = 0;
    const auto n = choice_values(static_cast<Choice>(cond.property)).size();
    for (std::size_t v = 0; v < n; ++v) {
      if (cond.holds(static_cast<long long>(v))) mask |= 1u << v;
    }
    c.choice[c.conditions] = static_cast<std::uint8_t>(cond.property);
    c.allowed[c.conditions] = mask;
    ++c.conditions;
  }
  out.push_back(c);
  return true;
}

TermValues factors_for(const std::vector<ChoiceEffect>& effects, const std::array<std::uint8_t, kChoiceCount>& choices) {
  TermValues f;
  f.fill(1.0);
  for (const ChoiceEffect& e : effects) {
    bool on = true;
    for (std::uint8_t i = 0; i < e.conditions && on; ++i) on = (e.allowed[i] >> choices[e.choice[i]]) & 1u;
    if (on) f[static_cast<std::size_t>(e.term)] *= e.factor;
  }
  return f;
}

TermValues best_factors(const std::vector<ChoiceEffect>& effects, const std::array<std::uint8_t, kChoiceCount>& choices,
                        std::uint32_t fixed, const std::array<std::uint32_t, kChoiceCount>& domain) {
  TermValues f;
  f.fill(1.0);
  for (const ChoiceEffect& e : effects) {
    bool surely = true, maybe = true;
    if (e.conditions == 1) {  // the common case, without the loop
      const std::uint8_t c = e.choice[0];
      if ((fixed >> c) & 1u) {
        maybe = (e.allowed[0] >> choices[c]) & 1u;
      } else {
        const std::uint32_t reachable = domain[c] & e.allowed[0];
        maybe = reachable != 0;
        surely = reachable == domain[c];
      }
    } else {
      for (std::uint8_t i = 0; i < e.conditions && maybe; ++i) {
        const std::uint8_t c = e.choice[i];
        if ((fixed >> c) & 1u) {
          maybe = (e.allowed[i] >> choices[c]) & 1u;
        } else {
          const std::uint32_t reachable = domain[c] & e.allowed[i];
          maybe = reachable != 0;
          surely = surely && reachable == domain[c];
        }
      }
    }
    if (!maybe) continue;
    double& t = f[static_cast<std::size_t>(e.term)];
    if (surely) t *= e.factor;
    else if (is_benefit(e.term) ? e.factor > 1 : e.factor < 1) t *= e.factor;
  }
  return f;
}

}  // namespace attune::sim
