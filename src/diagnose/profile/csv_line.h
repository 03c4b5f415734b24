// One CSV record split into fields, as `nsys stats --format csv` writes them:
// demangled kernel names hold commas, so they come quoted, with "" for a quote.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attune/util/text.h"  // trim

namespace attune::diagnose::profile {

// Splits `line` (no line break) into fields[0..n), reusing the strings'
// storage across calls; returns n, or npos for an unterminated quote.
std::size_t split_csv_line(std::string_view line, std::vector<std::string>& fields);

}  // namespace attune::diagnose::profile
