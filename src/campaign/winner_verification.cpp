#include "attune/campaign/winner_verification.h"

#include <fmt/format.h>

namespace attune::campaign {

namespace {

LossCheck check_rerun(const RunMeasure& m, const Trial& base) {
  if (m.ok) return compare_loss(m.loss, base.losses[0], base.losses[1]);
  LossCheck check;
  check.suspect = true;
  check.comparable = true;
  check.why = "the winner failed when re-run: " + m.failure;
  return check;
}

}  // namespace

VerificationOutcome verify_winner(CampaignParts& parts, TrialRuns& runs, std::vector<Trial>& trials,
                                  const TrialJudge::Redecided& on_redecided,
                                  const std::function<void(const std::string&)>& note) {
  while (parts.incumbent_n() != 0) {
    Trial& best = trials.at(static_cast<std::size_t>(parts.incumbent_n()));
    const Trial& base = trials.front();
    if (base.losses.size() < 2)
      return {"unknown (the baseline has fewer than two loss curves to measure its spread)", false};
    const auto m = runs.measure(best, "verify", 1);  // recalled from the journal when it ran before
    if (!m) return {"unknown (no budget left to re-run the winner)", false};
    const nlohmann::json* done = parts.journal->find(ledger::EventKind::Verification, best.n);
    const LossCheck check = done ? loss_check_from_json(ledger::verified(*done).loss) : check_rerun(*m, base);
    parts.journal->record(ledger::Verified{best.n, to_json(check)});  // a suspect one takes the incumbent back
    if (!check.comparable) return {"unknown (" + check.why + ")", false};
    if (!check.suspect) return {"passed (" + check.why + ")", false};
    note(fmt::format("trial {} is suspect: {}", best.n, check.why));
    const bool failed = check.steps == 0;  // it failed when re-run: no loss to compare
    best.obs.outcome = failed ? policy::TrialOutcome::Failed : policy::TrialOutcome::Demoted;
    best.obs.reason = "suspect: " + check.why;
    if (failed) best.obs.failure = m->failure;
    on_redecided(best, failed ? "failed_on_rerun" : "suspect", check.why);
    if (failed && parts.budget->left() > runs.expected_cost(3)) return {"", true};
  }
  return {"not needed (the recipe as written stays best)", false};
}

}  // namespace attune::campaign
