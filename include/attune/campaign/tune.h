// Tune: the campaign (`attune tune`). It measures the recipe (two baseline
// runs: its throughput and its run-to-run noise), then repeats: the policy
// sees the history and the incumbent's latest diagnosis and proposes one lever
// (or a combination that only pays off together); the adapter adds the
// follow-ups that keep the objective; the gate refuses (no GPU time; the
// reason goes back to the policy) or approves; the approved candidate is
// screened with a short run, confirmed with a longer one if it may win, and
// kept only if it beats the incumbent by more than the noise (acceptance.h);
// a failure is recorded with its class and teaches the policy. It stops when
// the budget cannot pay for another run, at --max-trials, after `patience`
// trials without a new best, or when the policy has nothing worth trying.
// Then it re-runs the winner and compares its loss with the baseline's
// (loss_check.h), writes best/ (the tuned recipe in the original's format and
// a unified diff of it) and the summary, and appends its lessons.
//
// The campaign directory is the single source of truth (ledger/ledger.h):
// `--resume DIR` re-runs the loop and recalls every proposal and finished run
// from the journal, re-attaching to runs still in flight; every event the
// loop records again is found in the journal, so only what is new is
// appended, and the incumbent is always what the journal's records say. A lock on the
// directory keeps a second `tune` out.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/gate/correctness_gate.h"
#include "attune/policy/policy.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/hardware.h"

namespace attune::campaign {

struct TuneRequest {
  std::string file;                   // recipe, wrapper or scenario
  recipe::RecipeOptions options;
  std::string cluster = "sim";
  std::string clusters_file;
  std::optional<double> budget_gpu_hours;  // none: the scenario's own budget (an error for a plain recipe)
  std::string policy = "rules";
  policy::PolicySettings policy_settings;  // the LLM's, for llm and hybrid
  std::string out_dir;                // "" = campaigns/<recipe>-<time>
  std::string resume_dir;             // carry on the campaign in this directory
  int max_trials = 0;                 // 0: no limit
  int parallel = 1;
  int patience = 12;                  // trials without a new best before stopping
  gate::GateOptions gate;
  std::optional<std::uint64_t> seed;  // the campaign's seed (none: a fresh one)
  std::string lessons_file;           // "" = the default store
  bool use_lessons = true;
  double hang_factor = 10;
  double startup_allowance_s = 900;
  // The scenario's true optimum under this gate, known already (a bench
  // scores every campaign against the one it computed): not searched again.
  std::optional<double> true_optimum_tokens_per_s_per_gpu;
  // false: the campaign's files are not fsynced and the ones only a resume
  // reads are not written (a simulated bench campaign, never resumed, whose
  // crash loses nothing worth keeping).
  bool durable = true;
};

struct TrialRecord {
  int trial = 0;
  int parent = 0;
  std::string label;                  // "tp 2 -> 4, mbs 1 -> 2"
  std::string rule, stage, why;
  std::string outcome;                // policy::TrialOutcome names
  std::string reason;
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> predicted_gain;
  double gpu_hours = 0;
  int runs = 0;
};

// One setting of the tuned recipe that differs from the recipe as written,
// as the recipe spells it ("" = not set); its lever's name when it has one.
struct BestEdit {
  std::string key, lever, from, to;
};

struct TuneResult {
  std::string dir;
  std::string policy, cluster;
  double baseline_tokens_per_s_per_gpu = 0;
  double best_tokens_per_s_per_gpu = 0;
  double gain = 0;
  int best_trial = 0;
  std::vector<BestEdit> best_edits;   // the final recipe's settings that differ from the original's
  std::vector<std::string> best_changes;  // the file changes, follow-ups included
  double gpu_hours = 0, budget_gpu_hours = 0;
  int trials = 0, launches = 0, failed_launches = 0, refused = 0;
  std::string stop_reason;
  std::string verification;           // passed | suspect (...) | not needed | unknown (...)
  std::string best_recipe, best_diff; // paths under best/
  std::optional<double> true_tokens_per_s_per_gpu;  // sim cluster + scenario, after the campaign
  std::optional<double> true_optimum_tokens_per_s_per_gpu;
  // The benchmark's score of the final recipe: its true throughput x (1 -
  // its late-OOM risk) / the true optimum (0 when it fails or is refused).
  // A recipe near the memory limit can out-run the optimum, which only counts
  // settings that never OOM, and still fail a share of long runs.
  std::optional<double> true_oom_risk;
  std::optional<double> true_score;
  std::vector<TrialRecord> history;
  double attune_seconds_per_trial = 0;   // attune's own work (policy, gate, journal, diagnosis)
  nlohmann::json policy_usage;           // what the policy consumed (the LLM's calls, tokens, cost); null: nothing
  std::vector<std::string> policy_notes; // what the policy said during the campaign (an LLM falling back to rules)
  std::string report;                    // report.html (report.md beside it); "" when it could not be written
  bool interrupted = false;
};

struct TuneProgress {
  int trial = 0;
  std::string doing;                  // "baseline run 1", "trial 3 (tp 2 -> 4) screening"
  double run_elapsed_s = 0;           // of the run in flight (the cluster's seconds)
  double best_tokens_per_s_per_gpu = 0;
  double gain = 0;
  double spent_gpu_hours = 0, budget_gpu_hours = 0;
};

struct TuneHooks {
  std::function<bool()> interrupted;
  std::function<void(const TuneProgress&)> on_progress;
  std::function<void(const TrialRecord&)> on_trial;
  std::function<void(const std::string&)> on_note;
};

// InputError for a bad request (a budget missing or malformed, an unknown
// cluster or policy, a directory another tune holds, a refused baseline).
TuneResult run_tune(const TuneRequest& request, const TuneHooks& hooks = {});

// {"baseline": {"tokens_per_s_per_gpu"}, "best": {"tokens_per_s_per_gpu", "edits": [{lever, from, to}],
// "true_tokens_per_s_per_gpu"?, "true_optimum_tokens_per_s_per_gpu"?, "true_oom_risk"?, "true_score"?}, "gain", "gpu_hours", "trials", "failed_launches", "refused",
// "stop_reason", ...}
nlohmann::json to_json(const TuneResult& r);

}  // namespace attune::campaign
