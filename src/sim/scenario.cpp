#include "attune/sim/scenario.h"

#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "attune/util/error.h"
#include "attune/util/yaml_input.h"
#include "attune/util/file.h"

namespace attune::sim {

namespace {

double number(const std::string& path, const YAML::Node& n, const std::string& key) {
  try {
    const double v = n.as<double>();
    if (v > 0) return v;
  } catch (const YAML::Exception&) {
  }
  throw InputError(yaml_where(path, n), key, "expected a positive number");
}

std::string beside(const std::string& scenario, const std::string& file) {
  const std::filesystem::path p(file);
  return p.is_absolute() ? file : (std::filesystem::path(scenario).parent_path() / p).lexically_normal().string();
}

void read_key(const std::string& path, const std::string& key, const YAML::Node& v, Scenario& s) {
  if (key == "name") s.name = yaml_scalar(path, v, key);
  else if (key == "title") s.title = yaml_scalar(path, v, key);
  else if (key == "written_for") s.written_for = yaml_scalar(path, v, key);
  else if (key == "runs_on") s.runs_on = yaml_scalar(path, v, key);
  else if (key == "what_is_off") s.what_is_off = yaml_scalar(path, v, key);
  else if (key == "recipe") s.recipe = beside(path, yaml_scalar(path, v, key));
  else if (key == "perturbation") s.perturbation = beside(path, yaml_scalar(path, v, key));
  else if (key == "seed") s.seed = static_cast<std::uint64_t>(number(path, v, key));
  else if (key == "baseline_tokens_per_s_per_gpu") s.baseline_tokens_per_s_per_gpu = number(path, v, key);
  else if (key == "optimum_tokens_per_s_per_gpu") s.optimum_tokens_per_s_per_gpu = number(path, v, key);
  else if (key == "optimum_edits") {
    if (!v.IsSequence()) throw InputError(yaml_where(path, v), key, "expected a list of edits");
    for (const auto& e : v) s.optimum_edits.push_back(yaml_scalar(path, e, key));
  } else {
    throw InputError(yaml_where(path, v), key,
                     "unknown key (expected name, title, written_for, runs_on, what_is_off, recipe, perturbation, "
                     "seed, baseline_tokens_per_s_per_gpu, optimum_tokens_per_s_per_gpu, optimum_edits)");
  }
}

}  // namespace

bool is_scenario_file(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension();
  if (ext != ".yaml" && ext != ".yml") return false;
  try {
    const YAML::Node root = YAML::Load(read_file(path));
    return root.IsMap() && root["recipe"] && (root["perturbation"] || root["seed"]);
  } catch (const std::exception&) {
    return false;
  }
}

Scenario read_scenario(const std::string& path) {
  const YAML::Node root = load_yaml(path, read_file(path));
  if (!root.IsMap()) throw InputError({path, 1, 1}, "", "expected a mapping");
  Scenario s;
  s.path = path;
  for (const auto& kv : root) read_key(path, yaml_key(path, kv.first, "(top level)"), kv.second, s);
  if (s.recipe.empty()) throw InputError({path, 1, 1}, "recipe", "missing: the scenario's recipe or wrapper file");
  return s;
}

std::string with_figures(const std::string& text, double baseline, double optimum,
                         const std::vector<std::string>& edits) {
  std::string out;
  bool in_edits = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    const bool stated = line.starts_with("baseline_tokens_per_s_per_gpu:") ||
                        line.starts_with("optimum_tokens_per_s_per_gpu:") || line.starts_with("optimum_edits:") ||
                        line.starts_with("# Predicted by `attune sim optimum");
    if (stated) {
      in_edits = line.starts_with("optimum_edits:");
      continue;
    }
    if (in_edits && (line.starts_with("  -") || line.starts_with("- "))) continue;
    in_edits = false;
    out.append(line).push_back('\n');
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  out += fmt::format("# Predicted by `attune sim optimum SCENARIO --record` (checked by ctest -L scenarios).\n"
                     "baseline_tokens_per_s_per_gpu: {:.0f}\noptimum_tokens_per_s_per_gpu: {:.0f}\n",
                     baseline, optimum);
  out += edits.empty() ? "optimum_edits: []\n" : "optimum_edits:\n";
  for (const auto& e : edits) out += "  - \"" + e + "\"\n";
  return out;
}

void record_figures(const std::string& path, double baseline, double optimum, const std::vector<std::string>& edits) {
  write_file_atomic(path, with_figures(read_file(path), baseline, optimum, edits));
}

}  // namespace attune::sim
