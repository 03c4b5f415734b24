#include "attune/sim/layout_search.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>

namespace attune::sim {

namespace {

constexpr double kCostPerChange = 0.001;  // a change must gain 0.1% to be worth making

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> v;
  for (int x = 1; x <= limit; x *= 2) v.push_back(x);
  return v;
}

std::vector<int> divisors_up_to(int n, int limit) {
  std::vector<int> v;
  for (int x = 1; x <= std::min(n, limit); ++x) {
    if (n % x == 0) v.push_back(x);
  }
  return v;
}

template <typename T>
bool contains_value(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Values of one dimension: the candidates the gate does not refuse when it
// may change, else the base value.
std::vector<int> values(bool searched, std::vector<int> candidates, int base, const std::vector<int>& refused = {}) {
  if (!searched) return {base};
  std::erase_if(candidates, [&](int v) { return v != base && contains_value(refused, v); });
  if (!contains_value(candidates, base)) candidates.push_back(base);
  return candidates;
}

std::vector<bool> toggles(bool searched, bool base) {
  if (!searched) return {base};
  return {base, !base};
}

// Keeps the `keep` best by score in a min-heap (worst on top).
class TopK {
 public:
  explicit TopK(std::size_t keep) : keep_(std::max<std::size_t>(1, keep)) {}

  // The score a candidate must beat to be kept (-inf while there is room).
  double threshold() const {
    return heap_.size() < keep_ ? -std::numeric_limits<double>::infinity() : heap_.front().score;
  }

  void offer(RankedWorkload r, double score) {
    heap_.push_back({std::move(r), score, next_order_++});
    std::push_heap(heap_.begin(), heap_.end(), worse_first);
    if (heap_.size() > keep_) {
      std::pop_heap(heap_.begin(), heap_.end(), worse_first);
      heap_.pop_back();
    }
  }

  std::vector<RankedWorkload> sorted() && {
    // Ties go to the setting found first (fewer, simpler changes come first).
    std::stable_sort(heap_.begin(), heap_.end(), [](const Entry& a, const Entry& b) {
      return a.score > b.score || (a.score == b.score && a.order < b.order);
    });
    std::vector<RankedWorkload> out;
    for (auto& e : heap_) out.push_back(std::move(e.workload));
    return out;
  }

 private:
  struct Entry {
    RankedWorkload workload;
    double score;
    long long order;
  };
  static bool worse_first(const Entry& a, const Entry& b) {
    return a.score > b.score || (a.score == b.score && a.order < b.order);
  }
  std::size_t keep_;
  long long next_order_ = 0;
  std::vector<Entry> heap_;
};

// ---------------------------------------------------------------- cores

struct Layout {
  int tp, pp, vp, cp, ep, etp, mbs;
};

std::vector<Layout> legal_layouts(const Workload& base, const SearchSpace& s) {
  const auto& m = base.model;
  const auto& b = base.plan;
  const int world = b.world;
  const int node = std::max(1, b.gpus_per_node);
  const bool etp_follows_tp = b.etp == b.tp;
  std::vector<Layout> out;
  for (int tp : values(s.tp, powers_of_two_up_to(node), b.tp, s.refused_tp)) {
    if (world % tp != 0 || (m.heads > 0 && m.heads % tp != 0)) continue;
    for (int pp : values(s.pp, divisors_up_to(m.layers, s.max_pp), b.pp, s.refused_pp)) {
      if (world % (tp * pp) != 0) continue;
      for (int cp : values(s.cp, powers_of_two_up_to(s.max_cp), b.cp, s.refused_cp)) {
        if (world % (tp * pp * cp) != 0 || b.seq_len % (2 * cp) != 0) continue;
        if (cp > 1 && cp != b.cp && b.seq_len / cp < 1024) continue;  // shards too thin to be worth a ring
        const int dp = world / (tp * pp * cp);
        const std::vector<int> vps = pp > 1 ? values(s.vp, divisors_up_to(m.layers / pp, s.max_vp), b.vp, s.refused_vp) : std::vector<int>{1};
        const std::vector<int> eps = m.is_moe() ? values(s.ep, divisors_up_to(m.experts, tp * cp * dp), b.ep, s.refused_ep) : std::vector<int>{1};
        // Expert TP: Megatron's follows TP unless set; the search tries 1 and TP.
        std::vector<int> etps = {etp_follows_tp ? tp : b.etp};
        if (s.etp && m.is_moe()) {
          for (int e : {1, tp}) {
            if (!contains_value(etps, e)) etps.push_back(e);
          }
        }
        for (int vp : vps) {
          if (pp > 1 && m.layers % (pp * vp) != 0) continue;
          for (int ep : eps) {
            for (int etp : etps) {
              if ((static_cast<long long>(tp) * cp * dp) % (static_cast<long long>(ep) * etp) != 0) continue;
              if (s.mbs_follows_dp) {
                if (b.gbs % dp == 0 && b.gbs / dp <= 1LL << 20) out.push_back({tp, pp, vp, cp, ep, etp, static_cast<int>(b.gbs / dp)});
                continue;
              }
              for (int mbs : values(s.mbs, powers_of_two_up_to(s.max_mbs), b.mbs, s.refused_mbs)) {
                if (b.gbs % (static_cast<long long>(mbs) * dp) != 0) continue;
                out.push_back({tp, pp, vp, cp, ep, etp, mbs});
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// A layout and its structural levers: indices into the space's lists.
struct Core {
  Layout layout;
  std::uint8_t recompute = 0, offload = 0, zero = 0;
  bool sp = false, dopt = false, reshard = false, fp8 = false;
  double bound = 0;  // the best score any of its choice settings can reach
  int changes = 0;
};

template <typename T>
std::vector<T> or_base(const std::vector<T>& list, const T& base) {
  return list.empty() ? std::vector<T>{base} : list;
}

void apply_layout(const Workload& base, const SearchSpace& s, const Layout& l, Workload& w) {
  w.plan.tp = l.tp;
  w.plan.pp = l.pp;
  w.plan.vp = l.vp;
  w.plan.cp = l.cp;
  w.plan.ep = l.ep;
  w.plan.etp = l.etp;
  w.plan.mbs = l.mbs;
  w.plan.dp = w.plan.world / (l.tp * l.pp * l.cp);
  w.plan.grad_accum = w.plan.gbs / (static_cast<long long>(l.mbs) * w.plan.dp);
  // The sharding group keeps the base's replica count (HSDP: dp_replicate x
  // dp_shard); where expert parallelism takes a dimension of the DP mesh,
  // the shard group is what EP leaves of it.
  if (base.plan.dp_shard > 0) {
    const int ep = s.shard_excludes_ep ? std::max(1, base.plan.ep) : 1;
    const int replicas = std::max(1, base.plan.dp / (base.plan.dp_shard * ep));
    const int new_ep = s.shard_excludes_ep ? std::max(1, l.ep) : 1;
    w.plan.dp_shard = std::max(1, w.plan.dp / (replicas * new_ep));
  }
}

struct Lists {
  std::vector<RecomputeSetting> recompute;
  std::vector<int> offload, zero;
};

// Sets every field a core varies (`w` starts as a copy of the base).
void apply_core(const Workload& base, const SearchSpace& s, const Lists& lists, const Core& c, Workload& w) {
  apply_layout(base, s, c.layout, w);
  apply(lists.recompute[c.recompute], w);
  w.knobs.offload_layers = lists.offload[c.offload];
  w.knobs.zero_stage = lists.zero[c.zero];
  // No sharding, no sharding group; full sharding needs one.
  if (w.knobs.zero_stage == 0) w.plan.dp_shard = 0;
  else if (w.knobs.zero_stage >= 3 && w.plan.dp_shard <= 0) w.plan.dp_shard = w.plan.dp;
  w.knobs.sequence_parallel = c.sp;
  w.knobs.distributed_optimizer = c.dopt;
  w.knobs.reshard_after_forward = c.reshard;
  w.knobs.fp8 = c.fp8;
}

// Every structural setting of a layout; levers that cannot matter for it
// (sequence parallel without TP) keep the base value.
void for_each_core(const Workload& base, const SearchSpace& s, const Lists& lists, const Layout& l,
                   const std::function<void(Core&)>& visit) {
  const auto& k = base.knobs;
  const bool tp = l.tp > 1;
  Core c;
  c.layout = l;
  for (std::uint8_t rc = 0; rc < lists.recompute.size(); ++rc) {
    c.recompute = rc;
    for (std::uint8_t off = 0; off < lists.offload.size(); ++off) {
      c.offload = off;
      for (std::uint8_t z = 0; z < lists.zero.size(); ++z) {
        c.zero = z;
        const int zero = lists.zero[z];
        for (bool sp : toggles(s.sequence_parallel && tp, k.sequence_parallel)) {
          c.sp = sp;
          for (bool dopt : toggles(s.distributed_optimizer && zero == 0, k.distributed_optimizer)) {
            c.dopt = dopt;
            for (bool rs : toggles(s.reshard_after_forward && zero >= 3, k.reshard_after_forward)) {
              c.reshard = rs;
              for (bool fp8 : toggles(s.fp8 && !k.fp8, k.fp8)) {
                c.fp8 = fp8;
                visit(c);
              }
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- choices

class ChoiceSearch {
 public:
  ChoiceSearch(const Workload& base, const SearchSpace& space, const Perturbation& pert, TopK& top, SearchResult& result)
      : base_(base), pert_(pert), top_(top), result_(result) {
    for (std::size_t c = 0; c < kChoiceCount; ++c) {
      domain_[c] = space.choices[c] | (1u << base.knobs.choices[c]);
      if (std::popcount(domain_[c]) > 1) active_.push_back(static_cast<std::uint8_t>(c));
    }
  }

  const std::array<std::uint32_t, kChoiceCount>& domain() const { return domain_; }

  long long settings_per_core() const {
    long long n = 1;
    for (std::uint8_t c : active_) n *= std::popcount(domain_[c]);
    return n;
  }

  // The bound of a core with none of its choices fixed.
  double root_bound(const StepParts& parts, const Workload& w, int core_changes, double safe_gib) const {
    return bound(parts, w.knobs.choices, 0, core_changes, safe_gib);
  }

  void explore(const StepParts& parts, Workload& w, int core_changes, double safe_gib) {
    parts_ = &parts;
    safe_gib_ = safe_gib;
    descend(w, 0, 0, core_changes);
  }

 private:
  double bound(const StepParts& parts, const std::array<std::uint8_t, kChoiceCount>& choices, std::uint32_t fixed,
               int changes, double safe_gib) const {
    const TermValues f = best_factors(parts.effects, choices, fixed, domain_);
    if (combine_memory(parts, f) > safe_gib) return -std::numeric_limits<double>::infinity();
    const double step = combine_step(parts, f);
    return search_score(parts.tokens_per_step / (step * parts.world), changes);
  }

  void descend(Workload& w, std::size_t depth, std::uint32_t fixed, int changes) {
    if (depth == active_.size()) {
      leaf(w, changes);
      return;
    }
    const std::uint8_t c = active_[depth];
    const std::uint8_t own = base_.knobs.choices[c];
    for (std::uint8_t v = 0; v < 32; ++v) {
      if (!((domain_[c] >> v) & 1u)) continue;
      w.knobs.choices[c] = v;
      const int n = changes + (v != own);
      const std::uint32_t now = fixed | (1u << c);
      if (depth + 1 < active_.size() && bound(*parts_, w.knobs.choices, now, n, safe_gib_) <= top_.threshold()) continue;
      descend(w, depth + 1, now, n);
    }
    w.knobs.choices[c] = own;
  }

  void leaf(const Workload& w, int changes) {
    ++result_.evaluated;
    if (failure_for(*parts_, w.knobs.choices)) return;
    const TermValues f = factors_for(parts_->effects, w.knobs.choices);
    if (combine_memory(*parts_, f) > safe_gib_) return;
    const double step = combine_step(*parts_, f);
    const double score = search_score(parts_->tokens_per_step / (step * parts_->world), changes);
    if (score <= top_.threshold()) return;
    RankedWorkload r;
    r.workload = w;
    r.prediction = predict_from_parts(w, *parts_, pert_, Detail::Numbers);
    r.changes = changes;
    top_.offer(std::move(r), score);
  }

  const Workload& base_;
  const Perturbation& pert_;
  TopK& top_;
  SearchResult& result_;
  std::array<std::uint32_t, kChoiceCount> domain_{};
  std::vector<std::uint8_t> active_;
  const StepParts* parts_ = nullptr;
  double safe_gib_ = 0;
};

bool valid_layout(const Workload& w) {
  const auto& p = w.plan;
  const auto& m = w.model;
  if (p.world % (p.tp * p.pp * p.cp) != 0 || (m.heads > 0 && m.heads % p.tp != 0)) return false;
  if (m.layers % p.pp != 0 || (p.pp > 1 && m.layers % (p.pp * p.vp) != 0) || (p.pp == 1 && p.vp != 1)) return false;
  if (p.seq_len % (2 * p.cp) != 0 || (m.is_moe() && m.experts % p.ep != 0)) return false;
  const int dp = p.world / (p.tp * p.pp * p.cp);
  if ((static_cast<long long>(p.tp) * p.cp * dp) % (static_cast<long long>(p.ep) * std::max(1, p.etp)) != 0) return false;
  return p.gbs % (static_cast<long long>(p.mbs) * dp) == 0;
}

}  // namespace

std::vector<Workload> one_lever_moves(const Workload& from, const Workload& base, const SearchSpace& s) {
  std::vector<Workload> out;
  const auto& b = base.plan;
  const int node = std::max(1, b.gpus_per_node);
  const bool etp_follows_tp = b.etp == b.tp && !s.etp;
  auto layout_move = [&](int recipe::Plan::*field, const std::vector<int>& candidates) {
    for (int v : candidates) {
      if (v == from.plan.*field) continue;
      recipe::Plan p = from.plan;
      p.*field = v;
      if (p.pp == 1) p.vp = 1;
      if (etp_follows_tp) p.etp = p.tp;
      const auto& f = from.plan;
      if (p.tp == f.tp && p.pp == f.pp && p.vp == f.vp && p.cp == f.cp && p.ep == f.ep && p.etp == f.etp &&
          p.mbs == f.mbs)
        continue;  // a virtual stage without a pipeline: no move
      const long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
      if (mp <= 0 || p.world % mp != 0) continue;
      if (s.mbs_follows_dp) {
        const long long dp = p.world / mp;
        if (p.gbs % dp != 0) continue;
        p.mbs = static_cast<int>(p.gbs / dp);
      }
      Workload w = from;
      apply_layout(base, s, {p.tp, p.pp, p.vp, p.cp, p.ep, p.etp, p.mbs}, w);
      if (valid_layout(w)) out.push_back(std::move(w));
    }
  };
  layout_move(&recipe::Plan::tp, values(s.tp, powers_of_two_up_to(node), b.tp, s.refused_tp));
  layout_move(&recipe::Plan::pp, values(s.pp, divisors_up_to(base.model.layers, s.max_pp), b.pp, s.refused_pp));
  layout_move(&recipe::Plan::vp, values(s.vp, divisors_up_to(std::max(1, base.model.layers / std::max(1, from.plan.pp)), s.max_vp), b.vp, s.refused_vp));
  layout_move(&recipe::Plan::cp, values(s.cp, powers_of_two_up_to(s.max_cp), b.cp, s.refused_cp));
  if (base.model.is_moe()) {
    layout_move(&recipe::Plan::ep, values(s.ep, divisors_up_to(base.model.experts, b.world), b.ep, s.refused_ep));
    if (s.etp) layout_move(&recipe::Plan::etp, {1, from.plan.tp});
  }
  if (!s.mbs_follows_dp) layout_move(&recipe::Plan::mbs, values(s.mbs, powers_of_two_up_to(s.max_mbs), b.mbs, s.refused_mbs));
  for (const RecomputeSetting& r : s.recompute) {
    if (r == recompute_of(from.knobs)) continue;
    Workload w = from;
    apply(r, w);
    out.push_back(std::move(w));
  }
  auto list_move = [&](int Knobs::*field, const std::vector<int>& list) {
    for (int v : list) {
      if (v == from.knobs.*field) continue;
      Workload w = from;
      w.knobs.*field = v;
      out.push_back(std::move(w));
    }
  };
  list_move(&Knobs::offload_layers, s.offload_layers);
  list_move(&Knobs::zero_stage, s.zero_stage);
  auto flip = [&](bool searched, bool Knobs::*field) {
    if (!searched) return;
    Workload w = from;
    w.knobs.*field = !(w.knobs.*field);
    out.push_back(std::move(w));
  };
  const bool tp = from.plan.tp > 1;
  flip(s.sequence_parallel && tp, &Knobs::sequence_parallel);
  flip(s.distributed_optimizer && from.knobs.zero_stage == 0, &Knobs::distributed_optimizer);
  flip(s.reshard_after_forward && from.knobs.zero_stage >= 3, &Knobs::reshard_after_forward);
  flip(s.fp8, &Knobs::fp8);
  for (std::size_t c = 0; c < kChoiceCount; ++c) {
    const std::uint32_t domain = s.choices[c] | (1u << base.knobs.choices[c]);
    for (std::uint8_t v = 0; v < 32; ++v) {
      if (!((domain >> v) & 1u) || v == from.knobs.choices[c]) continue;
      Workload w = from;
      w.knobs.choices[c] = v;
      out.push_back(std::move(w));
    }
  }
  return out;
}

double search_score(double tokens_per_s_per_gpu, int changes) {
  return tokens_per_s_per_gpu * (1 - kCostPerChange * changes);
}

SearchSpace every_setting(const Workload& base) {
  SearchSpace s;
  s.etp = base.model.is_moe();
  s.reshard_after_forward = base.knobs.zero_stage >= 3;
  using namespace recompute_module;
  const RecomputeSetting own = recompute_of(base.knobs);
  s.recompute = {own};
  for (RecomputeSetting r : {RecomputeSetting{"none", 0, kCoreAttn}, RecomputeSetting{"selective", 0, kCoreAttn},
                             RecomputeSetting{"selective", 0, kCoreAttn | kMlp}, RecomputeSetting{"full", 0, kCoreAttn}}) {
    if (!(r == own)) s.recompute.push_back(r);
  }
  s.offload_layers = {base.knobs.offload_layers};
  if (base.knobs.offload_layers != 0) s.offload_layers.push_back(0);
  s.zero_stage = {base.knobs.zero_stage};
  for (std::size_t c = 0; c < kChoiceCount; ++c) {
    s.choices[c] = (1u << choice_values(static_cast<Choice>(c)).size()) - 1;
  }
  return s;
}

SearchSpace search_space(const SpellableLevers& l) {
  SearchSpace s;
  s.recompute = l.recompute;
  s.offload_layers = l.offload_layers;
  s.zero_stage = l.zero_stage;
  s.sequence_parallel = l.sequence_parallel;
  s.distributed_optimizer = l.distributed_optimizer;
  s.reshard_after_forward = l.reshard_after_forward;
  s.fp8 = l.fp8;
  s.etp = l.etp;
  s.choices = l.choices;
  return s;
}

SearchResult search_layouts(const Workload& base, const SearchSpace& space, const Perturbation& pert, std::size_t keep) {
  SearchResult result;
  TopK top(keep);
  Lists lists{or_base(space.recompute, recompute_of(base.knobs)), or_base(space.offload_layers, base.knobs.offload_layers),
              or_base(space.zero_stage, base.knobs.zero_stage)};
  ChoiceSearch choices(base, space, pert, top, result);
  const long long per_core = choices.settings_per_core();

  // Pass 1: every core's bound.
  std::vector<Core> cores;
  Workload w = base;
  StepParts parts;
  for (const Layout& l : legal_layouts(base, space)) {
    for_each_core(base, space, lists, l, [&](Core& c) {
      apply_core(base, space, lists, c, w);
      step_parts(w, pert, false, parts);
      if (!parts.failure.empty()) return;
      ++result.cores;
      result.settings += per_core;
      c.changes = changed_dimensions(w, base);
      c.bound = choices.root_bound(parts, w, c.changes, risk_free_gib(parts.hbm_gib, pert.memory_risk));
      if (c.bound > -std::numeric_limits<double>::infinity()) cores.push_back(c);
    });
  }
  // Pass 2: best bound first, until no bound beats what is kept.
  std::stable_sort(cores.begin(), cores.end(), [](const Core& a, const Core& b) { return a.bound > b.bound; });
  for (const Core& c : cores) {
    if (c.bound <= top.threshold()) break;
    apply_core(base, space, lists, c, w);
    step_parts(w, pert, false, parts);
    choices.explore(parts, w, c.changes, risk_free_gib(parts.hbm_gib, pert.memory_risk));
  }
  result.best = std::move(top).sorted();
  return result;
}

}  // namespace attune::sim
