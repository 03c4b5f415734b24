#include "attune/campaign/step_estimate.h"

#include <cmath>
#include <exception>

#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"

namespace attune::campaign {

double expected_step_s(const recipe::Recipe& recipe) {
  try {
    // The nominal model: no truth, numbers only (no breakdown, no notes).
    const sim::Prediction p = sim::predict(sim::workload_from_recipe(recipe), {}, sim::Detail::Numbers);
    return p.ok && std::isfinite(p.step_time_s) && p.step_time_s > 0 ? p.step_time_s : 0;
  } catch (const std::exception&) {
    // A recipe the model cannot read (no model preset, an unknown GPU) has no
    // estimate; the watchdog then uses its minimum alone.
    return 0;
  }
}

double expected_step_line_gap_s(const recipe::Recipe& recipe) {
  long long every = 1;
  // Each framework's lever for the steps between its step lines.
  for (const char* lever : {"log_interval", "log_freq", "logging_steps", "log_every_n_steps"}) {
    const auto v = recipe.value_or_default(lever);
    if (v && v->as_int() && *v->as_int() > 1) {
      every = *v->as_int();
      break;
    }
  }
  return expected_step_s(recipe) * static_cast<double>(every);
}

}  // namespace attune::campaign
