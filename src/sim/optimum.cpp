#include "attune/sim/optimum.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attune/util/error.h"

namespace attune::sim {

namespace {

constexpr double kGreedyMinGain = 0.01;  // a move must gain 1%: what a measured tuner can tell from noise

// Applies `settings` to a copy of the recipe; nullopt when the recipe
// refuses one of them.
std::optional<recipe::Recipe> with_settings(const recipe::Recipe& r, const std::vector<LeverSetting>& settings) {
  recipe::Recipe edited = r;
  try {
    for (const auto& s : settings) edited.set(s.lever, s.value, s.lever.rfind("env.", 0) == 0);
  } catch (const InputError&) {
    return std::nullopt;
  }
  return edited;
}

// Whether the gate refuses `settings` on their own. An edit the recipe
// cannot take alone (a layout rule breaks until another lever moves) is not
// refused for a layout dimension: the search decides.
bool gate_refuses(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const std::vector<LeverSetting>& settings,
                  bool unsettable_is_refused) {
  const auto edited = with_settings(r, settings);
  if (!edited) return unsettable_is_refused;
  return !gate.check(r, *edited).allowed;
}

std::vector<int> refused_numbers(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const char* lever,
                                 const std::vector<int>& candidates, int base) {
  std::vector<int> refused;
  for (int v : candidates) {
    if (v != base && gate_refuses(r, gate, {{lever, std::to_string(v)}}, false)) refused.push_back(v);
  }
  return refused;
}

// The edits one dimension of `to` takes from the base, or nullopt.
std::optional<std::vector<LeverSetting>> settings_for(const recipe::Recipe& r, const Workload& base, const Workload& to,
                                                      std::string_view dimension) {
  try {
    for (auto& e : edits_between(r, base, to)) {
      if (e.name == dimension) return std::move(e.settings);
    }
  } catch (const InputError&) {
  }
  return std::nullopt;
}

template <typename T, typename Set>
std::vector<T> keep_allowed(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Workload& base,
                            const std::vector<T>& values, std::string_view dimension, Set set) {
  std::vector<T> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == 0) {
      out.push_back(values[i]);
      continue;
    }
    Workload to = base;
    set(to, values[i]);
    const auto s = settings_for(r, base, to, dimension);
    if (s && !gate_refuses(r, gate, *s, true)) out.push_back(values[i]);
  }
  return out;
}

bool toggle_allowed(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Workload& base, bool spellable,
                    std::string_view dimension, bool Knobs::*field) {
  if (!spellable) return false;
  Workload to = base;
  to.knobs.*field = !(to.knobs.*field);
  const auto s = settings_for(r, base, to, dimension);
  return s && !gate_refuses(r, gate, *s, true);
}

void add_note(std::vector<std::string>& notes, std::vector<int>& counts, const std::string& note) {
  for (std::size_t i = 0; i < notes.size(); ++i) {
    if (notes[i] == note) {
      ++counts[i];
      return;
    }
  }
  notes.push_back(note);
  counts.push_back(1);
}

}  // namespace

bool edit_recipe_to(recipe::Recipe& candidate, const Workload& from, const Workload& to, std::vector<LeverEdit>& edits,
                    std::string& why) {
  std::vector<DimensionEdit> pending;
  try {
    pending = edits_between(candidate, from, to);
  } catch (const InputError& e) {
    why = e.message();
    return false;
  }
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      recipe::Recipe attempt = candidate;
      LeverEdit edit{it->name, it->from, it->to, {}};
      try {
        for (const auto& s : it->settings) {
          const recipe::EditResult e = attempt.set(s.lever, s.value, s.lever.rfind("env.", 0) == 0);
          for (const auto& c : e.changes) edit.changes.push_back(recipe::describe(c));
          for (const auto& c : e.follow_ups) edit.changes.push_back(recipe::describe(c) + " (" + c.why + ")");
        }
        candidate = std::move(attempt);
        edits.push_back(std::move(edit));
        it = pending.erase(it);
        progress = true;
      } catch (const InputError& err) {
        why = it->name + " = " + it->to + ": " + err.message();
        ++it;
      }
    }
    if (!progress) return false;
  }
  return true;
}

