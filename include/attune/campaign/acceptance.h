// Acceptance: when a candidate is really faster than the incumbent, under
// noise. The rule (docs/campaign.md gives its sources):
//  1. the unit of replication is the run; within a run, the steady-state
//     steps are cut into blocks whose means are the samples (batch means);
//  2. a one-sided Mann-Whitney U test of the candidate's block throughputs
//     against the incumbent's, at alpha 0.05 (Google Benchmark's compare.py,
//     Go's benchstat);
//  3. a minimum effect, like criterion's noise threshold and pyperf's
//     --min-speed: the median run's gain must exceed max(1%, 2 x the
//     measured run-to-run CV x sqrt(1/n + 1/m)) for n and m runs;
//  4. a screening run that may win (gain above half the threshold) is
//     confirmed by a second, longer run; a close call (significant but below
//     the threshold, or above it but not significant) is re-measured,
//     interleaved with the incumbent, at most twice; then it is rejected;
//  5. every verdict, with its numbers, goes into the journal.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::campaign {

// One side of the comparison: each run's median throughput and the block means of all runs.
struct Arm {
  std::vector<double> run_means;   // tokens/s/GPU per run
  std::vector<double> blocks;      // tokens/s/GPU per block, every run
};

struct AcceptanceRule {
  double alpha = 0.05;
  double min_effect = 0.01;
  double noise_k = 1.5;
  int max_remeasures = 2;
  int blocks_per_run = 4;
};

enum class Decision { Accept, Reject, Confirm, Remeasure };
std::string to_string(Decision d);  // "accept", "reject", "confirm", "remeasure"

struct AcceptanceVerdict {
  Decision decision = Decision::Reject;
  double gain = 0;        // median candidate run / median incumbent run - 1
  double threshold = 0;   // the minimum effect it had to beat
  double p_value = 1;     // one-sided U test
  std::string why;
};

// The block means of one run's steady-state step times, as throughputs:
// the run's median throughput scaled by median step / block mean step.
std::vector<double> block_throughputs(const std::vector<double>& step_times_s, double run_tokens_per_s_per_gpu,
                                      int blocks);
// One-sided p-value that `a` is stochastically larger than `b` (normal
// approximation with continuity and tie correction).
double mann_whitney_greater(const std::vector<double>& a, const std::vector<double>& b);
// The pooled run-to-run CV of the arms with two runs or more (log scale);
// `floor` when none has.
double run_to_run_cv(const std::vector<const Arm*>& arms, double floor = 0.005);
double min_gain(const AcceptanceRule& rule, double run_cv, std::size_t candidate_runs, std::size_t incumbent_runs);

AcceptanceVerdict judge(const Arm& candidate, const Arm& incumbent, double run_cv, int remeasures,
                        const AcceptanceRule& rule = {});

nlohmann::json to_json(const AcceptanceVerdict& v);

}  // namespace attune::campaign
