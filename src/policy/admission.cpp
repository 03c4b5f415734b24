#include "attune/policy/admission.h"

#include <fmt/format.h>

#include "attune/recipe/recipe_diff.h"

namespace attune::policy {

std::string refusal_reasons(const gate::Verdict& v) {
  std::string out;
  for (const auto& r : v.reasons) out += (out.empty() ? "" : "; ") + r.message;
  return out;
}

Admission admit(const Proposal& proposal, const recipe::Recipe& incumbent, const recipe::Recipe& original,
                const gate::CorrectnessGate& gate, const std::vector<Observation>& history) {
  Admission a;
  a.edited = apply_proposal(incumbent, proposal, a.why, &a.described);
  if (!a.edited) return a;
  a.identity = recipe::settings_identity(*a.edited);
  if (a.identity == recipe::settings_identity(incumbent)) {
    a.kind = AdmissionKind::NoChange;
    a.why = "no change: the incumbent has that value already";
    return a;
  }
  for (const Observation& o : history) {
    const bool tried = o.runs > 0 || o.outcome == TrialOutcome::Pending;
    if (!tried || o.recipe_identity.empty() || o.recipe_identity != a.identity) continue;
    a.kind = AdmissionKind::Repeat;
    a.repeat_of = o.trial;
    a.why = fmt::format("the recipe of trial {}, measured already", o.trial);
    return a;
  }
  gate::CorrectnessGate::Judgement j = gate.judge(original, *a.edited);
  a.verdict = std::move(j.verdict);
  if (!j.approved) {
    a.kind = AdmissionKind::Refused;
    a.why = refusal_reasons(*a.verdict);
    return a;
  }
  a.kind = AdmissionKind::Admitted;
  a.why.clear();
  a.approved = std::move(j.approved);
  return a;
}

}  // namespace attune::policy
