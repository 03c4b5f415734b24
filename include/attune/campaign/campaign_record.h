// CampaignRecord: a campaign directory read back, read-only and tolerant of
// damage, for `attune replay`: every journal event with its line (a line that
// is not a JSON record — a truncated or edited line — is reported and
// skipped, never fatal), the inputs, and where each recorded file lies now.
// The directory is the source of truth: a file is looked for at its place
// under the directory first, and at the path the journal recorded only when
// it is not there — so a campaign copied to another machine, or copied and
// edited beside the original, is read from the copy. Nothing here opens a
// file for writing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/gate/correctness_gate.h"
#include "attune/recipe/hardware.h"
#include "attune/recipe/recipe.h"

namespace attune::campaign {

struct RecordedEvent {
  int line = 0;  // 1-based line of journal.jsonl
  nlohmann::json event;
};

// Input replay could not read, and what it did instead.
struct DamagedInput {
  std::string where;   // a path relative to the campaign directory, with ":line" for a journal line
  std::string what;
};

// The campaign's inputs, as the journal's first event keeps them.
struct CampaignInputs {
  std::string file;                  // recipe, wrapper or scenario, as named on the campaign's machine
  recipe::RecipeOptions options;
  gate::GateOptions gate;
  std::string policy, cluster;
  double budget_gpu_hours = 0;
  std::uint64_t seed = 1;
};

// The original recipe and the file it was read from.
struct OriginalRecipe {
  std::optional<recipe::Recipe> recipe;   // none when neither the inputs' file nor a launched copy loads
  std::string source;                     // the file loaded
};

// Reads `path` as JSON Lines: each record with its line; a line that is not
// a JSON object goes into `damaged` (named by `name` and its line). A
// missing or unreadable file is one damaged entry and no records.
std::vector<RecordedEvent> read_json_lines(const std::string& path, const std::string& name,
                                           std::vector<DamagedInput>& damaged);

class CampaignRecord {
 public:
  // InputError naming DIR when it holds no journal.jsonl, or naming the
  // journal's first line when it is not the campaign's inputs.
  explicit CampaignRecord(std::string dir);

  const std::string& dir() const { return dir_; }
  const std::vector<RecordedEvent>& events() const { return events_; }
  const CampaignInputs& inputs() const { return inputs_; }
  // What reading the journal found damaged (more is found while replaying).
  const std::vector<DamagedInput>& damaged() const { return damaged_; }

  // Run `run` of `trial`: DIR/trials/NNNN-*/run-K, else the journal's
  // `recorded` directory (reported in `damaged`: it is not this campaign
  // directory's, so it may be another copy's); "" when neither exists.
  std::string run_dir(int trial, int run, const std::string& recorded, std::vector<DamagedInput>& damaged) const;
  // The run's log in `run_dir`: run.log, else run.log.gz, else the log path
  // the run's own journal names; "" when none is a regular file.
  std::string run_log(const std::string& run_dir, std::vector<DamagedInput>& damaged) const;
  // The run's spec as its directory's journal recorded it at launch; none when unreadable.
  std::optional<nlohmann::json> run_spec(const std::string& run_dir, std::vector<DamagedInput>& damaged) const;
  // The recipe as launched in `run_dir` (its *.attune.yaml wrapper); none when there is none that loads.
  std::optional<recipe::Recipe> launched_recipe(const std::string& run_dir, std::vector<DamagedInput>& damaged) const;
  // The original recipe: the inputs' file where it exists, else the copy
  // the baseline launched (trials/0000-baseline/run-K/).
  OriginalRecipe original(std::vector<DamagedInput>& damaged) const;
  // `path` relative to the campaign directory when it lies inside it.
  std::string relative(const std::string& path) const;

 private:
  std::string trial_dir(int trial) const;

  std::string dir_;
  std::vector<RecordedEvent> events_;
  CampaignInputs inputs_;
  std::vector<DamagedInput> damaged_;
};

}  // namespace attune::campaign
