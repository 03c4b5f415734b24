#include "attune/sim/scenario.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/yaml_input.h"

namespace attune::sim {

namespace fs = std::filesystem;

namespace {

double number(const std::string& path, const YAML::Node& n, const std::string& key, double lo, double hi) {
  try {
    const double v = n.as<double>();
    if (v >= lo && v <= hi) return v;
  } catch (const YAML::Exception&) {
  }
  throw InputError(yaml_where(path, n), key, fmt::format("expected a number in [{}, {}]", lo, hi));
}

bool boolean(const std::string& path, const YAML::Node& n, const std::string& key) {
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    throw InputError(yaml_where(path, n), key, "expected true or false");
  }
}

std::vector<std::string> strings(const std::string& path, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) throw InputError(yaml_where(path, n), key, "expected a list");
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(yaml_scalar(path, e, key));
  return out;
}

std::string beside(const std::string& scenario, const std::string& file) {
  const fs::path p(file);
  return p.is_absolute() ? file : (fs::path(scenario).parent_path() / p).lexically_normal().string();
}

void read_key(const std::string& path, const std::string& key, const YAML::Node& k, const YAML::Node& v, Scenario& s) {
  if (key == "name") s.name = yaml_scalar(path, v, key);
  else if (key == "title") s.title = yaml_scalar(path, v, key);
  else if (key == "written_for") s.written_for = yaml_scalar(path, v, key);
  else if (key == "runs_on") s.runs_on = yaml_scalar(path, v, key);
  else if (key == "recipe") s.recipe = beside(path, yaml_scalar(path, v, key));
  else
    throw InputError(yaml_where(path, k), key,
                     "unknown key (expected name, title, written_for, runs_on, recipe; the hidden truth goes in "
                     "truth.yaml, the answer in harness.yaml)");
}

void read_harness_key(const std::string& path, const std::string& key, const YAML::Node& k, const YAML::Node& v,
                      ScenarioHarness& h) {
  if (key == "what_is_off") h.what_is_off = yaml_scalar(path, v, key);
  else if (key == "budget_gpu_hours") h.budget_gpu_hours = number(path, v, key, 1, 1e7);
  else if (key == "vendor_tuned") h.vendor_tuned = boolean(path, v, key);
  else if (key == "trap") h.trap = yaml_scalar(path, v, key);
  else if (key == "baseline_tokens_per_s_per_gpu") h.baseline_tokens_per_s_per_gpu = number(path, v, key, 0, 1e9);
  else if (key == "optimum_tokens_per_s_per_gpu") h.optimum_tokens_per_s_per_gpu = number(path, v, key, 0, 1e9);
  else if (key == "prior_regret") h.prior_regret = number(path, v, key, 0, 1);
  else if (key == "greedy_shortfall") h.greedy_shortfall = number(path, v, key, 0, 1);
  else if (key == "greedy_trials") h.greedy_trials = static_cast<int>(number(path, v, key, 0, 1e6));
  else if (key == "traps") h.traps = static_cast<int>(number(path, v, key, 0, 1e6));
  else if (key == "trial_gpu_hours") h.trial_gpu_hours = number(path, v, key, 0, 1e7);
  else if (key == "optimum_edits") h.optimum_edits = strings(path, v, key);
  else if (key == "prior_edits") h.prior_edits = strings(path, v, key);
  else
    throw InputError(yaml_where(path, k), key,
                     "unknown key (expected what_is_off, budget_gpu_hours, vendor_tuned, trap, "
                     "baseline_tokens_per_s_per_gpu, optimum_tokens_per_s_per_gpu, prior_regret, greedy_shortfall, "
                     "greedy_trials, traps, trial_gpu_hours, optimum_edits, prior_edits)");
}

bool yaml_file(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace

std::string scenario_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return (fs::path(path) / "scenario.yaml").string();
  return path;
}

