#include "attune/policy/model_correction.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "attune/sim/effects.h"
#include "attune/sim/recipe_levers.h"
#include "attune/sim/step_model.h"

namespace attune::policy {

namespace {

constexpr std::size_t kGroups = 5;   // compute, communication, bubble, other, offload
constexpr std::size_t kOffload = 4;  // the offload row: a sensitivity, not a share of the step
constexpr double kRidge = 0.5;       // pull towards the nominal model, per factor
// The host link is the least known term: what else shares its PCIe switch
// (NICs, storage) is a property of the cluster no datasheet states.
constexpr double kOffloadRidge = 0.02;

// The step's parts by group, and (last) how much longer the step gets when
// activation-offload transfers take twice as long. The offload transfer is
// mostly hidden behind compute, so its exposed part says nothing about how
// slow the host link is; its sensitivity does.
std::array<double, kGroups> groups_of(const sim::Workload& w, const sim::Prediction& p) {
  const sim::StepBreakdown& b = p.breakdown;
  std::array<double, kGroups> g = {b.compute_s + b.recompute_s + b.memory_bound_s,
                                   b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.dp_comm_s + b.pp_comm_s,
                                   b.bubble_s, b.optimizer_s + b.data_s + b.other_s, 0};
  double sum = 0;
  for (double v : g) sum += v;
  // The parts need not add up to the step exactly (overlaps): scale them so they do.
  if (sum > 0 && p.step_time_s > 0) {
    for (double& v : g) v *= p.step_time_s / sum;
  }
  if (w.knobs.offload_layers != 0) {
    sim::Perturbation slower;
    slower.effects.push_back({sim::Term::Offload, 2.0, {}, "sensitivity", 0});
    const sim::Prediction q = sim::predict(w, slower, sim::Detail::Numbers);
    if (q.ok) g[kOffload] = std::max(0.0, q.step_time_s - p.step_time_s);
  }
  return g;
}

// Solves A x = b (5x5) by Gaussian elimination with partial pivoting.
std::array<double, kGroups> solve(std::array<std::array<double, kGroups>, kGroups> a, std::array<double, kGroups> b) {
  for (std::size_t c = 0; c < kGroups; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < kGroups; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (std::size_t r = c + 1; r < kGroups; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < kGroups; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::array<double, kGroups> x{};
  for (std::size_t i = kGroups; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < kGroups; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

void add_group(std::vector<sim::Effect>& out, std::initializer_list<sim::Term> terms, double factor, const char* why) {
  if (std::abs(factor - 1) < 1e-9) return;
  for (sim::Term t : terms) out.push_back({t, factor, {}, why, 0});
}

// The property a dimension is read as, for conditioning an effect on it.
std::optional<sim::Property> property_of_dimension(const std::string& d) {
  using sim::Property;
  static const std::array<std::pair<const char*, Property>, 15> table = {{{"tp", Property::Tp},
                                                                          {"pp", Property::Pp},
                                                                          {"vp", Property::Vp},
                                                                          {"cp", Property::Cp},
                                                                          {"ep", Property::Ep},
                                                                          {"etp", Property::Etp},
                                                                          {"mbs", Property::Mbs},
                                                                          {"recompute", Property::Recompute},
                                                                          {"offload", Property::Offload},
                                                                          {"sharding", Property::ZeroStage},
                                                                          {"sequence_parallel", Property::SequenceParallel},
                                                                          {"distributed_optimizer", Property::DistributedOptimizer},
                                                                          {"fsdp_reshard_after_forward", Property::ReshardAfterForward},
                                                                          {"fp8", Property::Fp8},
                                                                          {"nodes", Property::Nodes}}};
  for (const auto& [name, p] : table) {
    if (d == name) return p;
  }
  if (const auto c = sim::choice_by_name(d)) return sim::property_of(*c);
  return std::nullopt;
}

// Conditions that hold where `to` differs from `from`: the values it moved to.
std::vector<sim::Condition> moved_to(const sim::Workload& from, const sim::Workload& to) {
  std::vector<sim::Condition> out;
  const auto a = sim::dimension_values(from), b = sim::dimension_values(to);
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].second == b[i].second) continue;
    const auto p = property_of_dimension(a[i].first);
    if (!p) continue;
    const long long v = sim::property_value(to, *p);
    if (std::any_of(out.begin(), out.end(), [&](const sim::Condition& c) { return c.property == *p; })) continue;
    out.push_back({*p, {{v, v}}});
  }
  return out;
}

int choice_conditions(const std::vector<sim::Condition>& cs) {
  return static_cast<int>(std::count_if(cs.begin(), cs.end(), [](const sim::Condition& c) { return sim::is_choice(c.property); }));
}

}  // namespace

sim::Perturbation ModelCorrection::perturbation() const {
  using sim::Term;
  sim::Perturbation p;
  add_group(p.effects, {Term::Gemm, Term::ExpertGemm, Term::Attention, Term::MemoryBound, Term::Launch}, compute,
            "measured compute speed");
  add_group(p.effects, {Term::TpComm, Term::CpComm, Term::EpComm, Term::DpComm, Term::DpTail, Term::PpComm},
            communication, "measured communication speed");
  add_group(p.effects, {Term::Offload}, offload, "measured activation-offload transfers");
  add_group(p.effects, {Term::Bubble}, bubble, "measured pipeline bubble");
  add_group(p.effects, {Term::Optimizer, Term::Data, Term::Other}, other, "measured per-step costs");
  add_group(p.effects, {Term::Memory}, memory, "measured peak memory");
  p.effects.insert(p.effects.end(), lever_effects.begin(), lever_effects.end());
  p.noise = {};
  return p;
}

ModelCorrection fit_correction(const std::vector<MeasuredSetting>& measured, double noise) {
  ModelCorrection c;
  std::array<std::array<double, kGroups>, kGroups> a{};
  std::array<double, kGroups> b{};
  // The factors are pulled towards 1; the offload row's unknown is the
  // factor less 1 (its feature is a sensitivity), pulled towards 0.
  for (std::size_t g = 0; g < kGroups; ++g) {
    a[g][g] = g == kOffload ? kOffloadRidge : kRidge;
    b[g] = g == kOffload ? 0 : kRidge;
  }
  std::vector<double> memory_ratios;
  for (const MeasuredSetting& m : measured) {
    if (m.oom || m.step_time_s <= 0) continue;
    const sim::Prediction p = sim::predict(m.workload, {}, sim::Detail::Numbers);
    if (!p.ok || p.step_time_s <= 0) continue;
    ++c.settings;
    std::array<double, kGroups> x = groups_of(m.workload, p);
    for (double& v : x) v /= m.step_time_s;  // rows in units of the measured step: the target is 1
    for (std::size_t i = 0; i < kGroups; ++i) {
      for (std::size_t j = 0; j < kGroups; ++j) a[i][j] += x[i] * x[j];
      b[i] += x[i];
    }
    if (m.peak_reserved_gib && p.memory.peak_reserved_gib > 0) memory_ratios.push_back(*m.peak_reserved_gib / p.memory.peak_reserved_gib);
  }
  if (c.settings > 0) {
    const auto f = solve(a, b);
    auto clamp = [](double v) { return std::isfinite(v) ? std::clamp(v, 0.3, 3.0) : 1.0; };
    c.compute = clamp(f[0]);
    c.communication = clamp(f[1]);
    c.bubble = clamp(f[2]);
    c.other = clamp(f[3]);
    c.offload = std::isfinite(f[kOffload]) ? std::clamp(1 + f[kOffload], 1.0, 5.0) : 1.0;
  }
  if (!memory_ratios.empty()) {
    std::nth_element(memory_ratios.begin(), memory_ratios.begin() + memory_ratios.size() / 2, memory_ratios.end());
    c.memory = std::clamp(memory_ratios[memory_ratios.size() / 2], 0.7, 1.5);
  }
  // Lever effects, in trial order: each residual is taken against the
  // correction as it stands, so a lever measured twice is not counted twice.
  for (const MeasuredSetting& m : measured) {
    if (m.parent < 0 || m.parent >= static_cast<int>(measured.size()) || m.step_time_s <= 0) continue;
    const MeasuredSetting& from = measured[static_cast<std::size_t>(m.parent)];
    if (from.step_time_s <= 0) continue;
    const sim::Perturbation now = c.perturbation();
    const sim::Prediction pm = sim::predict(m.workload, now, sim::Detail::Numbers);
    const sim::Prediction pf = sim::predict(from.workload, now, sim::Detail::Numbers);
    if (!pm.ok || !pf.ok || pm.step_time_s <= 0 || pf.step_time_s <= 0) continue;
    const double residual = (m.step_time_s / from.step_time_s) / (pm.step_time_s / pf.step_time_s);
    if (std::abs(std::log(residual)) <= noise) continue;
    // Shared evenly (in log space) by the values it moved to, each on its
    // own: a later setting that keeps some of them keeps their share.
    const std::vector<sim::Condition> moved = moved_to(from.workload, m.workload);
    if (moved.empty()) continue;
    const double share = std::pow(residual, 1.0 / static_cast<double>(moved.size()));
    for (const sim::Condition& k : moved) c.lever_effects.push_back({sim::Term::Step, share, {k}, "measured effect of the move", 0});
  }
  for (const MeasuredSetting& m : measured) {
    if (!m.oom) continue;
    const sim::Prediction p = sim::predict(m.workload, c.perturbation(), sim::Detail::Numbers);
    if (p.hbm_gib <= 0 || p.memory.total_gib <= 0 || p.memory.total_gib > p.hbm_gib) continue;
    const double factor = 1.02 * p.hbm_gib / p.memory.total_gib;
    std::vector<sim::Condition> when;
    if (m.parent >= 0 && m.parent < static_cast<int>(measured.size()))
      when = moved_to(measured[static_cast<std::size_t>(m.parent)].workload, m.workload);
    // The micro batch, recompute and offload are judged by dominance (a
    // policy never tries a setting no lighter than one that ran out); the
    // layout values it moved to are what the model misjudged.
    std::erase_if(when, [](const sim::Condition& k) {
      return k.property == sim::Property::Mbs || k.property == sim::Property::Recompute ||
             k.property == sim::Property::RecomputeLayers || k.property == sim::Property::Offload;
    });
    if (choice_conditions(when) > 4) continue;
    if (when.empty()) {
      c.memory *= factor;
    } else {
      c.lever_effects.push_back({sim::Term::Memory, factor, std::move(when), "ran out of memory where the model said it fits", 0});
    }
  }
  return c;
}

nlohmann::json to_json(const ModelCorrection& c) {
  nlohmann::json effects = nlohmann::json::array();
  for (const sim::Effect& e : c.lever_effects) {
    nlohmann::json when = nlohmann::json::object();
    for (const sim::Condition& k : e.when) when[std::string(sim::property_name(k.property))] = k.ranges.empty() ? 0 : k.ranges[0].lo;
    effects.push_back({{"term", std::string(sim::term_name(e.term))}, {"factor", e.factor}, {"when", when}});
  }
  return {{"compute", c.compute}, {"communication", c.communication}, {"bubble", c.bubble}, {"other", c.other},
          {"offload", c.offload},  {"memory", c.memory},   {"lever_effects", effects},         {"settings", c.settings}};
}

}  // namespace attune::policy
