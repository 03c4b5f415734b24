// The built-in gate rules (gate/*.yaml) as data: they parse, ids are unique,
// every rule says why and where from, and they agree with the lever catalogs.
#include <gtest/gtest.h>

#include <set>

#include "attune/gate/gate_rule.h"
#include "attune/recipe/lever_catalog.h"
#include "attune/util/error.h"

namespace attune::gate {
namespace {

const char* kFrameworks[] = {"megatron", "automodel", "torchtitan", "hyperpod", "axolotl", "bridge"};

TEST(GateRules, BuiltinRulesParseWithUniqueIdsReasonsAndSources) {
  const GateRuleSet& set = GateRuleSet::builtin();
  std::set<std::string> ids, frameworks;
  for (const auto& r : set.rules) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate id " << r.id;
    EXPECT_FALSE(r.reason.empty()) << r.id;
    EXPECT_FALSE(r.source.empty()) << r.id;
    EXPECT_FALSE(r.keys.empty()) << r.id;
    if (r.action == GateAction::Numerics) {
      EXPECT_FALSE(r.allow.empty()) << r.id;
    }
    frameworks.insert(r.framework);
  }
  EXPECT_TRUE(frameworks.count("common"));
  for (const char* fw : kFrameworks) EXPECT_TRUE(frameworks.count(fw)) << fw;
  EXPECT_GE(set.rules.size(), 60u);
}

TEST(GateRules, EveryFrameworkStatesItsTrainingLengthInvariant) {
  const GateRuleSet& set = GateRuleSet::builtin();
  for (const char* fw : kFrameworks) {
    bool any = !set.invariant_keys(fw, "train_steps").empty() || !set.invariant_keys(fw, "train_samples").empty();
    EXPECT_TRUE(any) << fw;
  }
}

// A catalogued throughput lever must not be frozen by a refuse rule, and a
// catalogued numerics lever must need the same opt-in name as its rule.
TEST(GateRules, AgreeWithTheLeverCatalogs) {
  const GateRuleSet& set = GateRuleSet::builtin();
  for (const char* fw : kFrameworks) {
    for (const auto& l : recipe::lever_catalog(fw).levers) {
      if (l.key.empty()) continue;
      for (const GateRule* r : set.matching(fw, l.key)) {
        if (l.safety == recipe::LeverSafety::Throughput) {
          EXPECT_NE(r->action, GateAction::Refuse) << fw << " lever " << l.name << " (" << l.key << ") is refused by "
                                                   << r->id;
        } else if (r->action == GateAction::Numerics) {
          EXPECT_EQ(r->allow, l.allow_name) << fw << " lever " << l.name << " vs rule " << r->id;
        }
      }
    }
  }
}

TEST(GateRules, MalformedRuleFileNamesTheLine) {
  try {
    parse_gate_rules("site.yaml", "framework: megatron\nrules:\n  - id: x\n    category: c\n    action: maybe\n"
                                  "    keys: [--a]\n    reason: r\n", false);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 5);
  }
  EXPECT_THROW(parse_gate_rules("s.yaml", "framework: megatron\nrules:\n  - id: x\n    action: refuse\n", false),
               InputError);
}

TEST(GateRules, MatchingCoversGlobsAndSubkeys) {
  GateRule r;
  r.keys = {"dataset", "--lr-warmup-*"};
  EXPECT_TRUE(r.matches("dataset"));
  EXPECT_TRUE(r.matches("dataset.path"));
  EXPECT_TRUE(r.matches("dataset[0].path"));
  EXPECT_FALSE(r.matches("dataset_kwargs"));
  EXPECT_TRUE(r.matches("--lr-warmup-iters"));
  EXPECT_FALSE(r.matches("--lr"));
}

}  // namespace
}  // namespace attune::gate