namespace {

bool same_speed(const Prediction& a, const Prediction& b) {
  return std::abs(a.tokens_per_s_per_gpu - b.tokens_per_s_per_gpu) <= 0.005 * b.tokens_per_s_per_gpu;
}

// The first ranked candidate the recipe can express and the gate approves,
// predicted again from the edited recipe.
Reached reach(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Perturbation& pert,
              const Workload& base, const Prediction& base_prediction, const SearchResult& found, int& tried,
              std::vector<std::string>& notes, std::vector<int>& counts) {
  Reached best{base, base_prediction, {}, std::nullopt};
  for (const RankedWorkload& c : found.best) {
    if (base_prediction.ok && c.prediction.tokens_per_s_per_gpu <= base_prediction.tokens_per_s_per_gpu) break;
    if (c.changes == 0) break;
    ++tried;
    recipe::Recipe edited = r;
    std::vector<LeverEdit> edits;
    std::string why;
    if (!edit_recipe_to(edited, base, c.workload, edits, why)) {
      add_note(notes, counts, "skipped a candidate the recipe cannot express: " + why);
      continue;
    }
    const gate::Verdict v = gate.check(r, edited);
    if (!v.allowed) {
      add_note(notes, counts,
               "skipped a candidate the gate refused: " +
                   (v.reasons.empty() ? std::string("no reason given") : v.reasons.front().message));
      continue;
    }
    // The edited recipe is what would run: its own prediction counts (an
    // adapter's follow-ups can move more than the search assumed).
    Workload w = workload_from_recipe(edited);
    Prediction p = predict(w, pert);
    const bool as_searched = p.ok && same_speed(p, c.prediction);
    if (!as_searched) {
      add_note(notes, counts,
               p.ok ? "a candidate's edited recipe reads back differently from the search (its follow-ups moved "
                      "more): ranked by its own prediction"
                    : "skipped a candidate whose edited recipe fails: " + p.failure);
    }
    if (p.ok && p.tokens_per_s_per_gpu > best.prediction.tokens_per_s_per_gpu) best = {std::move(w), std::move(p), std::move(edits), std::move(edited)};
    // Candidates are ranked: once one runs as searched, none after it is faster.
    if (as_searched) break;
  }
  return best;
}

// Steepest one-lever ascent under the truth: every neighbour is a trial.
GreedyResult greedy(const Workload& base, const SearchSpace& space, const Perturbation& truth) {
  GreedyResult g{base, predict(base, truth, Detail::Numbers), 0, 0, 0};
  if (!g.prediction.ok) return g;
  for (int round = 0; round < 64; ++round) {
    std::optional<GreedyResult> best;
    for (const Workload& w : one_lever_moves(g.workload, base, space)) {
      ++g.trials;
      Prediction p = predict(w, truth, Detail::Numbers);
      if (!p.ok || p.oom_risk > 0) continue;
      if (!best || p.tokens_per_s_per_gpu > best->prediction.tokens_per_s_per_gpu) best = GreedyResult{w, p, 0, 0};
    }
    if (!best || best->prediction.tokens_per_s_per_gpu < g.prediction.tokens_per_s_per_gpu * (1 + kGreedyMinGain)) break;
    g.workload = std::move(best->workload);
    g.prediction = std::move(best->prediction);
    ++g.moves;
  }
  return g;
}

}  // namespace

SearchSpace gated_space(const recipe::Recipe& r, const Workload& base, const gate::CorrectnessGate& gate) {
  const gate::GateOptions& options = gate.options();
  auto has = [&](const char* name) { return !r.key_of(name).empty(); };
  const SpellableLevers spell = spellable(r, base);
  SearchSpace s = search_space(spell);
  s.tp = has("tp");
  s.pp = has("pp");
  s.vp = has("vp");
  s.cp = has("cp");
  s.ep = has("ep");
  s.mbs = has("mbs");
  s.mbs_follows_dp = r.adapter().batch_rule(r) == recipe::BatchRule::SmpImplied;
  s.shard_excludes_ep = r.framework() == recipe::Framework::Axolotl;
  s.fp8 = spell.fp8 && std::find(options.allow.begin(), options.allow.end(), "fp8") != options.allow.end();
  const auto& p = base.plan;
  if (s.tp) s.refused_tp = refused_numbers(r, gate, "tp", {1, 2, 4, 8}, p.tp);
  if (s.cp) s.refused_cp = refused_numbers(r, gate, "cp", {1, 2, 4, 8, 16}, p.cp);
  if (s.mbs) s.refused_mbs = refused_numbers(r, gate, "mbs", {1, 2, 4, 8, 16}, p.mbs);
  s.recompute = keep_allowed(r, gate, base, spell.recompute, "recompute", [](Workload& w, const RecomputeSetting& v) { apply(v, w); });
  s.offload_layers = keep_allowed(r, gate, base, spell.offload_layers, "offload", [](Workload& w, int v) { w.knobs.offload_layers = v; });
  s.zero_stage = keep_allowed(r, gate, base, spell.zero_stage, "sharding", [](Workload& w, int v) { w.knobs.zero_stage = v; });
  s.sequence_parallel = toggle_allowed(r, gate, base, s.sequence_parallel, "sequence_parallel", &Knobs::sequence_parallel);
  s.distributed_optimizer = toggle_allowed(r, gate, base, s.distributed_optimizer, "distributed_optimizer", &Knobs::distributed_optimizer);
  s.reshard_after_forward = toggle_allowed(r, gate, base, s.reshard_after_forward, "fsdp_reshard_after_forward", &Knobs::reshard_after_forward);
  for (std::size_t c = 0; c < kChoiceCount; ++c) {
    const auto choice = static_cast<Choice>(c);
    for (std::uint8_t v = 0; v < 32; ++v) {
      if (!((s.choices[c] >> v) & 1u) || v == base.knobs.choices[c]) continue;
      Workload to = base;
      to.knobs.set(choice, v);
      const auto settings = settings_for(r, base, to, choice_name(choice));
      if (!settings || gate_refuses(r, gate, *settings, true)) s.choices[c] &= ~(1u << v);
    }
  }
  return s;
}

