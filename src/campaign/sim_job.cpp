#include "attune/campaign/sim_job.h"

#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/ostream.h>

#include "attune/sim/step_model.h"
#include "attune/util/error.h"

namespace attune::campaign {

sim::RunOutcome run_sim_job(const SimTarget& t, const SimJobOptions& o, std::ostream& out) {
  const sim::Workload w = sim::workload_from_recipe(t.recipe);
  const sim::Prediction p = sim::predict(w, t.perturbation);
  sim::RunOptions run = sim::run_options(w, p, t.perturbation, t.seed, o.steps);
  run.flavour = o.flavour;
  if (o.time_scale > 0) {
    fmt::print(out, "attune sim job: {} on {} x {}, time scale {}\n", w.model.name, w.plan.world, w.plan.gpu,
               o.time_scale);
    out.flush();
    const auto start = std::chrono::steady_clock::now();
    run.before_lines = [&out, start, scale = o.time_scale](double simulated_s) {
      out.flush();
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(simulated_s / scale)));
    };
  }
  const sim::RunOutcome outcome = sim::write_run_log(w, p, run, out);
  out.flush();
  return outcome;
}

sim::RunOutcome run_sim_job(const SimTarget& t, const SimJobOptions& o, const std::string& log_file) {
  std::ofstream file(log_file, std::ios::app);
  if (!file) throw InputError({log_file, 0, 0}, "--log", "cannot open for writing");
  return run_sim_job(t, o, file);
}

}  // namespace attune::campaign
