#include "attune/policy/baseline_policies.h"

#include <algorithm>
#include <random>
#include <set>

#include <fmt/format.h>

#include "attune/sim/layout_search.h"
#include "attune/sim/optimum.h"
#include "attune/sim/recipe_levers.h"

namespace attune::policy {

namespace {

CandidateSpace& space_of(std::unique_ptr<CandidateSpace>& space, const PolicyContext& c) {
  if (!space) space = std::make_unique<CandidateSpace>(c.original, c.gate);
  return *space;
}

// The untried one-lever moves of the incumbent that the recipe can spell.
std::vector<std::pair<sim::Workload, Proposal>> spellable_moves(CandidateSpace& space, const PolicyContext& c,
                                                                const sim::Workload& inc) {
  std::vector<std::pair<sim::Workload, Proposal>> out;
  for (const sim::Workload& w : space.one_lever_moves(inc)) {
    if (tried(c.history, w)) continue;
    std::string why;
    if (auto p = space.proposal_to(c.incumbent, inc, w, why)) out.emplace_back(w, std::move(*p));
  }
  return out;
}

// Dimension=value pairs proposed so far, from any incumbent.
std::set<std::string> proposed_values(const std::vector<Observation>& history) {
  std::set<std::string> out;
  for (const Observation& o : history) {
    for (const DimensionChange& d : o.proposal.changes) out.insert(d.dimension + "=" + d.to);
  }
  return out;
}

}  // namespace

PolicyAnswer RandomPolicy::propose(const PolicyContext& c) {
  CandidateSpace& space = space_of(space_, c);
  const sim::Workload inc = sim::workload_from_recipe(c.incumbent);
  auto moves = spellable_moves(space, c, inc);
  if (moves.empty()) return {std::nullopt, "every one-lever edit of the incumbent has been tried"};
  std::mt19937_64 rng(c.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(c.trial));
  std::uniform_int_distribution<std::size_t> pick(0, moves.size() - 1);
  Proposal p = std::move(moves[pick(rng)].second);
  p.rule = "random";
  p.stage = "search";
  p.why = fmt::format("drawn uniformly from {} untried one-lever edits", moves.size());
  return {std::move(p), ""};
}

PolicyAnswer GridPolicy::propose(const PolicyContext& c) {
  CandidateSpace& space = space_of(space_, c);
  const sim::Workload inc = sim::workload_from_recipe(c.incumbent);
  const std::set<std::string> done = proposed_values(c.history);
  auto moves = spellable_moves(space, c, inc);
  // Lever by lever in the simulator's (the catalog's) order, values in the order the space lists them.
  std::vector<std::string> order;
  for (const auto& [name, value] : sim::dimension_values(inc)) order.push_back(name);
  std::stable_sort(moves.begin(), moves.end(), [&](const auto& a, const auto& b) {
    const auto pos = [&](const Proposal& p) {
      return std::find(order.begin(), order.end(), p.changes.front().dimension) - order.begin();
    };
    return pos(a.second) < pos(b.second);
  });
  for (auto& [w, p] : moves) {
    if (p.changes.size() != 1 || done.count(p.changes.front().dimension + "=" + p.changes.front().to)) continue;
    p.rule = "grid";
    p.stage = "search";
    p.why = fmt::format("next value of {} in the grid", p.changes.front().dimension);
    return {std::move(p), ""};
  }
  return {std::nullopt, "the grid is exhausted: every value of every lever has been tried"};
}

PolicyAnswer PlannerPolicy::propose(const PolicyContext& c) {
  CandidateSpace& space = space_of(space_, c);
  if (!plan_) {
    const sim::SearchResult found = sim::search_layouts(space.base(), space.space(), {}, 1);
    plan_ = found.best.empty() ? space.base() : found.best.front().workload;
  }
  const sim::Workload inc = sim::workload_from_recipe(c.incumbent);
  const std::set<std::string> done = proposed_values(c.history);
  std::string why;
  std::optional<Proposal> all = space.proposal_to(c.incumbent, inc, *plan_, why);
  if (!all) return {std::nullopt, why == "no change" ? "the planner's plan is applied" : "the planner's plan cannot be spelled: " + why};
  for (DimensionChange& d : all->changes) {
    if (done.count(d.dimension + "=" + d.to)) continue;
    Proposal p;
    p.changes.push_back(std::move(d));
    p.rule = "planner";
    p.stage = "search";
    p.why = "one edit of the nominal model's optimum";
    return {std::move(p), ""};
  }
  return {std::nullopt, "every edit of the planner's plan has been tried"};
}

}  // namespace attune::policy
