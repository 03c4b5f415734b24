#include "attune/policy/rules_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/sim/recipe_levers.h"
#include "attune/sim/step_model.h"

namespace attune::policy {

namespace {

constexpr std::size_t kLayoutCandidates = 16;  // corrected-search results turned into layout moves
constexpr int kMaxExplorations = 8;            // moves tried although the model rates them neutral
constexpr double kExploreFloor = -0.01;        // ... if it rates them no worse than this
constexpr const char* kRevertRule = "explore:revert";  // undoing one value of a combination that fell short

std::string value_of(const sim::Workload& w, const std::string& dimension) {
  for (const auto& [name, value] : sim::dimension_values(w)) {
    if (name == dimension) return value;
  }
  return "";
}

// `w` is no lighter on memory than `failed`: the same setting but for a
// larger (or equal) micro batch, less (or equal) recompute and offload.
bool no_lighter(const sim::Workload& w, const sim::Workload& failed) {
  // Choices that move no memory the model or a cluster knows of.
  static const std::set<std::string> neutral = {"nccl_algo", "nccl_proto", "nccl_channels", "bucket", "max_connections",
                                                "workers", "cp_comm", "overlap_grad_reduce", "overlap_param_gather",
                                                "tp_comm_overlap"};
  for (const std::string& d : moved_dimensions(failed, w)) {
    if (neutral.count(d)) continue;
    const std::string a = value_of(failed, d), b = value_of(w, d);
    if (d == "mbs" && goes("up", a, b)) continue;
    if ((d == "recompute" || d == "offload") && goes("down", a, b)) continue;
    return false;
  }
  return true;
}

bool same_values(const sim::Workload& a, const sim::Workload& b, const std::vector<std::string>& dims) {
  return std::all_of(dims.begin(), dims.end(), [&](const std::string& d) { return value_of(a, d) == value_of(b, d); });
}

RuleEvidence evidence_of(const PolicyContext& c, const sim::Workload& inc, const sim::Prediction& p0) {
  RuleEvidence e;
  e.moe = inc.model.is_moe();
  e.pp = inc.plan.pp;
  e.tp = inc.plan.tp;
  e.cp = inc.plan.cp;
  if (c.last_diagnosis) {
    if (c.last_diagnosis->failure) e.failure = diagnose::to_string(c.last_diagnosis->failure->kind);
    e.headroom_gib = c.last_diagnosis->headroom_gib;
  }
  if (!e.headroom_gib && p0.ok && p0.hbm_gib > 0) e.headroom_gib = p0.hbm_gib - p0.memory.total_gib;
  if (p0.ok && p0.step_time_s > 0) {
    const sim::StepBreakdown& b = p0.breakdown;
    e.exposed_comm_share = (b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.dp_comm_s + b.pp_comm_s) / p0.step_time_s;
    e.bubble_share = b.bubble_s / p0.step_time_s;
    e.launch_share = b.other_s / p0.step_time_s;
  }
  return e;
}

// The share of the predicted step in the parts a rule's lever acts on, and
// of the time the model cannot place: the most a move of it can win where
// the model cannot say what it wins.
double reach_of(const Rule& r, const sim::Prediction& p, double unexplained) {
  using B = sim::StepBreakdown;
  static const std::map<std::string, double B::*> seconds = {
      {"compute", &B::compute_s}, {"recompute", &B::recompute_s}, {"memory_bound", &B::memory_bound_s},
      {"tp_comm", &B::tp_comm_s}, {"cp_comm", &B::cp_comm_s},     {"ep_comm", &B::ep_comm_s},
      {"dp_comm", &B::dp_comm_s}, {"pp_comm", &B::pp_comm_s},     {"bubble", &B::bubble_s},
      {"optimizer", &B::optimizer_s}, {"offload", &B::offload_s}, {"data", &B::data_s},
      {"other", &B::other_s}};
  if (!p.ok || p.step_time_s <= 0) return 0;
  double s = 0;
  for (const std::string& part : r.acts_on) {
    const auto f = seconds.find(part);
    if (f != seconds.end()) s += p.breakdown.*(f->second);
  }
  return r.acts_on.empty() ? 0 : s / p.step_time_s + unexplained;
}

struct Scored {
  sim::Workload workload;
  double gain = 0;
  double reach = 0;  // share of the incumbent's step its rule acts on
  double memory_gib = 0;
  int stage_rank = 0;
  std::string stage, rule, why;
  bool single = true;
};

// The layout part of a search result, the incumbent's choices kept: the
// choices are one-lever moves of their own.
sim::Workload layout_part(const sim::Workload& found, const sim::Workload& inc) {
  sim::Workload w = inc;
  w.plan = found.plan;
  w.knobs.recompute_granularity = found.knobs.recompute_granularity;
  w.knobs.recompute_num_layers = found.knobs.recompute_num_layers;
  w.knobs.recompute_modules = found.knobs.recompute_modules;
  w.knobs.offload_layers = found.knobs.offload_layers;
  w.knobs.zero_stage = found.knobs.zero_stage;
  w.knobs.sequence_parallel = found.knobs.sequence_parallel;
  w.knobs.distributed_optimizer = found.knobs.distributed_optimizer;
  w.knobs.reshard_after_forward = found.knobs.reshard_after_forward;
  return w;
}

// How far the model's predictions have been off, out of sample: each
// measured trial's gain over its parent against what was predicted when it
// was proposed (RMS of the log ratio; 3% before two trials say otherwise).
double prediction_error(const std::vector<Observation>& history) {
  double ss = 0;
  int n = 0;
  for (const Observation& o : history) {
    if (!o.proposal.predicted_gain || !o.tokens_per_s_per_gpu) continue;
    const auto parent = std::find_if(history.begin(), history.end(), [&](const Observation& p) { return p.trial == o.parent; });
    if (parent == history.end() || !parent->tokens_per_s_per_gpu || *parent->tokens_per_s_per_gpu <= 0) continue;
    const double measured = *o.tokens_per_s_per_gpu / *parent->tokens_per_s_per_gpu;
    const double predicted = 1 + *o.proposal.predicted_gain;
    if (predicted <= 0) continue;
    ss += std::pow(std::log(measured / predicted), 2);
    ++n;
  }
  return n < 2 ? 0.03 : std::max(0.01, std::sqrt(ss / n));
}

const Observation* observation_of(const std::vector<Observation>& history, int trial) {
  const auto o = std::find_if(history.begin(), history.end(), [&](const Observation& x) { return x.trial == trial; });
  return o == history.end() ? nullptr : &*o;
}

// The share of the incumbent's measured step the nominal model does not
// account for: time in no part the model knows of, which any lever may be
// what moves (a loader the model thinks free, a protocol it does not model).
double unexplained_share(const std::vector<Observation>& history, int incumbent, const sim::Workload& inc) {
  const Observation* o = observation_of(history, incumbent);
  if (!o || !o->step_time_s || *o->step_time_s <= 0) return 0;
  const sim::Prediction nominal = sim::predict(inc, sim::Perturbation{}, sim::Detail::Numbers);
  if (!nominal.ok || nominal.step_time_s <= 0) return 0;
  return std::max(0.0, 1 - nominal.step_time_s / *o->step_time_s);
}

// The values an accepted combination moved that may be what kept it short of
// its prediction: where one of the incumbent's accepted multi-lever moves
// delivered clearly less than predicted, its moved dimensions with the value
// each had before it (still the incumbent's value now), and the shortfall.
// Which of them fell short the step time alone cannot tell; reverting each
// on its own can.
struct Suspects {
  std::map<std::string, std::string> before;  // dimension -> its value before the move
  double shortfall = 0;                       // 1 - measured / predicted gain factor
};

Suspects suspects_of(const std::vector<Observation>& history, int incumbent, const sim::Workload& inc, double noise) {
  Suspects out;
  bool reverted = false;  // a revert accepted since: that combination's shortfall is accounted for
  for (const Observation* o = observation_of(history, incumbent); o && o->trial != 0; o = observation_of(history, o->parent)) {
    if (o->proposal.rule == kRevertRule) reverted = true;
    if (reverted) continue;
    const Observation* from = observation_of(history, o->parent);
    if (!from || o->proposal.changes.size() < 2 || !o->proposal.predicted_gain || !o->tokens_per_s_per_gpu ||
        !from->tokens_per_s_per_gpu || !o->workload || !from->workload || *from->tokens_per_s_per_gpu <= 0)
      continue;
    const double ratio = (*o->tokens_per_s_per_gpu / *from->tokens_per_s_per_gpu) / (1 + *o->proposal.predicted_gain);
    if (ratio >= 1 - std::max(noise, 0.05)) continue;
    out.shortfall = std::max(out.shortfall, 1 - ratio);
    for (const std::string& d : moved_dimensions(*from->workload, *o->workload)) {
      if (value_of(inc, d) == value_of(*o->workload, d)) out.before[d] = value_of(*from->workload, d);
    }
  }
  return out;
}

// Whether `w` undoes only suspect values of `inc`, each back to its value before.
bool reverts_suspects(const sim::Workload& inc, const sim::Workload& w, const Suspects& s) {
  const std::vector<std::string> dims = moved_dimensions(inc, w);
  return !dims.empty() && std::all_of(dims.begin(), dims.end(), [&](const std::string& d) {
    const auto b = s.before.find(d);
    return b != s.before.end() && b->second == value_of(w, d);
  });
}

// Settings that undo one suspect value, or two where undoing one alone
// cannot run (expert TP back to 1 needs the expert-parallel size it had).
std::vector<sim::Workload> revert_moves(const CandidateSpace& space, const sim::Workload& inc, const Suspects& s) {
  std::vector<sim::Workload> out;
  if (s.before.empty()) return out;
  for (const sim::Workload& w : space.one_lever_moves(inc)) {
    if (!reverts_suspects(inc, w, s)) continue;
    out.push_back(w);
    for (const sim::Workload& w2 : space.one_lever_moves(w)) {
      if (moved_dimensions(inc, w2).size() == 2 && reverts_suspects(inc, w2, s)) out.push_back(w2);
    }
  }
  return out;
}

int explorations(const std::vector<Observation>& history) {
  return static_cast<int>(std::count_if(history.begin(), history.end(),
                                        [](const Observation& o) { return o.proposal.rule.rfind("explore:", 0) == 0; }));
}

// The best candidates by predicted gain, as proposals of the incumbent.
std::vector<std::pair<Proposal, double>> rank_scored(const std::vector<Scored>& scored, const CandidateSpace& space,
                                                     const recipe::Recipe& incumbent, const sim::Workload& inc) {
  std::vector<const Scored*> order;
  for (const Scored& s : scored) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const Scored* a, const Scored* b) { return a->gain > b->gain; });
  std::vector<std::pair<Proposal, double>> out;
  for (const Scored* s : order) {
    if (out.size() == RulesPolicy::kRankedCandidates) break;
    std::string why;
    std::optional<Proposal> p = space.proposal_to(incumbent, inc, s->workload, why);
    if (!p) continue;
    p->rule = s->rule;
    p->stage = s->stage;
    p->why = s->why;
    p->predicted_gain = s->gain;
    p->predicted_memory_gib = s->memory_gib;
    out.emplace_back(std::move(*p), s->gain);
  }
  return out;
}

}  // namespace

