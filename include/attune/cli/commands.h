// The attune subcommands. Each add_*_command registers its flags and its
// handler on the CLI11 app; handlers throw InputError on bad input, which
// main() reports with exit status 2.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "attune/recipe/hardware.h"

namespace attune::cli {

// Flags that supply what a recipe file does not say, shared by every command
// that reads a recipe: --framework, --model, --gpu, --nodes, --gpus-per-node.
void add_recipe_options(CLI::App& cmd, recipe::RecipeOptions& options);

// The exit status the command that ran asks for (0 when none ran).
int& command_status();

// Prints JSON for --json, indented. Text read from logs and profiles may not
// be valid UTF-8: bad bytes become U+FFFD rather than an exception.
void print_json(const nlohmann::json& j);

void add_levers_command(CLI::App& app);
void add_recipe_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_diagnose_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_cluster_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_export_command(CLI::App& app);

}  // namespace attune::cli
