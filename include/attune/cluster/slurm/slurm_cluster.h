// SlurmCluster: the `slurm` backend of Cluster — launches an approved recipe's
// run as a Slurm batch job and follows it with Slurm's own tools (sbatch,
// squeue, sacct, scancel), on a real cluster or on the mock one
// (scripts/mock-slurm, docs/clusters.md). Every tool runs through
// run_process: an argv, never a shell line, with SLURM_CONF set to the
// cluster's slurm_conf when it names one, and bounded by command_timeout_s.
// The batch script (sbatch_job) quotes every value of the spec, so nothing
// from a recipe is ever interpreted by a shell.
//
// Jobs outlive the SlurmCluster (attune may restart): the destructor cancels
// nothing, and find_run / attach adopt a job again by its name or id.
//
// Not thread-safe: one thread drives a SlurmCluster. Every wait is bounded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"
#include "attune/cluster/slurm/slurm_state.h"
#include "attune/util/subprocess.h"

namespace attune::cluster {

struct SlurmClusterOptions {
  double command_timeout_s = 30;  // each sbatch / squeue / sacct / scancel call
  std::string bin_dir;            // where the Slurm tools are ("" = on PATH)
  double cancel_wait_s = 30;      // how long cancel() waits for the job to end
};

class SlurmCluster : public Cluster {
 public:
  explicit SlurmCluster(ClusterDefinition def, SlurmClusterOptions options = {});
  ~SlurmCluster() override = default;

  // The backend's name in cluster definitions (backend_registry.h).
  static constexpr std::string_view kBackend = "slurm";

  std::string name() const override { return def_.name; }

  // Refuses a launch prepared for another cluster; checks its spec and
  // builds the job (sbatch_job: nodes >= 1, gpus >= 1, a
  // log path, no control characters in option values, ...), writes the batch
  // script to `<log_path>.sbatch` (atomically; parent directories created),
  // and runs `sbatch <options> <script>`. A relative log path counts from
  // attune's working directory. RunId{name(), "<job id>"}. A refusal is a
  // ClusterError "cluster 'NAME' refused run 'RUN': <what it means> (<sbatch's
  // last line>)"; an sbatch that timed out is a ClusterError saying the job
  // may have been submitted all the same (find_run would find it).
  RunId submit(const Launch& launch) override;

  // The job's state: live from squeue (-t all, so finished jobs too until the
  // controller forgets them after MinJobAge), then from sacct, then from sacct
  // -c (the job completion file, which works without slurmdbd). elapsed_s =
  // the job's run time (0 while pending) x the cluster's time_scale; reason =
  // Slurm's words for final states ("FAILED NonZeroExitCode 3:0", "TIMEOUT
  // TimeLimit"). A final status is cached: later polls call nothing. A job
  // that none of the three knows any more ends Failed ("Slurm no longer knows
  // job N"). ClusterError for an id this cluster does not track, or when
  // Slurm cannot be asked (the controller is down and sacct does not know).
  RunStatus poll(const RunId& id) override;

  // `scancel ID`, then waits (cancel_wait_s, polling with a backoff from 0.2 s
  // to 2 s) until the job is final: Cancelled, or whatever it ended as if it
  // ended first. A final run is left as it is. ClusterError if scancel fails
  // or the job is still not final after the wait.
  void cancel(const RunId& id) override;

  // The text of the run's log file so far ("" if it does not exist yet).
  std::string log(const RunId& id) override;

  // Tracks a job launched before a restart (spec as it was launched):
  // ClusterError "run NAME:ID is gone" if squeue, sacct and sacct -c all do
  // not know it.
  void attach(const RunId& id, const RunSpec& spec) override;

  // The newest job named exactly spec.name: from squeue (-t all), else from
  // sacct (the last 7 days), else from sacct -c. nullopt when none knows one.
  std::optional<RunId> find_run(const RunSpec& spec) override;

 private:
  struct Run {
    std::string job_id;
    RunSpec spec;
    bool final = false;  // status is final and cached
    RunStatus status;
  };

  // Runs a Slurm tool (bin_dir/program or program on PATH) with SLURM_CONF set.
  ProcessResult slurm(const std::string& program, const std::vector<std::string>& args) const;
  // The job as squeue, else sacct, else sacct -c reports it; nullopt when all
  // of them answered and none knows it; ClusterError when it cannot be told.
  std::optional<SlurmJobInfo> query(const std::string& job_id) const;
  Run& find(const RunId& id);
  std::string run_text(const std::string& job_id) const;  // "NAME:ID"

  ClusterDefinition def_;
  SlurmClusterOptions options_;
  std::map<std::string, Run> runs_;  // by job id
};

}  // namespace attune::cluster