bool known_infeasible(const std::vector<Observation>& history, const sim::Workload& w) {
  for (const Observation& o : history) {
    if (o.outcome != TrialOutcome::Failed || !o.workload) continue;
    const sim::Workload* parent = workload_of(history, o.parent);
    const std::vector<std::string> moved = parent ? moved_dimensions(*parent, *o.workload) : std::vector<std::string>{};
    if (o.failure == "oom") {
      if (no_lighter(w, *o.workload)) return true;
    } else if (o.failure == "hang" || o.failure == "nccl_timeout" || o.failure == "nccl_error") {
      if (same_values(w, *o.workload, {"tp", "pp", "cp", "ep", "etp"}) && same_values(w, *o.workload, moved)) return true;
    } else if (o.failure != "node_failure" && o.failure != "time_limit" && !moved.empty()) {
      if (same_values(w, *o.workload, moved)) return true;
    }
  }
  return false;
}

RulesPolicy::RulesPolicy(const RuleBook& book) : book_(book) {}

nlohmann::json RulesPolicy::explain() const { return {{"correction", to_json(correction_)}, {"incumbent_prediction", incumbent_}}; }

const std::vector<sim::Workload>& RulesPolicy::layouts(const sim::Workload& inc, const std::vector<Observation>& history) {
  const long failures = std::count_if(history.begin(), history.end(), [](const Observation& o) { return o.outcome == TrialOutcome::Failed; });
  auto moved = [](double a, double b) { return std::abs(std::log(a / b)) > 0.03; };
  const bool stale = !searched_with_ || failures != searched_failures_ ||
                     moved(searched_with_->compute, correction_.compute) ||
                     moved(searched_with_->communication, correction_.communication) ||
                     moved(searched_with_->bubble, correction_.bubble) || moved(searched_with_->other, correction_.other) ||
                     moved(searched_with_->offload, correction_.offload) ||
                     moved(searched_with_->memory, correction_.memory);
  if (stale) {
    layouts_.clear();
    const sim::SearchResult found = sim::search_layouts(inc, space_->space(), correction_.perturbation(), kLayoutCandidates);
    for (const sim::RankedWorkload& r : found.best) layouts_.push_back(r.workload);
    searched_with_ = correction_;
    searched_failures_ = failures;
  }
  return layouts_;
}

