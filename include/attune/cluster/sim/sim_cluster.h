// SimCluster: the `sim` backend — runs each approved recipe through the
// simulator in-process and at once: the log the framework would print lands
// at the run's log path, the run ends as the prediction says (completed, or
// failed with the framework's error), and elapsed time is the simulated wall
// time, so GPU-hour accounting and time limits behave as on a real cluster.
// Honours a scenario's hidden truth (--sim-perturb) and seed (--sim-seed).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "attune/cluster/cluster.h"
#include "attune/sim/perturbation.h"

namespace attune::cluster {

class SimCluster : public Cluster {
 public:
  explicit SimCluster(sim::Perturbation truth = {}, std::uint64_t seed = 1);

  std::string name() const override { return "sim"; }
  RunId submit(const gate::ApprovedRecipe& recipe, const RunSpec& spec) override;
  RunStatus poll(const RunId& id) override;
  void cancel(const RunId& id) override;
  std::string log(const RunId& id) override;
  void attach(const RunId& id, const RunSpec& spec) override;
  // By the status file beside spec.log_path, which names the run's id.
  std::optional<RunId> find_run(const RunSpec& spec) override;

 private:
  struct Run {
    RunSpec spec;
    RunStatus status;
  };
  const Run& find(const RunId& id) const;

  sim::Perturbation truth_;
  std::uint64_t seed_;
  long next_ = 1;
  std::map<std::string, Run> runs_;
};

}  // namespace attune::cluster
