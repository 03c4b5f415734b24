#include "attune/policy/candidates.h"

#include "attune/sim/optimum.h"
#include "attune/sim/recipe_levers.h"
#include "attune/util/error.h"

namespace attune::policy {

std::string setting_key(const sim::Workload& w) {
  std::string key;
  for (const auto& [name, value] : sim::dimension_values(w)) {
    key += name;
    key += '=';
    key += value;
    key += ';';
  }
  return key;
}

std::vector<std::string> moved_dimensions(const sim::Workload& from, const sim::Workload& to) {
  std::vector<std::string> out;
  const auto a = sim::dimension_values(from), b = sim::dimension_values(to);
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].second != b[i].second) out.push_back(a[i].first);
  }
  return out;
}

CandidateSpace::CandidateSpace(const recipe::Recipe& original, const gate::CorrectnessGate& gate)
    : base_(sim::workload_from_recipe(original)), space_(sim::gated_space(original, base_, gate)) {}

std::vector<sim::Workload> CandidateSpace::one_lever_moves(const sim::Workload& from) const {
  return sim::one_lever_moves(from, base_, space_);
}

std::optional<Proposal> CandidateSpace::proposal_to(const recipe::Recipe& incumbent, const sim::Workload& from,
                                                    const sim::Workload& to, std::string& why) const {
  std::vector<sim::DimensionEdit> edits;
  try {
    edits = sim::edits_between(incumbent, from, to);
  } catch (const InputError& e) {
    why = e.message();
    return std::nullopt;
  }
  if (edits.empty()) {
    why = "no change";
    return std::nullopt;
  }
  Proposal p;
  p.setting = setting_key(to);
  for (const sim::DimensionEdit& e : edits) {
    DimensionChange c{e.name, e.from, e.to, {}};
    for (const sim::LeverSetting& s : e.settings) c.settings.push_back({s.lever, s.value});
    p.changes.push_back(std::move(c));
  }
  return p;
}

const sim::Workload* workload_of(const std::vector<Observation>& history, int trial) {
  for (const Observation& o : history) {
    if (o.trial == trial && o.workload) return &*o.workload;
  }
  return nullptr;
}

bool tried(const std::vector<Observation>& history, const sim::Workload& w) {
  const std::string key = setting_key(w);
  for (const Observation& o : history) {
    if ((o.workload && setting_key(*o.workload) == key) || o.proposal.setting == key) return true;
  }
  return false;
}

}  // namespace attune::policy
