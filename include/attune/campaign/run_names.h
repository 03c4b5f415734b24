// Run names: what a run's or a campaign's directory and job are called after
// the recipe they run — its file's stem (a scenario's directory name), a
// directory stamped with the local time, and a unique job name Slurm accepts.
#pragma once

#include <string>

namespace attune::campaign {

// "llama3_8b_pretrain" for .../llama3_8b_pretrain.yaml; a scenario
// (.../<name>/scenario.yaml, or its directory) is named for its directory.
std::string recipe_stem(const std::string& path);
// root/<stem>-YYYYmmdd-HHMMSS
std::string stamped_dir(const std::string& root, const std::string& recipe_file);
// Letters, digits and '-' only, at most `length` characters.
std::string job_safe(const std::string& text, std::size_t length = 48);

}  // namespace attune::campaign
