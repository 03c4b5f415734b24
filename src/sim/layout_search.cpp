#include "attune/sim/layout_search.h"

#include <algorithm>
#include <functional>

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

int count_changes(const Workload& a, const Workload& b) {
  const auto& p = a.plan;
  const auto& q = b.plan;
  const auto& k = a.knobs;
  const auto& l = b.knobs;
  return (p.tp != q.tp) + (p.pp != q.pp) + (p.vp != q.vp) + (p.cp != q.cp) + (p.ep != q.ep) + (p.mbs != q.mbs) +
         (k.recompute_granularity != l.recompute_granularity) + (k.sequence_parallel != l.sequence_parallel) +
         (k.distributed_optimizer != l.distributed_optimizer) + (k.overlap_grad_reduce != l.overlap_grad_reduce) +
         (k.overlap_param_gather != l.overlap_param_gather) + (k.tp_comm_overlap != l.tp_comm_overlap) +
         (k.cuda_graphs != l.cuda_graphs) + (k.moe_dispatcher != l.moe_dispatcher) + (k.fp8 != l.fp8);
}

double score(const RankedWorkload& r) { return r.prediction.tokens_per_s_per_gpu * (1 - kCostPerChange * r.changes); }

// Keeps the `keep` best by score in a min-heap (worst on top).
class TopK {
 public:
  explicit TopK(std::size_t keep) : keep_(std::max<std::size_t>(1, keep)) {}

  bool would_keep(double s) const { return heap_.size() < keep_ || s > score(heap_.front()); }

  void offer(RankedWorkload r) {
    heap_.push_back(std::move(r));
    std::push_heap(heap_.begin(), heap_.end(), worse_first);
    if (heap_.size() > keep_) {
      std::pop_heap(heap_.begin(), heap_.end(), worse_first);
      heap_.pop_back();
    }
  }

  std::vector<RankedWorkload> sorted() && {
    std::sort(heap_.begin(), heap_.end(), [](const auto& a, const auto& b) { return score(a) > score(b); });
    return std::move(heap_);
  }

 private:
  static bool worse_first(const RankedWorkload& a, const RankedWorkload& b) { return score(a) > score(b); }
  std::size_t keep_;
  std::vector<RankedWorkload> heap_;
};

// The layouts: every (tp, pp, vp, cp, ep, mbs) that divides the world, the
// model and the global batch.
struct Layout {
  int tp, pp, vp, cp, ep, mbs;
};

std::vector<Layout> legal_layouts(const Workload& base, const SearchSpace& s) {
  const auto& m = base.model;
  const auto& b = base.plan;
  const int world = b.world;
  const int node = std::max(1, b.gpus_per_node);
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
        for (int vp : vps) {
          if (pp > 1 && m.layers % (pp * vp) != 0) continue;
          for (int ep : eps) {
            if ((tp * cp * dp) % ep != 0) continue;
            for (int mbs : values(s.mbs, powers_of_two_up_to(s.max_mbs), b.mbs, s.refused_mbs)) {
              if (b.gbs % (static_cast<long long>(mbs) * dp) != 0) continue;
              out.push_back({tp, pp, vp, cp, ep, mbs});
            }
          }
        }
      }
    }
  }
  return out;
}

// The lever settings tried on every layout; dimensions that cannot matter
// for it (sequence parallel without TP) keep the base value.
void for_each_setting(const Workload& base, const SearchSpace& s, Workload& w,
                      const std::function<void()>& visit) {
  const auto& k = base.knobs;
  const bool tp = w.plan.tp > 1;
  const bool moe = w.model.is_moe() && w.plan.ep > 1;
  std::vector<std::string> recomputes = {k.recompute_granularity};
  if (s.recompute) {
    for (const std::string r : {"none", "selective", "full"}) {
      if (r != k.recompute_granularity && !contains_value(s.refused_recompute, r)) recomputes.push_back(r);
    }
  }
  std::vector<std::string> dispatchers = {k.moe_dispatcher};
  if (s.moe_dispatcher && moe) dispatchers.push_back(k.moe_dispatcher == "deepep" ? "alltoall" : "deepep");
  for (const auto& rc : recomputes) {
    w.knobs.recompute_granularity = rc;
    w.knobs.recompute_num_layers = rc == k.recompute_granularity ? k.recompute_num_layers : 0;
    w.plan.recompute = rc;
    for (bool sp : toggles(s.sequence_parallel && tp, k.sequence_parallel)) {
      w.knobs.sequence_parallel = sp;
      for (bool tco : toggles(s.tp_comm_overlap && tp && sp, k.tp_comm_overlap)) {
        w.knobs.tp_comm_overlap = tco && sp;
        for (bool dopt : toggles(s.distributed_optimizer && k.zero_stage == 0, k.distributed_optimizer)) {
          w.knobs.distributed_optimizer = dopt;
          for (bool ogr : toggles(s.overlap_grad_reduce, k.overlap_grad_reduce)) {
            w.knobs.overlap_grad_reduce = ogr;
            for (bool opg : toggles(s.overlap_param_gather && (dopt || k.zero_stage > 0), k.overlap_param_gather)) {
              w.knobs.overlap_param_gather = opg;
              for (bool cg : toggles(s.cuda_graphs, k.cuda_graphs)) {
                w.knobs.cuda_graphs = cg;
                for (bool fp8 : toggles(s.fp8 && !k.fp8, k.fp8)) {
                  w.knobs.fp8 = fp8;
                  for (const auto& d : dispatchers) {
                    w.knobs.moe_dispatcher = d;
                    visit();
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

SearchResult search_layouts(const Workload& base, const SearchSpace& space, const Perturbation& pert,
                            std::size_t keep) {
  SearchResult result;
  TopK top(keep);
  Workload w = base;
  for (const Layout& l : legal_layouts(base, space)) {
    w.plan.tp = l.tp;
    w.plan.pp = l.pp;
    w.plan.vp = l.vp;
    w.plan.cp = l.cp;
    w.plan.ep = l.ep;
    w.plan.mbs = l.mbs;
    // Megatron's expert TP follows TP unless the recipe sets it.
    if (base.plan.etp == base.plan.tp) w.plan.etp = l.tp;
    w.plan.dp = w.plan.world / (l.tp * l.pp * l.cp);
    w.plan.grad_accum = w.plan.gbs / (static_cast<long long>(l.mbs) * w.plan.dp);
    if (w.plan.dp_shard > 0) w.plan.dp_shard = w.plan.dp;
    for_each_setting(base, space, w, [&] {
      ++result.searched;
      RankedWorkload r;
      r.prediction = predict(w, pert, Detail::Numbers);
      if (!r.prediction.ok) return;
      r.changes = count_changes(w, base);
      if (!top.would_keep(score(r))) return;
      r.workload = w;
      top.offer(std::move(r));
    });
  }
  result.best = std::move(top).sorted();
  return result;
}

}  // namespace attune::sim
