// Step estimate: what one training step of a recipe should take, from the
// simulator's nominal model — never a scenario's hidden truth. The hang
// watchdog needs only its order of magnitude (a run is hung after many step
// times without a new step), and the campaign asks before every launch, so the
// cluster module, which knows nothing of the simulator, is handed the figure.
#pragma once

#include "attune/recipe/recipe.h"

namespace attune::campaign {

// Seconds per step on the recipe's hardware; 0 when the model cannot say (an
// unknown GPU or model, a layout it cannot predict, a predicted OOM).
double expected_step_s(const recipe::Recipe& recipe);
// Seconds between two step lines of its log: a step times the recipe's log
// interval (Megatron's CI configs log every 100 iterations), what the hang
// watchdog waits on; 0 when the step time is unknown.
double expected_step_line_gap_s(const recipe::Recipe& recipe);

}  // namespace attune::campaign
