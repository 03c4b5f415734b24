#include "attune/cluster/run.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "attune/cluster/cluster.h"
#include "attune/util/error.h"
#include "attune/util/json_input.h"
#include "attune/util/process_parts.h"

namespace attune::cluster {

using json = nlohmann::json;
using namespace json_field;

std::string to_string(RunState s) {
  switch (s) {
    case RunState::Pending: return "pending";
    case RunState::Running: return "running";
    case RunState::Completed: return "completed";
    case RunState::Failed: return "failed";
    case RunState::Cancelled: return "cancelled";
    case RunState::Timeout: return "timeout";
    case RunState::NodeFail: return "node_fail";
    case RunState::OutOfMemory: return "out_of_memory";
    case RunState::Preempted: return "preempted";
    case RunState::Hang: return "hang";
  }
  return "unknown";
}

bool is_final(RunState s) { return s != RunState::Pending && s != RunState::Running; }

double gpu_hours(const RunSpec& spec, double elapsed_s) {
  return static_cast<double>(spec.nodes) * spec.gpus_per_node * elapsed_s / 3600.0;
}

double run_time_limit_s(double recipe_limit_s, double budget_gpu_hours, int nodes, int gpus_per_node) {
  if (budget_gpu_hours < 0 || nodes <= 0 || gpus_per_node <= 0) return recipe_limit_s;
  const double payable_s = budget_gpu_hours * 3600.0 / (static_cast<double>(nodes) * gpus_per_node);
  return recipe_limit_s > 0 ? std::min(recipe_limit_s, payable_s) : payable_s;
}

std::uint64_t launch_seed(std::uint64_t campaign_seed, long n) {
  // splitmix64 of the pair: nearby campaign seeds and launches draw unrelated noise.
  std::uint64_t z = campaign_seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(n);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ------------------------------------------------------------ RunSpec / RunStatus JSON

json run_spec_json(const RunSpec& s) {
  json env = json::object();
  for (const auto& [k, v] : s.env) env[k] = v;
  json j{
      {"name", s.name},
      {"nodes", s.nodes},
      {"gpus_per_node", s.gpus_per_node},
      {"gpu", s.gpu},
      {"time_limit_s", number_json(s.time_limit_s)},
      {"log_path", s.log_path},
      {"command", s.command},
      {"env", std::move(env)},
      {"workdir", s.workdir},
      {"steps", s.steps},
      {"expected_step_s", number_json(s.expected_step_s)},
      {"partition", s.partition},
      {"account", s.account},
      {"qos", s.qos},
      {"constraint", s.constraint},
      {"exclusive", s.exclusive},
      {"container_image", s.container_image},
      {"container_mounts", s.container_mounts},
      {"per_node", s.per_node},
  };
  // Only when there are some: the journals of runs that had none read the same.
  if (!s.unset_env.empty()) j["unset_env"] = s.unset_env;
  if (!s.prepare.empty()) j["prepare"] = s.prepare;
  return j;
}

RunSpec run_spec_from_json(const json& j) {
  if (!j.is_object()) wrong_type("spec", "an object", j);
  RunSpec s;
  read_string(j, "name", s.name);
  read_int(j, "nodes", s.nodes);
  read_int(j, "gpus_per_node", s.gpus_per_node);
  read_string(j, "gpu", s.gpu);
  read_double(j, "time_limit_s", s.time_limit_s);
  read_string(j, "log_path", s.log_path);
  read_strings(j, "command", s.command);
  read_env(j, "env", s.env);
  read_string(j, "workdir", s.workdir);
  read_int(j, "steps", s.steps);
  read_double(j, "expected_step_s", s.expected_step_s);
  read_string(j, "partition", s.partition);
  read_string(j, "account", s.account);
  read_string(j, "qos", s.qos);
  read_string(j, "constraint", s.constraint);
  read_bool(j, "exclusive", s.exclusive);
  read_string(j, "container_image", s.container_image);
  read_strings(j, "container_mounts", s.container_mounts);
  read_bool(j, "per_node", s.per_node);
  read_strings(j, "unset_env", s.unset_env);
  if (const json* p = member(j, "prepare")) {
    if (!p->is_array()) wrong_type("prepare", "a list of commands", *p);
    for (const auto& step : *p) {
      std::vector<std::string> argv;
      json holder = {{"step", step}};
      read_strings(holder, "step", argv);
      s.prepare.push_back(std::move(argv));
    }
  }
  return s;
}

json run_status_json(const RunStatus& s) {
  json j{{"state", to_string(s.state)}, {"reason", s.reason}, {"elapsed_s", number_json(s.elapsed_s)}};
  if (s.measured_log_bytes > 0) j["measured_log_bytes"] = s.measured_log_bytes;
  return j;
}

RunStatus run_status_from_json(const json& j) {
  if (!j.is_object()) wrong_type("status", "an object", j);
  RunStatus s;
  std::string state = to_string(s.state);
  read_string(j, "state", state);
  const auto parsed = run_state_from_string(state);
  if (!parsed) throw InputError({}, "state", fmt::format("unknown run state '{}'", state));
  s.state = *parsed;
  read_string(j, "reason", s.reason);
  read_double(j, "elapsed_s", s.elapsed_s);
  if (const json* b = member(j, "measured_log_bytes")) {
    if (!b->is_number_unsigned()) wrong_type("measured_log_bytes", "a whole number of bytes", *b);
    s.measured_log_bytes = b->get<std::uint64_t>();
  }
  return s;
}

std::optional<RunState> run_state_from_string(std::string_view name) {
  for (const RunState s : {RunState::Pending, RunState::Running, RunState::Completed, RunState::Failed,
                           RunState::Cancelled, RunState::Timeout, RunState::NodeFail, RunState::OutOfMemory,
                           RunState::Preempted, RunState::Hang}) {
    if (to_string(s) == name) return s;
  }
  return std::nullopt;
}

std::string read_run_log(const std::string& run, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return "";
    throw ClusterError(fmt::format("run {}: cannot read log '{}': {}", run, path, errno_text(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace attune::cluster