bool is_scenario(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(fs::path(path) / "scenario.yaml", ec);
  const fs::path p(path);
  if (!yaml_file(p)) return false;
  if (p.filename() == "scenario.yaml") return true;
  try {
    const YAML::Node root = YAML::Load(read_file(path));
    return root.IsMap() && root["recipe"] && root["runs_on"];
  } catch (const std::exception&) {
    return false;
  }
}

Scenario read_scenario(const std::string& given) {
  const std::string path = scenario_file(given);
  const YAML::Node root = load_yaml(path, read_file(path));
  if (!root.IsMap()) throw InputError({path, 1, 1}, "", "expected a mapping");
  Scenario s;
  s.path = path;
  s.dir = fs::path(path).parent_path().string();
  for (const auto& kv : root) read_key(path, yaml_key(path, kv.first, "(top level)"), kv.first, kv.second, s);
  if (s.recipe.empty()) throw InputError({path, 1, 1}, "recipe", "missing: the scenario's recipe or wrapper file");
  std::error_code ec;
  if (const std::string t = beside(path, "truth.yaml"); fs::exists(t, ec)) s.truth = t;
  if (const std::string h = beside(path, "harness.yaml"); fs::exists(h, ec)) s.harness = h;
  return s;
}

ScenarioHarness read_harness(const std::string& path) {
  const YAML::Node root = load_yaml(path, read_file(path));
  ScenarioHarness h;
  if (root.IsNull()) return h;
  if (!root.IsMap()) throw InputError({path, 1, 1}, "", "expected a mapping");
  for (const auto& kv : root) read_harness_key(path, yaml_key(path, kv.first, "(top level)"), kv.first, kv.second, h);
  return h;
}

std::vector<std::string> scenario_dirs(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::exists(fs::path(root) / "scenario.yaml", ec)) return {root};
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "scenario.yaml")) out.push_back(e.path().string());
  }
  if (ec) throw InputError({root, 0, 0}, "", "cannot list the directory: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

std::string with_figures(const std::string& text, const RecordedFigures& f) {
  static constexpr std::string_view kRecorded[] = {
      "baseline_tokens_per_s_per_gpu:", "optimum_tokens_per_s_per_gpu:", "prior_regret:", "greedy_shortfall:",
      "greedy_trials:", "traps:", "trial_gpu_hours:", "optimum_edits:", "prior_edits:", "# Recorded by `attune sim"};
  std::string out;
  bool in_list = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    const bool recorded = std::any_of(std::begin(kRecorded), std::end(kRecorded), [&](std::string_view k) { return line.starts_with(k); });
    if (recorded) {
      in_list = line.starts_with("optimum_edits:") || line.starts_with("prior_edits:");
      continue;
    }
    if (in_list && (line.starts_with("  -") || line.starts_with("- "))) continue;
    in_list = false;
    out.append(line).push_back('\n');
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  auto list = [](const char* key, const std::vector<std::string>& edits) {
    std::string s = edits.empty() ? fmt::format("{}: []\n", key) : fmt::format("{}:\n", key);
    for (const auto& e : edits) s += "  - \"" + e + "\"\n";
    return s;
  };
  out += fmt::format("# Recorded by `attune sim scenarios --record` (checked by ctest -L scenarios).\n"
                     "baseline_tokens_per_s_per_gpu: {:.0f}\noptimum_tokens_per_s_per_gpu: {:.0f}\n"
                     "prior_regret: {:.4f}\ngreedy_shortfall: {:.4f}\ngreedy_trials: {}\ntraps: {}\n"
                     "trial_gpu_hours: {:.3f}\n",
                     f.baseline, f.optimum, f.prior_regret, f.greedy_shortfall, f.greedy_trials, f.traps,
                     f.trial_gpu_hours);
  out += list("optimum_edits", f.optimum_edits);
  out += list("prior_edits", f.prior_edits);
  return out;
}

void record_figures(const std::string& path, const RecordedFigures& f) {
  std::error_code ec;
  const std::string text = fs::exists(path, ec) ? read_file(path) : "";
  write_file_atomic(path, with_figures(text, f));
}

}  // namespace attune::sim
