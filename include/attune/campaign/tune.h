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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/campaign/tune_result.h"
#include "attune/cluster/backend_registry.h"
#include "attune/gate/correctness_gate.h"
#include "attune/policy/policy.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/hardware.h"
#include "attune/util/clock.h"

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
  // false: the campaign's files are not fsynced and the ones only a resume
  // reads are not written (a simulated bench campaign, never resumed, whose
  // crash loses nothing worth keeping).
  bool durable = true;
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

// What a campaign runs on, swapped in tests: the cluster (made from the
// chosen definition, as the backend registry makes it by default) and the
// clock its runs are watched by (the real one by default). A test drives the
// whole loop with a fake cluster and a fake clock.
struct TuneServices {
  std::function<std::unique_ptr<cluster::Cluster>(const cluster::ClusterDefinition&, const cluster::SimulationContext&)>
      make_cluster;
  Clock* clock = nullptr;
};

// InputError for a bad request (a budget missing or malformed, an unknown
// cluster or policy, a directory another tune holds, a refused baseline).
TuneResult run_tune(const TuneRequest& request, const TuneHooks& hooks = {}, const TuneServices& services = {});


}  // namespace attune::campaign
