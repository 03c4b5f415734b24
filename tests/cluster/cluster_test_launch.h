// The launches the cluster tests submit. Only prepare_launch makes a Launch,
// and only from an approved recipe, so a test says what it wants run (the
// command, environment, working directory, Slurm request) in an attune
// wrapper's launch: section beside the small Llama 3 8B script, the gate
// approves the recipe as it is, and prepare_launch writes the run directory
// and builds the spec, as `attune run` does.
#pragma once

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fixtures/llama3_8b_script.h"
#include "attune/cluster/launch.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"

namespace attune::cluster {

struct TestRun {
  std::vector<std::string> command;        // launch.command (empty: the framework's, `bash {config}`)
  std::map<std::string, std::string> env;  // launch.env
  std::string workdir;                     // launch.workdir
  std::string partition, account, qos, constraint;  // launch.slurm
  std::optional<bool> exclusive;                    // launch.slurm.exclusive (unset: the default, true)
  std::string gpu = "h100";
  int nodes = 1;
  int gpus_per_node = 1;
  int tp = 1;
  double time_limit_s = 10;    // the request's default: the wrapper states none
  double expected_step_s = 0;  // the request's estimate
  int steps = 0;               // the request's (0: 50)
  std::string run_dir;         // "" = <root>/<name>
};

inline ClusterDefinition test_cluster(const std::string& name, const std::string& backend) {
  ClusterDefinition d;
  d.name = name;
  d.backend = backend;
  return d;
}

namespace test_launch_detail {

// A YAML scalar for any text: JSON's double-quoted string is one.
inline std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

inline std::string wrapper(const TestRun& t) {
  std::string y = "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n";
  y += "hardware: {gpu: " + t.gpu + ", nodes: " + std::to_string(t.nodes) +
       ", gpus_per_node: " + std::to_string(t.gpus_per_node) + "}\n";
  y += "launch:\n";
  if (!t.command.empty()) {
    y += "  command: [";
    for (std::size_t i = 0; i < t.command.size(); ++i) y += (i ? ", " : "") + quoted(t.command[i]);
    y += "]\n";
  }
  if (!t.env.empty()) {
    y += "  env: {";
    bool first = true;
    for (const auto& [k, v] : t.env) {
      y += (first ? "" : ", ") + quoted(k) + ": " + quoted(v);
      first = false;
    }
    y += "}\n";
  }
  if (!t.workdir.empty()) y += "  workdir: " + quoted(t.workdir) + "\n";
  // A launch script's default command runs in the Megatron-LM checkout.
  else if (t.command.empty()) y += "  workdir: /\n";
  y += "  slurm: {";
  std::string slurm;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"partition", t.partition}, {"account", t.account}, {"qos", t.qos}, {"constraint", t.constraint}}) {
    if (!value.empty()) slurm += (slurm.empty() ? "" : ", ") + key + ": " + quoted(value);
  }
  if (t.exclusive) slurm += std::string(slurm.empty() ? "" : ", ") + "exclusive: " + (*t.exclusive ? "true" : "false");
  y += slurm + "}\n";
  return y;
}

}  // namespace test_launch_detail

// Prepares run `name` on cluster `def`: its recipe under <root>/<name>.recipe
// (the name's odd characters as '_'), its run directory (recipe as launched,
// log run.log) <root>/<name> unless t.run_dir says otherwise. Throws what
// prepare_launch throws.
inline Launch test_launch(const std::filesystem::path& root, const std::string& name, const ClusterDefinition& def,
                          const TestRun& t = {}) {
  std::string plain = name;
  for (char& c : plain) c = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  const std::filesystem::path src = root / (plain + ".recipe");
  std::filesystem::create_directories(src);
  std::ofstream(src / "train.sh") << test::llama3_8b_script(t.gpus_per_node, t.tp);
  std::ofstream(src / "train.attune.yaml") << test_launch_detail::wrapper(t);
  const recipe::Recipe r = recipe::Recipe::load((src / "train.attune.yaml").string());
  LaunchRequest q;
  q.run_name = name;
  q.run_dir = t.run_dir.empty() ? (root / name).string() : t.run_dir;
  q.default_time_limit_s = t.time_limit_s;
  q.expected_step_s = t.expected_step_s;
  q.steps = t.steps;
  return prepare_launch(gate::CorrectnessGate{}.approve(r, r), def, q);
}

}  // namespace attune::cluster
