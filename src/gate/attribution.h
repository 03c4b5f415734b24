// Attribution (internal to the gate): every byte a candidate changes must
// belong to a setting whose value changes with it. The gate judges settings;
// a changed byte no setting owns (an `ARR[3]=...` line, a `read`, a second
// YAML document, a changed launcher word) reached the training through a
// construct the reader does not model, so it is refused with its line instead
// of passing as "no change".
#pragma once

#include <vector>

#include "attune/gate/verdict.h"
#include "attune/recipe/document.h"

namespace attune::gate {

// Launch scripts (bash is not parsed whole): one refusal (rule
// `unattributed_change`) per changed line, on the candidate's side (the
// original's for a deletion), that holds a changed word or operator outside
// the bytes of every setting that differs between the two documents; comments,
// blanks and line breaks are not read. YAML: a change in a second document of
// the stream, which the reader ignores and a loader of the whole stream reads.
// TOML needs none: its reader parses every byte and the gate compares every leaf.
std::vector<RefusalReason> unattributed_changes(const recipe::Document& original, const recipe::Document& candidate);

}  // namespace attune::gate
