// RecipeLevers: how one recipe spells what the simulator reads and searches —
// its knobs read from the framework's own keys (and the launch environment),
// which values of each searched dimension the recipe can express at all, and
// the lever edits that take one setting to another. Every framework spelling
// of a choice (the attention kernel as `--attention-backend flash`,
// `attn_implementation: flash_attention_2`, `model.backend.attn: te`; DeepEP
// as `flex` + `deepep`, `deepep`, `deep_ep`) lives here and nowhere else.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/recipe/plan.h"
#include "attune/sim/knobs.h"
#include "attune/sim/workload.h"

namespace attune::recipe {
class Recipe;
}

namespace attune::sim {

// One edit in the recipe's terms: a canonical lever or a raw key, and its value.
struct LeverSetting {
  std::string lever;
  std::string value;
};

// A recompute setting the search can move to.
struct RecomputeSetting {
  std::string granularity = "none";  // none | selective | full
  int layers = 0;                    // full: layers per stage (0 = all)
  unsigned modules = recompute_module::kCoreAttn;  // selective (Megatron's modules)
  bool operator==(const RecomputeSetting&) const = default;
};
RecomputeSetting recompute_of(const Knobs& k);
void apply(const RecomputeSetting& s, Workload& w);
std::string describe(const RecomputeSetting& s);  // "full", "full (8 layers)", "selective (core_attn, mlp)"

// What the recipe can express beyond the layout, each list starting with the
// recipe's own value (the layout's dimensions are searched through
// SearchSpace's flags).
struct SpellableLevers {
  std::vector<RecomputeSetting> recompute;
  std::vector<int> offload_layers;
  std::vector<int> zero_stage;
  bool sequence_parallel = false, distributed_optimizer = false, reshard_after_forward = false, fp8 = false, etp = false;
  std::array<std::uint32_t, kChoiceCount> choices{};  // bit v: value v can be written (the base value always)
};

// The recipe's knobs: each lever from the file (or the launch environment for
// environment variables), else the framework's default.
Knobs read_knobs(const recipe::Recipe& r, const recipe::Plan& plan);

// The values the recipe can spell for `base`, its own setting.
SpellableLevers spellable(const recipe::Recipe& r, const Workload& base);

// A dimension that differs between two settings, in the recipe's terms.
struct DimensionEdit {
  std::string name;                    // "tp", "recompute", "cuda_graphs", ...
  std::string from, to;                // in the simulator's words ("" = framework default)
  std::vector<LeverSetting> settings;  // the edits that make it
};

// The edits that take the recipe from `from` (its own setting) to `to`, one
// DimensionEdit per changed dimension. Throws InputError naming what the
// recipe cannot spell.
std::vector<DimensionEdit> edits_between(const recipe::Recipe& r, const Workload& from, const Workload& to);

// How many dimensions differ (the search counts them as changes).
int changed_dimensions(const Workload& a, const Workload& b);

// Every dimension's value for a setting, in the simulator's words and a fixed
// order ("tp" = "4", "recompute" = "selective", "cuda_graphs" = "full"): what
// a policy compares settings by and names a move with.
std::vector<std::pair<std::string, std::string>> dimension_values(const Workload& w);

}  // namespace attune::sim
