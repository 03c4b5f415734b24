// Checks of flag and argument values, with messages in plain words: CLI11's
// own (PositiveNumber, IsMember, ExistingFile) print ranges as 309-digit
// numbers or sets in braces. A failed check is reported by main() as
// `attune: error: NAME: MESSAGE` with exit status 2.
#pragma once

#include <climits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attune::cli {

// A whole number from `min` to `max`: "expected a whole number of at least 1, got '0'".
CLI::Validator whole_number(long long min, long long max = INT_MAX);
// A seed: any whole number from 0 to 2^64-1 (a launch's seed is 64 bits).
CLI::Validator seed_number();
// A finite number above 0: "expected a number greater than 0, got '0'".
CLI::Validator positive_number();
// A finite number of at least 0: "expected a number of at least 0, got '-1'".
CLI::Validator non_negative_number();

// The three below let "" through: it means what the flag's absence means.
//
// One of `names` (each an accepted spelling, in the order listed):
// "unknown WHAT 'x'QUALIFIER (expected one of: a, b, c)". `desc` is what
// --help shows beside the type ("" for nothing).
CLI::Validator one_of(const std::vector<std::string>& names, const std::string& what, const std::string& desc = "",
                      const std::string& qualifier = "");

// A recipe framework as --framework takes it (megatron, automodel, ... and
// their common spellings): "unknown framework 'x' (expected one of: ...)".
CLI::Validator recipe_framework();
// "megatron, automodel, torchtitan, hyperpod, axolotl, bridge".
std::string recipe_framework_names();

// A GPU type as --gpu takes it (h100, h200, b200 and the spellings the recipe
// module knows): "unknown GPU type 'x' (expected one of: h100, h200, b200)".
CLI::Validator gpu_type();

// An existing file / directory: "no such file 'x'", "'x' is a directory, not a file".
CLI::Validator existing_file();
CLI::Validator existing_directory();

// "a, b, c".
std::string join_names(const std::vector<std::string>& names);

}  // namespace attune::cli