Optimum find_optimum(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Perturbation& truth,
                     const OptimumOptions& options) {
  Optimum o;
  o.baseline_workload = workload_from_recipe(r);
  o.baseline = predict(o.baseline_workload, truth);
  o.space = gated_space(r, o.baseline_workload, gate);
  const SearchSpace& space = o.space;
  std::vector<std::string> notes;
  std::vector<int> counts;
  const SearchResult found = search_layouts(o.baseline_workload, space, truth, options.candidates);
  o.settings = found.settings;
  o.evaluated = found.evaluated;
  o.cores = found.cores;
  o.best = reach(r, gate, truth, o.baseline_workload, o.baseline, found, o.candidates_tried, notes, counts);
  if (options.prior) {
    const Perturbation nominal;
    const Prediction base_prior = predict(o.baseline_workload, nominal);
    const SearchResult prior_found = search_layouts(o.baseline_workload, space, nominal, options.candidates);
    int tried = 0;
    std::vector<std::string> prior_notes;
    std::vector<int> prior_counts;
    o.prior = reach(r, gate, nominal, o.baseline_workload, base_prior, prior_found, tried, prior_notes, prior_counts);
    o.prior_under_truth = predict(o.prior->workload, truth);
    const double best = o.best.prediction.tokens_per_s_per_gpu;
    // A setting that may OOM late under the truth is no answer: it fails runs.
    const bool runs = o.prior_under_truth.ok && o.prior_under_truth.oom_risk == 0;
    o.prior_regret = best > 0 && runs ? std::max(0.0, 1 - o.prior_under_truth.tokens_per_s_per_gpu / best) : 1.0;
  }
  if (options.greedy) {
    o.greedy = greedy(o.baseline_workload, space, truth);
    const double best = o.best.prediction.tokens_per_s_per_gpu;
    if (best > 0) o.greedy->shortfall = std::max(0.0, 1 - o.greedy->prediction.tokens_per_s_per_gpu / best);
  }
  for (std::size_t i = 0; i < notes.size(); ++i)
    o.notes.push_back(counts[i] > 1 ? fmt::format("{} (x{})", notes[i], counts[i]) : notes[i]);
  return o;
}

nlohmann::json edits_json(const std::vector<LeverEdit>& edits) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : edits) out.push_back({{"lever", e.lever}, {"from", e.from}, {"to", e.to}, {"changes", e.changes}});
  return out;
}

nlohmann::json to_json(const Optimum& o) {
  const double base = o.baseline.tokens_per_s_per_gpu;
  nlohmann::json j = {
      {"optimum",
       {{"tokens_per_s_per_gpu", o.best.prediction.tokens_per_s_per_gpu},
        {"edits", edits_json(o.best.edits)},
        {"plan", recipe::to_json(o.best.workload.plan)},
        {"prediction", to_json(o.best.prediction)}}},
      {"baseline",
       {{"tokens_per_s_per_gpu", base},
        {"plan", recipe::to_json(o.baseline_workload.plan)},
        {"prediction", to_json(o.baseline)}}},
      {"speedup", base > 0 ? nlohmann::json(o.best.prediction.tokens_per_s_per_gpu / base) : nlohmann::json(nullptr)},
      {"settings_searched", o.settings},
      {"settings_evaluated", o.evaluated},
      {"cores", o.cores},
      {"candidates_tried", o.candidates_tried},
      {"notes", o.notes}};
  if (o.prior) {
    j["prior_optimum"] = {{"edits", edits_json(o.prior->edits)},
                          {"prior_tokens_per_s_per_gpu", o.prior->prediction.tokens_per_s_per_gpu},
                          {"true_tokens_per_s_per_gpu", o.prior_under_truth.ok ? o.prior_under_truth.tokens_per_s_per_gpu : 0.0},
                          {"true_failure", !o.prior_under_truth.ok ? nlohmann::json(o.prior_under_truth.failure)
                                           : o.prior_under_truth.oom_risk > 0 ? nlohmann::json("oom_risk")
                                                                              : nlohmann::json(nullptr)},
                          {"true_oom_risk", o.prior_under_truth.oom_risk}};
    j["prior_regret"] = o.prior_regret;
  }
  if (o.greedy) {
    j["greedy"] = {{"true_tokens_per_s_per_gpu", o.greedy->prediction.tokens_per_s_per_gpu},
                   {"trials", o.greedy->trials},
                   {"moves", o.greedy->moves},
                   {"shortfall", o.greedy->shortfall}};
  }
  return j;
}

}  // namespace attune::sim
