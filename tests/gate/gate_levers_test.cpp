// The other side of the gate: every throughput lever of every catalog, edited
// through the recipe layer on the example recipes, must be allowed. A gate that
// refuses good edits makes the tuner useless; this counts false refusals.
#include <gtest/gtest.h>

#include <iostream>

#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::gate {
namespace {

using recipe::LeverDef;
using recipe::LeverType;
using recipe::Recipe;

// A legal value different from the current one, or "" when none is obvious.
std::string other_value(const LeverDef& l, const std::optional<recipe::Value>& current) {
  std::string now = current ? current->str() : l.default_value;
  switch (l.type) {
    case LeverType::Bool: {
      auto b = recipe::Value::parse(now.empty() ? "false" : now).as_bool();
      return b && *b ? "false" : "true";
    }
    case LeverType::Enum:
      for (const auto& v : l.values) {
        if (v != now && v != "null") return v;
      }
      return "";
    case LeverType::Int: {
      auto v = recipe::Value::parse(now).as_int();
      long long next = v ? *v + 1 : static_cast<long long>(l.min.value_or(1)) + 1;
      if (l.max && next > *l.max) next = static_cast<long long>(*l.max) - 1;
      return std::to_string(next);
    }
    default:
      return "";
  }
}

struct Tally {
  int tried = 0, allowed = 0, skipped = 0;
  std::vector<std::string> refused;
};

void try_levers(const std::string& file, recipe::RecipeOptions options, Tally& t) {
  Recipe original = Recipe::load(std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/" + file, options);
  CorrectnessGate gate;
  for (const auto& lv : original.levers()) {
    const LeverDef& l = *lv.def;
    if (!l.pattern.empty() || l.safety != recipe::LeverSafety::Throughput) continue;
    std::string value = other_value(l, lv.value);
    if (value.empty()) {
      ++t.skipped;
      continue;
    }
    Recipe cand = original;
    try {
      cand.set(l.name, value);
    } catch (const InputError&) {
      ++t.skipped;  // not a valid layout for this recipe (e.g. tp 3): the recipe layer refuses it
      continue;
    }
    ++t.tried;
    Verdict v = gate.check(original, cand);
    if (v.allowed) {
      ++t.allowed;
    } else {
      t.refused.push_back(file + ": " + l.name + "=" + value + " -> " + v.reasons.front().rule + ": " +
                          v.reasons.front().message);
    }
  }
}

TEST(GateLevers, EveryThroughputLeverEditIsAllowed) {
  Tally t;
  recipe::RecipeOptions two;
  two.hardware.nodes = 2;
  try_levers("megatron_llama3_8b.sh", {}, t);
  try_levers("automodel_llama3_8b_pretrain.yaml", {}, t);
  try_levers("torchtitan_llama3_8b.toml", two, t);
  try_levers("hyperpod_hf_llama3_8b.yaml", {}, t);
  try_levers("axolotl_llama3_8b_fsdp.yaml", two, t);
  try_levers("bridge_llama3_8b_pretrain.yaml", two, t);
  for (const auto& r : t.refused) ADD_FAILURE() << "false refusal: " << r;
  std::cout << t.tried << " lever edits checked, " << t.allowed << " allowed, " << t.refused.size()
            << " false refusals, " << t.skipped << " levers without an obvious legal value or layout\n";
  EXPECT_GE(t.tried, 300);
}

}  // namespace
}  // namespace attune::gate
