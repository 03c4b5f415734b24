#include "attune/sim/optimum.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "attune/util/error.h"

namespace attune::sim {

namespace {

// One searched dimension as the recipe spells it: the canonical lever names
// that may carry it (first present wins) and its value for a workload, in
// the lever's own vocabulary.
struct Dimension {
  std::vector<const char*> levers;
  std::function<std::optional<std::string>(const Workload&, const recipe::LeverDef&)> value;
};

std::string text(bool b) { return b ? "true" : "false"; }

std::optional<std::string> as_bool_lever(bool on, const recipe::LeverDef& def) {
  if (def.type == recipe::LeverType::Bool) return text(on);
  return std::nullopt;
}

// Enum levers spell "on" with one of their values (FP8 "hybrid", CUDA graphs "transformer_engine").
std::optional<std::string> enum_or_bool(bool on, const recipe::LeverDef& def, std::vector<const char*> on_values,
                                        const char* off_value) {
  if (def.type == recipe::LeverType::Bool) return text(on);
  if (def.type != recipe::LeverType::Enum) return std::nullopt;
  auto has = [&](const std::string& v) { return std::find(def.values.begin(), def.values.end(), v) != def.values.end(); };
  if (!on) {
    if (off_value && has(off_value)) return std::string(off_value);
    return std::nullopt;
  }
  for (const char* v : on_values) {
    if (has(v)) return std::string(v);
  }
  return std::nullopt;
}

std::optional<std::string> number(long long v) { return std::to_string(v); }

const std::vector<Dimension>& dimensions() {
  using W = const Workload&;
  using L = const recipe::LeverDef&;
  static const std::vector<Dimension> dims = {
      {{"tp"}, [](W w, L) { return number(w.plan.tp); }},
      {{"pp"}, [](W w, L) { return number(w.plan.pp); }},
      {{"vp"}, [](W w, L) { return number(w.plan.vp); }},
      {{"cp"}, [](W w, L) { return number(w.plan.cp); }},
      {{"ep"}, [](W w, L) { return number(w.plan.ep); }},
      {{"mbs"}, [](W w, L) { return number(w.plan.mbs); }},
      {{"recompute"}, [](W w, L) { return std::optional<std::string>(w.knobs.recompute_granularity); }},
      {{"sequence_parallel"}, [](W w, L d) { return as_bool_lever(w.knobs.sequence_parallel, d); }},
      {{"distributed_optimizer"}, [](W w, L d) { return as_bool_lever(w.knobs.distributed_optimizer, d); }},
      {{"overlap_grad_reduce"}, [](W w, L d) { return as_bool_lever(w.knobs.overlap_grad_reduce, d); }},
      {{"overlap_param_gather"}, [](W w, L d) { return as_bool_lever(w.knobs.overlap_param_gather, d); }},
      {{"tp_comm_overlap", "enable_async_tensor_parallel"},
       [](W w, L d) { return as_bool_lever(w.knobs.tp_comm_overlap, d); }},
      {{"cuda_graphs"}, [](W w, L d) { return enum_or_bool(w.knobs.cuda_graphs, d, {"transformer_engine", "local"}, "none"); }},
      {{"fp8"}, [](W w, L d) { return enum_or_bool(w.knobs.fp8, d, {"hybrid", "e4m3"}, nullptr); }},
  };
  return dims;
}

// The lever a dimension maps to in this recipe, or nullptr.
const recipe::LeverDef* lever_of(const recipe::Recipe& r, const Dimension& d, std::string& name) {
  for (const char* n : d.levers) {
    if (r.key_of(n).empty()) continue;
    if (const recipe::LeverDef* def = r.adapter().catalog().by_name(n, r.dialect())) {
      name = n;
      return def;
    }
  }
  return nullptr;
}

// Whether the gate refuses `lever` = `value` on its own. An edit the recipe
// cannot take alone (it breaks a layout rule until another lever moves) is
// not refused: the search decides.
// A lever with no layout rules (recompute) refuses a value it cannot take.
bool gate_refuses(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const std::string& lever,
                  const std::string& value, bool unsettable_is_refused) {
  recipe::Recipe edited = r;
  try {
    edited.set(lever, value);
  } catch (const InputError&) {
    return unsettable_is_refused;
  }
  return !gate.check(r, edited).allowed;
}

template <typename T>
std::vector<T> refused_values(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const char* lever,
                              const std::vector<T>& candidates, const T& base, bool unsettable_is_refused = false) {
  std::vector<T> refused;
  for (const T& v : candidates) {
    if (v == base) continue;
    std::string text;
    if constexpr (std::is_same_v<T, std::string>) text = v;
    else text = std::to_string(v);
    if (gate_refuses(r, gate, lever, text, unsettable_is_refused)) refused.push_back(v);
  }
  return refused;
}

// Only what the recipe can express is searched; FP8 only when the user
// allows it; values the gate refuses on their own are left out.
SearchSpace space_for(const recipe::Recipe& r, const Workload& base, const gate::CorrectnessGate& gate) {
  const gate::GateOptions& options = gate.options();
  auto has = [&](const char* name) { return !r.key_of(name).empty(); };
  SearchSpace s;
  s.tp = has("tp");
  s.pp = has("pp");
  s.vp = has("vp");
  s.cp = has("cp");
  s.ep = has("ep");
  s.mbs = has("mbs");
  s.recompute = has("recompute");
  s.sequence_parallel = has("sequence_parallel");
  s.distributed_optimizer = has("distributed_optimizer");
  s.overlap_grad_reduce = has("overlap_grad_reduce");
  s.overlap_param_gather = has("overlap_param_gather");
  s.tp_comm_overlap = has("tp_comm_overlap") || has("enable_async_tensor_parallel");
  s.cuda_graphs = has("cuda_graphs");
  s.moe_dispatcher = false;  // dispatcher backends are spelled too differently to search blind
  s.fp8 = has("fp8") && std::find(options.allow.begin(), options.allow.end(), "fp8") != options.allow.end();
  const auto& p = base.plan;
  if (s.tp) s.refused_tp = refused_values<int>(r, gate, "tp", {1, 2, 4, 8}, p.tp);
  if (s.cp) s.refused_cp = refused_values<int>(r, gate, "cp", {1, 2, 4, 8, 16}, p.cp);
  if (s.mbs) s.refused_mbs = refused_values<int>(r, gate, "mbs", {1, 2, 4, 8, 16}, p.mbs);
  if (s.recompute)
    s.refused_recompute = refused_values<std::string>(r, gate, "recompute", {"none", "selective", "full"},
                                                      base.knobs.recompute_granularity, true);
  return s;
}

// Notes repeat for each candidate that fails the same way: count them.
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

std::string current_value(const recipe::Recipe& r, const std::string& lever) {
  auto e = r.find_named(lever);
  return e ? e->value.str() : "";
}

// Applies the edits that take `from` to `to`, retrying an edit the recipe
// refuses until the others have made it valid (TP before DP-dependent
// settings, and so on). Returns false if some edit never applies.
bool apply_edits(recipe::Recipe& candidate, const Workload& from, const Workload& to, std::vector<LeverEdit>& edits,
                 std::string& why) {
  struct Pending {
    std::string lever, value, before;
  };
  std::vector<Pending> pending;
  for (const Dimension& d : dimensions()) {
    std::string name;
    const recipe::LeverDef* def = lever_of(candidate, d, name);
    if (!def) continue;
    const auto a = d.value(from, *def);
    const auto b = d.value(to, *def);
    if (a == b) continue;
    if (!b) {
      why = "the recipe cannot spell " + name + " = " + (a ? "off" : "?");
      return false;
    }
    pending.push_back({name, *b, current_value(candidate, name)});
  }
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      try {
        const recipe::EditResult e = candidate.set(it->lever, it->value);
        LeverEdit edit{it->lever, it->before, it->value, {}};
        for (const auto& c : e.changes) edit.changes.push_back(recipe::describe(c));
        for (const auto& c : e.follow_ups) edit.changes.push_back(recipe::describe(c) + " (" + c.why + ")");
        edits.push_back(std::move(edit));
        it = pending.erase(it);
        progress = true;
      } catch (const InputError& err) {
        why = it->lever + " = " + it->value + ": " + err.message();
        ++it;
      }
    }
    if (!progress) return false;
  }
  return true;
}

