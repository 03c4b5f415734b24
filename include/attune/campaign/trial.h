// Trial: one candidate recipe of a campaign as the loop holds it — its
// proposal, the recipe the gate approved, its directory, every run it made
// (the acceptance test's arm, the loss curves the verification compares, the
// step times and peak memory) and the Observation the policy reads of it.
// Trial 0 is the recipe as written. absorb() is how a run's measurement,
// made now or recalled from the journal, becomes part of its trial.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/loss_check.h"
#include "attune/campaign/run_measure.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/gate/approved_recipe.h"
#include "attune/policy/observation.h"
#include "attune/policy/proposal.h"

namespace attune::campaign {

struct Trial {
  int n = 0;
  int parent = 0;
  policy::Proposal proposal;
  std::optional<gate::ApprovedRecipe> approved;
  std::string dir;
  Arm arm;
  std::vector<LossCurve> losses;
  std::vector<double> step_times;
  std::optional<double> peak_reserved_gib;
  std::optional<diagnose::Diagnosis> last_diagnosis;
  std::vector<std::string> described;   // the file changes of its proposal
  policy::Observation obs;
  int runs = 0;
};

// Counts the run and adds what it measured: a failure marks the trial's
// observation failed with its evidence; a measurement joins the arm, the
// losses, the step times and the 95% interval of the mean over every block.
void absorb(Trial& t, const RunMeasure& m);

}  // namespace attune::campaign
