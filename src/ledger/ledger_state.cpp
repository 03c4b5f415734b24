#include "attune/ledger/ledger_state.h"

#include <algorithm>

#include "attune/ledger/journal_event.h"

namespace attune::ledger {

namespace {

TrialState& trial_at(LedgerState& s, int n) {
  TrialState& t = s.trials[n];
  t.trial = n;
  return t;
}

// `n` becomes the incumbent, accepted over the one before it.
bool accept(LedgerState& s, int n, int over) {
  if (n == s.incumbent) return false;
  trial_at(s, n).parent = over;
  s.incumbent = n;
  return true;
}

bool become(LedgerState& s, int n) {
  if (n == s.incumbent) return false;
  s.incumbent = n;
  return true;
}

}  // namespace

const TrialState* LedgerState::trial(int n) const {
  const auto it = trials.find(n);
  return it == trials.end() ? nullptr : &it->second;
}

std::optional<double> LedgerState::incumbent_tokens_per_s_per_gpu() const {
  const TrialState* t = trial(incumbent);
  if (!t || t->run_tokens.empty()) return std::nullopt;
  std::vector<double> v = t->run_tokens;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

bool apply(LedgerState& s, const nlohmann::json& record) {
  switch (kind_of(record)) {
    case EventKind::Proposal: {
      const ProposalMade p = proposal_made(record);
      trial_at(s, p.trial).parent = p.parent;
      return false;
    }
    case EventKind::RunFinished: {
      const RunFinished r = run_finished(record);
      TrialState& t = trial_at(s, r.trial);
      s.spent_gpu_hours += r.gpu_hours;
      ++s.finished_runs;
      s.gpu_hours_per_steps_factor += r.gpu_hours / std::max(1, r.steps_factor);
      t.gpu_hours += r.gpu_hours;
      ++t.runs;
      if (const auto tokens = measurement_tokens(r.measurement)) t.run_tokens.push_back(*tokens);
      return false;
    }
    case EventKind::Verdict: {
      const VerdictGiven v = verdict_given(record);
      if (verdict_decision(v.verdict) != "accept") return false;
      return accept(s, v.trial, v.against >= 0 ? v.against : s.incumbent);
    }
    case EventKind::Trial: {
      const TrialDecided d = trial_decided(record);
      TrialState& t = trial_at(s, d.trial);
      t.outcome = d.outcome;
      t.decided_tokens_per_s_per_gpu = d.tokens_per_s_per_gpu;
      // A journal without verdict events says it here.
      if (d.outcome == "accepted") return accept(s, d.trial, s.incumbent);
      if (d.outcome == "baseline") return become(s, d.trial);
      return false;
    }
    case EventKind::Rescreened: {
      const Rescreened r = rescreened(record);
      trial_at(s, r.trial).outcome = r.outcome;
      return r.outcome == "accepted" && accept(s, r.trial, s.incumbent);
    }
    case EventKind::Demoted: {
      const Demoted d = demoted(record);
      trial_at(s, d.trial).outcome = "demoted";
      return become(s, d.back_to);
    }
    case EventKind::Verification: {
      const Verified v = verified(record);
      if (!loss_suspect(v.loss) || v.trial != s.incumbent || v.trial == 0) return false;
      TrialState& t = trial_at(s, v.trial);
      t.outcome = "suspect";
      return become(s, t.parent);
    }
    case EventKind::Finished:
      s.finished = true;
      return false;
    default:
      return false;
  }
}

}  // namespace attune::ledger
