#include "attune/campaign/trial_judge.h"

#include <fmt/format.h>

namespace attune::campaign {

using policy::TrialOutcome;

double TrialJudge::noise_cv() const {
  std::vector<const Arm*> arms;
  for (const Trial& t : trials_) arms.push_back(&t.arm);
  return run_to_run_cv(arms);
}

double TrialJudge::min_gain_now() const { return min_gain(rule_, noise_cv(), 2, incumbent().arm.run_means.size()); }

bool TrialJudge::remeasure_incumbent() {
  Trial& inc = incumbent();
  const auto m = runs_.measure(inc, "remeasure", 1);
  if (!m) return false;
  if (inc.n == 0 || !m->ok) return true;
  Trial& parent = trials_.at(static_cast<std::size_t>(inc.parent));
  // Kept while it is still a close call or better: what takes it back is
  // evidence that it is not faster (a gain below half the threshold), not a
  // failure to prove again by a margin what it already proved once.
  const AcceptanceVerdict v = campaign::judge(inc.arm, parent.arm, noise_cv(), 0, rule_);
  if (v.decision != Decision::Reject) return true;
  parts_.journal->record(ledger::Demoted{inc.n, parent.n, to_json(v)});  // takes the incumbent back
  note_(fmt::format("trial {} re-measured: {}; back to trial {}", inc.n, v.why, parent.n));
  inc.obs.outcome = TrialOutcome::Demoted;
  inc.obs.reason = v.why;
  on_redecided_(inc, "demoted", v.why);
  return true;
}

void TrialJudge::judge(Trial& c) {
  int remeasures = 0;
  for (;;) {
    const Trial& inc = incumbent();
    const AcceptanceVerdict v = campaign::judge(c.arm, inc.arm, noise_cv(), remeasures, rule_);
    parts_.journal->record(ledger::VerdictGiven{c.n, inc.n, c.runs, to_json(v)});
    if (v.decision == Decision::Accept) {
      c.obs.outcome = TrialOutcome::Accepted;
      c.obs.reason = v.why;
      c.parent = inc.n;  // the verdict's record made it the incumbent
      c.obs.parent = inc.n;
      return;
    }
    if (v.decision == Decision::Reject) {
      c.obs.outcome = TrialOutcome::Rejected;
      c.obs.reason = v.why;
      return;
    }
    if (v.decision == Decision::Remeasure) {
      ++remeasures;
      const int before = parts_.incumbent_n();
      if (!remeasure_incumbent()) break;
      if (parts_.incumbent_n() != before) continue;  // the incumbent was taken back: judge against its parent
    }
    const bool confirm = v.decision == Decision::Confirm;
    const auto m = runs_.measure(c, confirm ? "confirm" : "remeasure", confirm ? 2 : 1);
    if (!m) break;
    if (!m->ok) {
      c.obs.outcome = TrialOutcome::Failed;
      return;
    }
  }
  c.obs.outcome = TrialOutcome::Rejected;
  c.obs.reason = "not confirmed: the budget or an interruption ended the measurements";
}

}  // namespace attune::campaign
