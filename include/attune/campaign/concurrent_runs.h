// ConcurrentRuns: several runs of one campaign in flight at once (`attune
// tune --parallel N`). Each run goes through run_in_directory on its own
// thread; the hooks are called one at a time (the caller's code need not be
// thread-safe), and progress reports the runs together: their labels and
// the longest elapsed time. The cluster must take calls from several threads
// (cluster::SerializedCluster). One run runs on the calling thread.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "attune/campaign/directory_run.h"

namespace attune::campaign {

struct ConcurrentRun {
  const gate::ApprovedRecipe* approved = nullptr;
  DirectoryRunRequest request;
  std::string label;                  // "trial 3 (tp 2 -> 4) screen"
  DirectoryRunResult result;          // when error is empty
  std::exception_ptr error;           // what run_in_directory threw
  double seconds = 0;                 // wall time of the run
};

struct ConcurrentRunHooks {
  std::function<bool()> interrupted;
  std::function<void(const std::string& doing, double elapsed_s)> on_progress;
  std::function<void(const std::string&)> on_note;
  Clock* clock = nullptr;  // the runs' time (nullptr: the real clock)
};

// Returns when every run has ended (or thrown: its error is kept, the others go on).
void run_concurrently(cluster::Cluster& cluster, const cluster::ClusterDefinition& definition,
                      std::vector<ConcurrentRun>& runs, const ConcurrentRunHooks& hooks);

}  // namespace attune::campaign