PolicyAnswer RulesPolicy::propose(const PolicyContext& c) {
  if (!space_) space_ = std::make_unique<CandidateSpace>(c.original, c.gate);
  // The correction, from every measured setting and the one it was proposed from.
  std::vector<MeasuredSetting> measured;
  std::map<int, int> index;
  for (const Observation& o : c.history) {
    const bool ran = o.outcome == TrialOutcome::Baseline || o.outcome == TrialOutcome::Accepted ||
                     o.outcome == TrialOutcome::Rejected || o.outcome == TrialOutcome::Demoted;
    const bool oom = o.outcome == TrialOutcome::Failed && o.failure == "oom";
    if (!o.workload || (!oom && (!ran || !o.step_time_s))) continue;
    const auto parent = index.find(o.parent);
    index[o.trial] = static_cast<int>(measured.size());
    measured.push_back({*o.workload, oom ? 0 : *o.step_time_s, o.peak_memory_gib,
                        o.trial == o.parent || parent == index.end() ? -1 : parent->second, oom});
  }
  correction_ = fit_correction(measured, std::max(0.01, c.min_gain / 2));
  const sim::Perturbation pert = correction_.perturbation();

  const sim::Workload inc = sim::workload_from_recipe(c.incumbent);
  const sim::Prediction p0 = sim::predict(inc, pert, sim::Detail::Numbers);
  const RuleEvidence evidence = evidence_of(c, inc, p0);
  incumbent_ = {{"ok", p0.ok}, {"tokens_per_s_per_gpu", p0.tokens_per_s_per_gpu}, {"memory_gib", p0.memory.total_gib},
                {"failure", p0.failure}};

  std::vector<sim::Workload> pool = space_->one_lever_moves(inc);
  for (const sim::Workload& w : layouts(inc, c.history)) pool.push_back(layout_part(w, inc));
  const Suspects suspects = suspects_of(c.history, c.incumbent_trial, inc, c.min_gain);
  for (sim::Workload& w : revert_moves(*space_, inc, suspects)) pool.push_back(std::move(w));

  const double unexplained = unexplained_share(c.history, c.incumbent_trial, inc);
  std::vector<Scored> scored;
  std::set<std::string> seen = {setting_key(inc)};
  for (const sim::Workload& w : pool) {
    if (!seen.insert(setting_key(w)).second) continue;
    if (tried(c.history, w) || known_infeasible(c.history, w)) continue;
    const std::vector<std::string> dims = moved_dimensions(inc, w);
    if (dims.empty()) continue;
    const bool reverting = reverts_suspects(inc, w, suspects);
    if (dims.size() > 1 && !reverting && !book_.combination_for(dims)) continue;
    const sim::Prediction p = sim::predict(w, pert, sim::Detail::Numbers);
    if (!p.ok || p.oom_risk > 0) continue;  // would run out of memory, or sit within the risk margin
    Scored s{w, p0.ok ? p.tokens_per_s_per_gpu / p0.tokens_per_s_per_gpu - 1 : 1.0, 0, p.memory.total_gib, 0, "", "", "", dims.size() == 1};
    int lesson_count = 0;
    if (s.single) {
      const double learnt = lesson_effect(c.lessons, inc.plan.gpu, model_class(inc.model), recipe::to_string(c.original.framework()),
                                          dims[0], value_of(w, dims[0]), &lesson_count);
      if (lesson_count > 0) s.gain += 0.5 * learnt;
    }
    s.stage_rank = static_cast<int>(book_.stages.size());
    for (const std::string& d : dims) {
      const Rule* r = book_.match(d, value_of(inc, d), value_of(w, d), evidence);
      if (!r) continue;
      if (book_.stage_rank(r->stage) < s.stage_rank) {
        s.stage_rank = book_.stage_rank(r->stage);
        s.stage = r->stage;
        s.rule = r->id;
        s.reach = reach_of(*r, p0, unexplained);
      }
      if (!s.why.empty()) s.why += "; ";
      s.why += r->why;
    }
    if (s.rule.empty()) {
      s.stage = "search";
      s.rule = "model";
    }
    if (!s.single && book_.combination_for(dims)) s.why = book_.combination_for(dims)->why + (s.why.empty() ? "" : "; " + s.why);
    if (lesson_count > 0) s.why += fmt::format(" (earlier campaigns measured it {} times)", lesson_count);
    scored.push_back(std::move(s));
  }

  ranking_ = rank_scored(scored, *space_, c.incumbent, inc);
  const bool fixing = !evidence.failure.empty();
  const Scored* choice = nullptr;
  bool ablation = false;
  double best_gain = -1e9;
  for (const Scored& s : scored) best_gain = std::max(best_gain, s.gain);
  // Worth a trial while the best candidate may beat the noise: its predicted
  // gain plus how far predictions have been off (an upper bound, not a hope).
  const double error = prediction_error(c.history);
  const bool worth = best_gain > 0.002 && best_gain + error >= std::max(0.005, c.min_gain / 2);
  // Reverting one value of a combination that fell short, valued as if the
  // whole shortfall were that value's (the corrected model spreads it
  // evenly, which no measurement has told it): worth a trial before the
  // rule book's next lever when that bound beats the lever's prediction.
  const Scored* revert = nullptr;
  double revert_value = std::max(best_gain, c.min_gain / 2);
  for (const Scored& s : scored) {
    if (!reverts_suspects(inc, s.workload, suspects)) continue;
    const double undone = static_cast<double>(moved_dimensions(inc, s.workload).size());
    const double bound = s.gain + suspects.shortfall * (1 - undone / static_cast<double>(suspects.before.size()));
    if (bound > revert_value) revert = &s, revert_value = bound;
  }
  if (revert && !fixing) {
    choice = revert;
    ablation = true;
  } else if (fixing || worth) {
    for (const Scored& s : scored) {
      if (fixing && s.stage != "fix" && std::any_of(scored.begin(), scored.end(), [](const Scored& x) { return x.stage == "fix"; }))
        continue;
      if (!fixing && s.gain < best_gain - book_.tie_margin) continue;
      if (!choice || s.stage_rank < choice->stage_rank || (s.stage_rank == choice->stage_rank && s.gain > choice->gain))
        choice = &s;
    }
  } else if (explorations(c.history) < kMaxExplorations) {
    // What the model cannot rate, tried where it acts on the most of the
    // step, and only where that is more than the noise could hide.
    const double floor = std::max(0.01, c.min_gain);
    for (const Scored& s : scored) {
      if (s.stage == "search" || !s.single || s.gain < kExploreFloor || s.reach < floor) continue;
      if (!choice || s.reach > choice->reach || (s.reach == choice->reach && s.stage_rank < choice->stage_rank) ||
          (s.reach == choice->reach && s.stage_rank == choice->stage_rank && s.gain > choice->gain))
        choice = &s;
    }
  }
  if (!choice) {
    return {std::nullopt, scored.empty() ? "no untried move is left that the model says can run"
                                         : fmt::format("no candidate is expected to beat the incumbent by more than the noise "
                                                       "(best predicted {:+.1f}%, prediction error {:.1f}%, noise threshold {:.1f}%)",
                                                       100 * best_gain, 100 * error, 100 * c.min_gain)};
  }
  std::string why;
  std::optional<Proposal> p = space_->proposal_to(c.incumbent, inc, choice->workload, why);
  if (!p) return {std::nullopt, "the best candidate cannot be spelled in the recipe: " + why};
  p->rule = ablation ? kRevertRule : (worth || fixing ? "" : "explore:") + choice->rule;
  p->stage = choice->stage;
  p->why = choice->why.empty() ? fmt::format("the corrected model predicts {:+.1f}%", 100 * choice->gain)
                               : fmt::format("{} (corrected model: {:+.1f}%)", choice->why, 100 * choice->gain);
  if (ablation)
    p->why = fmt::format("an accepted combination delivered clearly less than predicted; undoing {} alone tells whether it "
                         "is the part that fell short (corrected model: {:+.1f}%)",
                         fmt::join(moved_dimensions(inc, choice->workload), " and "), 100 * choice->gain);
  p->predicted_gain = choice->gain;
  p->predicted_memory_gib = choice->memory_gib;
  return {std::move(p), ""};
}

}  // namespace attune::policy
