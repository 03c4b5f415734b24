// CampaignData: what a finished (or interrupted) campaign directory says,
// read back for the report and the export. Everything comes from the
// directory itself (journal.jsonl, summary.json, campaign.json, the runs'
// diagnosis.json and wrapper files, best/), so a directory copied elsewhere
// reads the same. Damaged input (a truncated journal line, a diagnosis that
// is not JSON, a field of the wrong kind) is left out and named in
// `problems`, never a crash.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/hardware.h"

namespace attune::report {

struct Interval {
  double low = 0, high = 0;
};

// One finished run of a trial as the journal keeps it.
struct RunRecord {
  int run = 0;
  std::string purpose;                   // baseline | screen | confirm | verify | ...
  bool ok = false;
  double gpu_hours = 0;
  std::optional<double> tokens_per_s_per_gpu;
  std::vector<double> blocks;            // block throughputs of its steady state
  std::optional<double> peak_memory_gib; // measured peak (the journal's, else the run's diagnosis.json)
  std::string dir;                       // relative to the campaign: trials/0001-tp/run-1 ("" when not found)
};

struct TrialRow {
  int trial = 0;
  int parent = 0;
  std::string label;                     // "tp 2 -> 1, recompute full -> none"
  std::string lever, value;              // the proposal's levers and values ("tp, recompute" / "1, none")
  std::string rule, why;                 // the policy's reason for proposing it
  std::string outcome;                   // baseline | accepted | rejected | failed | refused | ... ("" not judged yet)
  std::string verdict;                   // the last acceptance verdict ("accept: +49% > 4%"), else the trial's reason
  std::optional<double> tokens_per_s_per_gpu;  // median of its measured runs; none when nothing was measured
  std::optional<Interval> interval;      // 95% interval of the mean over its runs' blocks
  std::optional<double> memory_gib;      // highest measured peak over its runs
  std::optional<double> predicted_memory_gib;
  std::string failure, evidence;         // failure class and the log line that shows it
  double gpu_hours = 0;
  std::vector<RunRecord> runs;
  std::vector<std::string> llm_reasoning; // per tool call of the model: "propose(tp = 1): rationale"
};

// The incumbent's throughput once `gpu_hours` had been spent.
struct BestPoint {
  double gpu_hours = 0;
  double tokens_per_s_per_gpu = 0;
  int trial = 0;
};

struct BestFile {
  std::string name;                      // best/<name>
  std::string text;
};

struct CampaignData {
  std::string dir;
  nlohmann::json inputs;                 // the campaign's inputs (journal or campaign.json); null when lost
  nlohmann::json summary;                // summary.json (or the journal's finished event); null when unfinished
  std::vector<TrialRow> trials;          // by trial number
  std::vector<BestPoint> best_so_far;    // in journal order
  double gpu_hours = 0;                  // every finished run's charge
  std::optional<double> gpu_memory_gib;  // what one GPU can hold (the diagnosis, else the GPU catalog)
  std::string framework, model;          // "" unknown
  std::string framework_version;         // the baseline wrapper's `framework_version` ("" = not said)
  std::string container_image;           // the baseline wrapper's launch.container.image ("" = none)
  recipe::Hardware hardware;
  std::vector<BestFile> best_diffs;      // best/*.diff
  std::vector<BestFile> best_files;      // best/<tuned recipe>
  nlohmann::json verification;           // the verification event (trial, loss); null when none
  std::vector<std::string> llm_stop_reasoning;  // the model's reasons for ending the search
  std::vector<std::string> problems;     // damaged or missing input, each naming file and line

  const TrialRow* trial(int n) const;
};

// InputError when `dir` holds neither journal.jsonl nor summary.json.
CampaignData read_campaign(const std::string& dir);

}  // namespace attune::report
