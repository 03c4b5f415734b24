// SimJob: one simulated run printed as its log — as fast as it is written
// (`attune sim run`), or paced like the real run (`attune sim job`, a mock
// cluster's payload): each step's lines when the simulated clock, divided by
// the time scale, reaches them, flushed, so whoever follows the file (a
// cluster backend, the hang watchdog) sees a run shaped like the real one.
#pragma once

#include <ostream>
#include <string>

#include "attune/campaign/sim_target.h"
#include "attune/sim/run_log.h"

namespace attune::campaign {

struct SimJobOptions {
  int steps = 50;
  std::string flavour;        // log format ("" = the recipe framework's)
  double time_scale = 0;      // simulated seconds per real second; 0 = do not pace
};

// Writes the log to `out`; how the run ended.
sim::RunOutcome run_sim_job(const SimTarget& t, const SimJobOptions& o, std::ostream& out);

// The same, appended to `log_file` (a cluster job's log); InputError for
// --log when it cannot be opened for writing.
sim::RunOutcome run_sim_job(const SimTarget& t, const SimJobOptions& o, const std::string& log_file);

}  // namespace attune::campaign
