// attune: tunes the throughput of LLM training recipes without changing what
// they train. This file only wires the subcommands; each lives in src/cli/.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "attune/cli/commands.h"
#include "attune/cli/parse_error.h"
#include "attune/util/error.h"

int main(int argc, char** argv) {
  // A reader that goes away (`attune run ... | head -1`) must not kill attune
  // mid-run with SIGPIPE: writes fail with EPIPE instead, and a run attune
  // follows is still followed to its end and journalled. Children get the
  // default back (run_process, the local cluster).
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"attune - tunes the throughput of LLM training recipes without changing what they train"};
  app.set_version_flag("--version", std::string("attune ") + ATTUNE_VERSION);
  app.require_subcommand(1);
  // Every status attune exits with (README.md, "Exit status").
  app.footer(
      "Exit status: 0 success; 1 a negative answer (check: refused; run, sim run, sim job: the run did not "
      "complete; sim scenarios: a target missed; cluster check: not ready; replay: an answer differs or input is "
      "damaged); 2 bad input, named in the message "
      "(a flag, a value, a file: unreadable, not a regular file, a log that is not text or over the size cap; "
      "levers: a recipe that breaks a validity rule; a cluster that refuses the run); 3 internal error (a bug, "
      "or out of memory); 130 tune interrupted by Ctrl-C (summary written; --resume DIR goes on).\n");
  attune::cli::add_levers_command(app);
  attune::cli::add_recipe_command(app);
  attune::cli::add_check_command(app);
  attune::cli::add_diagnose_command(app);
  attune::cli::add_sim_command(app);
  attune::cli::add_run_command(app);
  attune::cli::add_cluster_command(app);
  attune::cli::add_tune_command(app);
  attune::cli::add_replay_command(app);
  attune::cli::add_bench_command(app);
  attune::cli::add_report_command(app);
  attune::cli::add_export_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is bad input (2),
    // printed as `attune: error: ...` in plain words.
    return attune::cli::report_parse_error(app, e);
  } catch (const attune::InputError& e) {
    std::cerr << "attune: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attune: internal error: " << e.what() << "\n";
    return 3;
  }
  return attune::cli::command_status();
}
