// attune: tunes the throughput of LLM training recipes without changing what
// they train. This file only wires the subcommands; each lives in src/cli/.
#include <iostream>

#include <CLI/CLI.hpp>

#include "attune/cli/commands.h"
#include "attune/util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"attune - tunes the throughput of LLM training recipes without changing what they train"};
  app.set_version_flag("--version", std::string("attune ") + ATTUNE_VERSION);
  app.require_subcommand(1);
  attune::cli::add_levers_command(app);
  attune::cli::add_recipe_command(app);
  attune::cli::add_check_command(app);
  attune::cli::add_diagnose_command(app);
  attune::cli::add_sim_command(app);
  attune::cli::add_run_command(app);
  attune::cli::add_cluster_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const attune::InputError& e) {
    std::cerr << "attune: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attune: internal error: " << e.what() << "\n";
    return 3;
  }
  return attune::cli::command_status();
}
