// What main() prints when CLI11 cannot parse the command line: one line,
// `attune: error: ...`, in plain words (an unknown command with the commands
// there are, a missing argument, an unknown option, a bad value), never
// CLI11's own wording. --help and --version print as CLI11 prints them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attune::cli {

// Prints the error (help and version to stdout; errors to stderr as
// `attune: error: ...`) and returns the exit status: 0 for --help and
// --version, 2 for every parse error (bad input).
int report_parse_error(CLI::App& app, const CLI::ParseError& e);

// The message for a parse error, without the `attune: error: ` prefix.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e);

// "unknown option '--x' for 'attune levers' (attune levers --help lists its
// options)" or "unexpected argument 'x' for ...", for an argument `command`
// (the command's full name, "attune levers") does not take.
std::string unexpected_argument_message(const std::string& command, const std::string& arg);

// "attune", "attune sim", "attune cluster check": the command `app` is.
std::string command_path(const CLI::App& app);

}  // namespace attune::cli
