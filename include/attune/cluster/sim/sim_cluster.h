// SimCluster: the `sim` backend — runs each approved recipe through the
// simulator in-process and at once: the log the framework would print lands
// at the run's log path, the run ends as the simulated run does (completed;
// failed with the framework's error at the step and time it strikes; a node
// failure; a hang that attune's watchdog would cancel), and elapsed time is
// the simulated wall time from launch (start-up included), so GPU-hour
// accounting and time limits behave as on a real cluster.
//
// A scenario's hidden truth lives here: the backend applies it to every run
// and nothing upstream reads it. Each launch draws fresh noise from the
// campaign's seed (cluster::launch_seed: launch k of a campaign with seed S
// always draws the same).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "attune/cluster/cluster.h"
#include "attune/sim/perturbation.h"

namespace attune::cluster {

// What attune's hang watchdog (run_watch.h) does, for runs the simulator
// finishes before a watch could see them stall.
struct SimWatchdog {
  double hang_factor = 10;
  double min_hang_s = 120;
  double startup_allowance_s = 900;
};

class SimCluster : public Cluster {
 public:
  explicit SimCluster(sim::Perturbation truth = {}, std::uint64_t campaign_seed = 1, SimWatchdog watchdog = {});

  // The backend's name in cluster definitions (backend_registry.h).
  static constexpr std::string_view kBackend = "sim";

  std::string name() const override { return "sim"; }
  // Simulates launch.recipe() under the truth, with the spec's steps, time
  // limit and expected step time; refuses a launch not prepared for a sim cluster.
  RunId submit(const Launch& launch) override;
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
  SimWatchdog watchdog_;
  long next_ = 1;
  std::map<std::string, Run> runs_;
};

}  // namespace attune::cluster