bool same_speed(const Prediction& a, const Prediction& b) {
  return std::abs(a.tokens_per_s_per_gpu - b.tokens_per_s_per_gpu) <= 0.005 * b.tokens_per_s_per_gpu;
}

}  // namespace

Optimum find_optimum(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Perturbation& pert,
                     std::size_t candidates) {
  Optimum o;
  o.baseline_workload = workload_from_recipe(r);
  o.baseline = predict(o.baseline_workload, pert);
  o.best_workload = o.baseline_workload;
  o.best = o.baseline;
  const SearchResult found =
      search_layouts(o.baseline_workload, space_for(r, o.baseline_workload, gate), pert, candidates);
  o.searched = found.searched;
  std::vector<std::string> notes;
  std::vector<int> counts;
  for (const RankedWorkload& c : found.best) {
    if (o.baseline.ok && c.prediction.tokens_per_s_per_gpu <= o.baseline.tokens_per_s_per_gpu) break;
    ++o.candidates_tried;
    recipe::Recipe edited = r;
    std::vector<LeverEdit> edits;
    std::string why;
    if (!apply_edits(edited, o.baseline_workload, c.workload, edits, why)) {
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
    if (p.ok && p.tokens_per_s_per_gpu > o.best.tokens_per_s_per_gpu) {
      o.best_workload = std::move(w);
      o.best = std::move(p);
      o.edits = std::move(edits);
      o.best_recipe = std::move(edited);
    }
    // Candidates are ranked: once one runs as searched, none after it is faster.
    if (as_searched) break;
  }
  for (std::size_t i = 0; i < notes.size(); ++i)
    o.notes.push_back(counts[i] > 1 ? fmt::format("{} (x{})", notes[i], counts[i]) : notes[i]);
  return o;
}

nlohmann::json to_json(const Optimum& o) {
  nlohmann::json edits = nlohmann::json::array();
  for (const auto& e : o.edits) {
    edits.push_back({{"lever", e.lever}, {"from", e.from}, {"to", e.to}, {"changes", e.changes}});
  }
  return {{"best",
           {{"tokens_per_s_per_gpu", o.best.tokens_per_s_per_gpu},
            {"edits", edits},
            {"plan", recipe::to_json(o.best_workload.plan)},
            {"prediction", to_json(o.best)}}},
          {"baseline",
           {{"tokens_per_s_per_gpu", o.baseline.tokens_per_s_per_gpu},
            {"plan", recipe::to_json(o.baseline_workload.plan)},
            {"prediction", to_json(o.baseline)}}},
          {"speedup", o.baseline.tokens_per_s_per_gpu > 0
                          ? nlohmann::json(o.best.tokens_per_s_per_gpu / o.baseline.tokens_per_s_per_gpu)
                          : nlohmann::json(nullptr)},
          {"searched", o.searched},
          {"candidates_tried", o.candidates_tried},
          {"notes", o.notes}};
}

}  // namespace attune::sim
