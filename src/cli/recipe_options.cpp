#include "attune/cli/commands.h"

#include <iostream>

#include "attune/cli/flag_checks.h"

namespace attune::cli {

int& command_status() {
  static int status = 0;
  return status;
}

void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void add_recipe_options(CLI::App& cmd, recipe::RecipeOptions& o) {
  cmd.add_option("--framework", o.framework,
                 "Framework of the recipe when it cannot be told from the file, one of: " + recipe_framework_names())
      ->check(recipe_framework());
  cmd.add_option("--model", o.model,
                 "Model preset (e.g. llama3-8b, qwen3-30b-a3b, deepseek-v3) when the recipe does not name its "
                 "architecture; the recipe's own architecture fields still win");
  cmd.add_option("--gpu", o.hardware.gpu, "GPU type the recipe runs on: h100, h200 or b200")->check(gpu_type());
  cmd.add_option("--nodes", o.hardware.nodes, "Number of nodes (overrides the recipe)")->check(whole_number(1));
  cmd.add_option("--gpus-per-node", o.hardware.gpus_per_node, "GPUs per node (default 8)")->check(whole_number(1));
}

}  // namespace attune::cli
