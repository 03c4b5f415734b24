// How the CLI shows a diagnosis (`attune diagnose`, `attune run`) and a
// profile summary.
#pragma once

#include "attune/diagnose/diagnosis.h"

namespace attune::cli {

// The human-readable lines: framework, steps, throughput, noise, memory, timers, loss, failure, notes.
void print_diagnosis(const diagnose::Diagnosis& d);
// Compute, communication, exposed communication, idle, top kernels.
void print_profile(const diagnose::ProfileSummary& p);

}  // namespace attune::cli
