#include "attune/policy/rule_book.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "attune/policy/policy.h"
#include "attune/policy/proposal.h"
#include "attune/util/error.h"

namespace attune::policy {
namespace {

TEST(RuleBook, TheBuiltInBookFollowsTheExpertsOrder) {
  const RuleBook& b = builtin_rule_book();
  ASSERT_GE(b.stages.size(), 5u);
  EXPECT_EQ(b.stages.front(), "fix");
  EXPECT_LT(b.stage_rank("fit"), b.stage_rank("communication"));
  EXPECT_LT(b.stage_rank("bubble"), b.stage_rank("kernels"));
  RuleEvidence roomy;
  roomy.headroom_gib = 20;
  const Rule* r = b.match("mbs", "1", "2", roomy);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->id, "fit.larger_micro_batch");
  RuleEvidence tight;
  tight.headroom_gib = 1;
  EXPECT_EQ(b.match("mbs", "1", "2", tight), nullptr);
  RuleEvidence oom;
  oom.failure = "oom";
  ASSERT_NE(b.match("mbs", "2", "1", oom), nullptr);
  EXPECT_EQ(b.match("mbs", "2", "1", oom)->stage, "fix");
  EXPECT_NE(b.combination_for({"tp", "mbs"}), nullptr);
  EXPECT_EQ(b.combination_for({"tp", "cuda_graphs"}), nullptr);
}

TEST(RuleBook, DirectionsCompareValuesInTheirOrder) {
  EXPECT_TRUE(goes("up", "2", "4"));
  EXPECT_FALSE(goes("up", "4", "2"));
  EXPECT_TRUE(goes("down", "full", "selective"));
  EXPECT_TRUE(goes("down", "full (8 layers)", "none"));
  EXPECT_TRUE(goes("on", "off", "on"));
  EXPECT_TRUE(goes("down", "zero-3", "zero-1"));
  EXPECT_TRUE(goes("any", "flash", "fused"));
  EXPECT_FALSE(goes("any", "flash", "flash"));
  EXPECT_FALSE(goes("up", "flash", "fused"));  // no order: no direction
}

TEST(RuleBook, MalformedBooksNameTheLineAndKey) {
  const std::string bad_stage = "stages: [fix]\nrules:\n  - {id: a, stage: fit, lever: mbs, direction: up, why: w}\n";
  try {
    parse_rule_book("r.yaml", bad_stage);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_EQ(e.key(), "rules.stage");
  }
  EXPECT_THROW(parse_rule_book("r.yaml", "stages: [fix]\nrules:\n  - {id: a, stage: fix, lever: mbs, direction: sideways, why: w}\n"),
               InputError);
  EXPECT_THROW(parse_rule_book("r.yaml", "stages: [fix]\nrules:\n  - {id: a, stage: fix, lever: mbs, direction: up, why: w, when: {colour: red}}\n"),
               InputError);
  EXPECT_THROW(parse_rule_book("r.yaml", "stagez: [fix]\n"), InputError);
}

TEST(RuleBook, ARuleNamesThePartsOfTheStepItActsOnAndAnUnknownPartIsRefused) {
  const RuleBook b = parse_rule_book(
      "r.yaml", "stages: [comm]\nrules:\n  - {id: a, stage: comm, lever: cp_comm, direction: any, why: w,\n"
                "     acts_on: [cp_comm, dp_comm], when: {cp_at_least: 2}}\n");
  ASSERT_EQ(b.rules.size(), 1u);
  EXPECT_EQ(b.rules[0].acts_on, (std::vector<std::string>{"cp_comm", "dp_comm"}));
  RuleEvidence e;
  EXPECT_EQ(b.match("cp_comm", "p2p", "a2a", e), nullptr);  // no context parallelism: nothing to move
  e.cp = 2;
  EXPECT_NE(b.match("cp_comm", "p2p", "a2a", e), nullptr);
  try {
    parse_rule_book("r.yaml", "stages: [comm]\nrules:\n  - {id: a, stage: comm, lever: nvls, direction: any, why: w,\n"
                              "     acts_on: [network]}\n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "rules.acts_on");
    EXPECT_NE(std::string(e.what()).find("network"), std::string::npos) << e.what();
  }
  // Every rule of the built-in book that can be explored names parts the step has.
  for (const Rule& r : builtin_rule_book().rules) {
    for (const std::string& part : r.acts_on)
      EXPECT_NE(std::find(step_parts().begin(), step_parts().end(), part), step_parts().end()) << r.id;
  }
}

TEST(Policies, TheRegistryKnowsEveryBaselineAndRefusesOthers) {
  for (const char* name : {"rules", "random", "grid", "planner"}) EXPECT_EQ(make_policy(name)->name(), name);
  EXPECT_THROW(make_policy("llm"), InputError);
}

TEST(Proposal, JsonRoundTripsAndLabels) {
  Proposal p;
  p.changes.push_back({"tp", "2", "4", {{"tp", "4"}}});
  p.changes.push_back({"mbs", "1", "2", {{"mbs", "2"}}});
  p.rule = "layout.tp";
  p.predicted_gain = 0.05;
  p.setting = "tp=4;";
  EXPECT_EQ(p.label(), "tp 2 -> 4, mbs 1 -> 2");
  EXPECT_EQ(p.slug(), "tp-mbs");
  const Proposal q = proposal_from_json(to_json(p), "j");
  EXPECT_EQ(q.label(), p.label());
  EXPECT_EQ(q.changes[1].settings[0].value, "2");
  EXPECT_DOUBLE_EQ(*q.predicted_gain, 0.05);
  EXPECT_EQ(q.setting, "tp=4;");
  EXPECT_THROW(proposal_from_json(nlohmann::json{{"rule", "x"}}, "j"), InputError);
}

}  // namespace
}  // namespace attune::policy
