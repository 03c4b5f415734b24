// How the CLI shows a diagnosis (`attune diagnose`, `attune run`), and what a
// recipe tells the diagnoser that a log may not say (model, GPU, world size,
// sequence length, global batch, precision).
#pragma once

#include "attune/diagnose/diagnosis.h"
#include "attune/recipe/recipe.h"

namespace attune::cli {

diagnose::DiagnoseOptions diagnose_options_for(const recipe::Recipe& r);
// The human-readable lines: framework, steps, throughput, noise, memory, timers, loss, failure, notes.
void print_diagnosis(const diagnose::Diagnosis& d);

}  // namespace attune::cli
