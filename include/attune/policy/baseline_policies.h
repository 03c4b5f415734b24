// The baseline policies a tuner must beat, under the same budget and gate:
//  - RandomPolicy (`random`): uniform over the legal one-lever edits of the
//    incumbent not tried yet, drawn from the campaign seed and the trial
//    number (a resumed campaign draws the same);
//  - GridPolicy (`grid`): every value of every lever the recipe can spell,
//    lever by lever in the catalog's order, each from the incumbent;
//  - PlannerPolicy (`planner`): what an automatic-parallelism planner does —
//    the nominal model's optimum for the recipe, applied as one trial per
//    edit, with no correction from what was measured.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "attune/policy/candidates.h"
#include "attune/policy/policy.h"

namespace attune::policy {

class RandomPolicy : public Policy {
 public:
  std::string name() const override { return "random"; }
  PolicyAnswer propose(const PolicyContext& context) override;

 private:
  std::unique_ptr<CandidateSpace> space_;
};

class GridPolicy : public Policy {
 public:
  std::string name() const override { return "grid"; }
  PolicyAnswer propose(const PolicyContext& context) override;

 private:
  std::unique_ptr<CandidateSpace> space_;
};

class PlannerPolicy : public Policy {
 public:
  std::string name() const override { return "planner"; }
  PolicyAnswer propose(const PolicyContext& context) override;

 private:
  std::unique_ptr<CandidateSpace> space_;
  std::optional<sim::Workload> plan_;   // the nominal optimum
};

}  // namespace attune::policy
