#include "attune/recipe/run_hardware.h"

#include <cctype>
#include <string>

#include <fmt/format.h>

#include "attune/util/error.h"

namespace attune::recipe {

namespace {

// The variable a value is exactly ($NAME, ${NAME}), "" when it is anything else.
std::string variable_of(const std::string& raw) {
  std::string t = raw;
  if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front()) t = t.substr(1, t.size() - 2);
  if (t.rfind("${", 0) == 0 && t.back() == '}') t = t.substr(2, t.size() - 3);
  else if (t.rfind('$', 0) == 0) t = t.substr(1);
  else return "";
  for (char c : t) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "";
  }
  return t;
}

// Whether the file itself states the count: a literal, directly or through
// variables the script assigns literals (NUM_NODES=1), not a default for what
// the environment may say (${SLURM_NNODES:-1}), which the launch sets.
bool stated_by_the_file(const Recipe& r, const Entry& e) {
  std::string raw = e.raw.empty() ? e.value.text : e.raw;
  for (int depth = 0; depth < 8; ++depth) {
    if (raw.find('$') == std::string::npos) return true;
    const std::string name = variable_of(raw);
    if (name.empty()) return false;
    auto v = r.document().find("var." + name);
    if (!v) v = r.document().find("env." + name);
    if (!v || v->runtime) return false;
    raw = v->raw.empty() ? v->value.text : v->raw;
  }
  return false;
}

}  // namespace

Recipe with_run_hardware(const Recipe& recipe, std::vector<EditResult>* edits) {
  Recipe out(recipe);
  const Hardware& hw = recipe.hardware();
  for (const auto& [name, want] : {std::pair<const char*, int>{"nodes", hw.nodes}, {"gpus_per_node", hw.gpus_per_node}}) {
    if (want <= 0) continue;  // the file's own count is the run's
    const auto e = out.find_named(name);
    if (!e || e->runtime || !stated_by_the_file(out, *e)) continue;
    const auto stated = e->value.as_int();
    if (stated && *stated == want) continue;
    try {
      EditResult r = out.set(name, std::to_string(want));
      if (edits) edits->push_back(std::move(r));
    } catch (const InputError& err) {
      throw InputError({recipe.config_path(), e->line, 0}, e->path,
                       fmt::format("the file says {} {} but the run is on {} ({}): {}", e->value.str(), name, want,
                                   recipe.hardware_source(), err.message()));
    }
  }
  return out;
}

}  // namespace attune::recipe
