#include "attune/policy/rules_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "../fixtures/llama3_8b_script.h"
#include "attune/policy/baseline_policies.h"
#include "attune/sim/step_model.h"

namespace attune::policy {
namespace {

recipe::Recipe llama3_8b(int tp = 2) {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  return recipe::Recipe::from_text("pretrain.sh", test::llama3_8b_script(8, tp), o);
}

Observation measured(int trial, int parent, const sim::Workload& w, double step_s, double tokens) {
  Observation o;
  o.trial = trial;
  o.parent = parent;
  o.outcome = trial == 0 ? TrialOutcome::Baseline : TrialOutcome::Rejected;
  o.workload = w;
  o.step_time_s = step_s;
  o.tokens_per_s_per_gpu = tokens;
  return o;
}

TEST(ModelCorrection, ASlowerClusterSlowsThePredictionTowardsWhatWasMeasured) {
  const sim::Workload w = sim::workload_from_recipe(llama3_8b());
  const double nominal = sim::predict(w, {}, sim::Detail::Numbers).step_time_s;
  ASSERT_GT(nominal, 0);
  const ModelCorrection c = fit_correction({{w, 1.3 * nominal, std::nullopt, -1, false}});
  EXPECT_GT(c.compute, 1.05);
  const double corrected = sim::predict(w, c.perturbation(), sim::Detail::Numbers).step_time_s;
  EXPECT_GT(corrected, 1.1 * nominal);
  EXPECT_LT(corrected, 1.35 * nominal);
  // Nothing measured: the nominal model itself.
  const ModelCorrection none = fit_correction({});
  EXPECT_DOUBLE_EQ(none.compute, 1);
  EXPECT_TRUE(none.lever_effects.empty());
}

TEST(ModelCorrection, AMoveThatDidNotPayBecomesAnEffectOnItsValues) {
  const recipe::Recipe r = llama3_8b();
  const CandidateSpace space(r, gate::CorrectnessGate{});
  const sim::Workload& base = space.base();
  const double t0 = sim::predict(base, {}, sim::Detail::Numbers).step_time_s;
  // A one-lever move the model says gains the most.
  sim::Workload moved = base;
  double t1 = t0;
  for (const sim::Workload& w : space.one_lever_moves(base)) {
    const sim::Prediction p = sim::predict(w, {}, sim::Detail::Numbers);
    if (p.ok && moved_dimensions(base, w).size() == 1 && p.step_time_s < t1) moved = w, t1 = p.step_time_s;
  }
  // Measured: no faster at all, whatever the model says CUDA graphs gain.
  const ModelCorrection c = fit_correction({{base, t0, std::nullopt, -1, false}, {moved, t0, std::nullopt, 0, false}});
  ASSERT_LT(t1, 0.99 * t0);
  ASSERT_EQ(c.lever_effects.size(), 1u);
  const double after = sim::predict(moved, c.perturbation(), sim::Detail::Numbers).step_time_s;
  const double before = sim::predict(base, c.perturbation(), sim::Detail::Numbers).step_time_s;
  EXPECT_NEAR(after / before, 1.0, 0.01);
}

TEST(ModelCorrection, SlowOffloadTransfersAreFittedAsTheirOwnTerm) {
  const sim::Workload base = sim::workload_from_recipe(llama3_8b());
  // The offload setting whose step the transfers' speed moves the most.
  sim::Workload offload = base;
  double sensitivity = 0;
  sim::Perturbation slow;
  slow.effects.push_back({sim::Term::Offload, 3.0, {}, "a host link three times slower", 0});
  for (int layers : {2, 4, 8, 16, -1}) {
    sim::Workload w = base;
    w.knobs.offload_layers = layers;
    const double nominal = sim::predict(w, {}, sim::Detail::Numbers).step_time_s;
    const double slower = sim::predict(w, slow, sim::Detail::Numbers).step_time_s;
    if (nominal > 0 && slower / nominal > sensitivity) offload = w, sensitivity = slower / nominal;
  }
  ASSERT_GT(sensitivity, 1.15) << "no offload setting of the fixture moves with the host link";
  const double t0 = sim::predict(base, {}, sim::Detail::Numbers).step_time_s;
  const double t1 = sim::predict(offload, slow, sim::Detail::Numbers).step_time_s;
  const ModelCorrection c = fit_correction({{base, t0, std::nullopt, -1, false}, {offload, t1, std::nullopt, 0, false}});
  EXPECT_GT(c.offload, 1.8);
  EXPECT_NEAR(c.compute, 1, 0.1);  // not blamed on the compute, which the baseline pins
  // The corrected model now expects what was measured, from the term (not only the lever effect).
  ModelCorrection terms_only = c;
  terms_only.lever_effects.clear();
  EXPECT_NEAR(sim::predict(offload, terms_only.perturbation(), sim::Detail::Numbers).step_time_s / t1, 1, 0.15);
}

TEST(RulesPolicy, AnOomRulesOutLargerMicroBatchesAtThatSetting) {
  const sim::Workload base = sim::workload_from_recipe(llama3_8b());
  sim::Workload mbs2 = base, mbs4 = base, tp4 = base;
  mbs2.plan.mbs = 2;
  mbs4.plan.mbs = 4;
  tp4.plan.tp = 4;
  Observation failed;
  failed.trial = 1;
  failed.parent = 0;
  failed.outcome = TrialOutcome::Failed;
  failed.failure = "oom";
  failed.workload = mbs2;
  const std::vector<Observation> history = {measured(0, 0, base, 1, 100), failed};
  EXPECT_TRUE(known_infeasible(history, mbs2));
  EXPECT_TRUE(known_infeasible(history, mbs4));
  EXPECT_FALSE(known_infeasible(history, base));
  EXPECT_FALSE(known_infeasible(history, tp4));
}

TEST(RulesPolicy, ProposesAMeasuredBetterMoveWithItsRuleAndNeverRepeatsOne) {
  const recipe::Recipe r = llama3_8b();
  const gate::CorrectnessGate gate;
  const sim::Workload base = sim::workload_from_recipe(r);
  const sim::Prediction p = sim::predict(base, {}, sim::Detail::Numbers);
  std::vector<Observation> history = {measured(0, 0, base, p.step_time_s, p.tokens_per_s_per_gpu)};
  std::vector<Lesson> lessons;
  RulesPolicy rules;
  std::vector<std::string> seen;
  for (int n = 1; n <= 4; ++n) {
    const PolicyContext ctx{r, r, 0, p.tokens_per_s_per_gpu, 0.01, history, nullptr, gate, lessons, 7, n, 0, 0, {}, {}};
    const PolicyAnswer a = rules.propose(ctx);
    ASSERT_TRUE(a.proposal) << a.stop_reason;
    EXPECT_FALSE(a.proposal->rule.empty());
    EXPECT_FALSE(a.proposal->why.empty());
    ASSERT_TRUE(a.proposal->predicted_gain);
    for (const auto& s : seen) EXPECT_NE(s, a.proposal->setting);
    seen.push_back(a.proposal->setting);
    // Record it as measured and no better, as a campaign would.
    std::string why;
    const auto edited = apply_proposal(r, *a.proposal, why);
    ASSERT_TRUE(edited) << why;
    Observation o = measured(n, 0, sim::workload_from_recipe(*edited), p.step_time_s, p.tokens_per_s_per_gpu);
    o.proposal = *a.proposal;
    history.push_back(o);
  }
}

// An accepted combination that delivered far less than predicted: the next
// proposal undoes one of its values, saying why.
TEST(RulesPolicy, ACombinationThatFellShortHasItsValuesUndoneOneAtATime) {
  const recipe::Recipe r = llama3_8b();
  const gate::CorrectnessGate gate;
  const CandidateSpace space(r, gate);
  const sim::Workload& base = space.base();
  const sim::Prediction p0 = sim::predict(base, {}, sim::Detail::Numbers);
  // Two values moved together, both runnable alone and together.
  std::optional<sim::Workload> jump;
  for (const sim::Workload& a : space.one_lever_moves(base)) {
    if (!sim::predict(a, {}, sim::Detail::Numbers).ok) continue;
    for (const sim::Workload& b : space.one_lever_moves(a)) {
      if (moved_dimensions(base, b).size() == 2 && sim::predict(b, {}, sim::Detail::Numbers).ok) jump = b;
      if (jump) break;
    }
    if (jump) break;
  }
  ASSERT_TRUE(jump);
  std::string why;
  std::optional<Proposal> proposal = space.proposal_to(r, base, *jump, why);
  ASSERT_TRUE(proposal) << why;
  proposal->predicted_gain = 0.5;  // predicted +50%, measured +2%
  const std::optional<recipe::Recipe> incumbent = apply_proposal(r, *proposal, why);
  ASSERT_TRUE(incumbent) << why;
  const sim::Workload inc = sim::workload_from_recipe(*incumbent);
  Observation accepted = measured(1, 0, inc, p0.step_time_s / 1.02, 1.02 * p0.tokens_per_s_per_gpu);
  accepted.outcome = TrialOutcome::Accepted;
  accepted.proposal = *proposal;
  const std::vector<Observation> history = {measured(0, 0, base, p0.step_time_s, p0.tokens_per_s_per_gpu), accepted};
  const std::vector<Lesson> lessons;
  RulesPolicy rules;
  const PolicyContext ctx{r, *incumbent, 1, 1.02 * p0.tokens_per_s_per_gpu, 0.01, history, nullptr, gate, lessons, 7, 2, 0, 0, {}, {}};
  const PolicyAnswer a = rules.propose(ctx);
  ASSERT_TRUE(a.proposal) << a.stop_reason;
  EXPECT_EQ(a.proposal->rule, "explore:revert");
  EXPECT_NE(a.proposal->why.find("less than predicted"), std::string::npos) << a.proposal->why;
  // Each change it makes takes a value of the combination back to where it was.
  const std::vector<std::string> jumped = moved_dimensions(base, inc);
  ASSERT_FALSE(a.proposal->changes.empty());
  for (const DimensionChange& d : a.proposal->changes) {
    EXPECT_NE(std::find(jumped.begin(), jumped.end(), d.dimension), jumped.end()) << d.dimension;
    for (const auto& c : proposal->changes) {
      if (c.dimension == d.dimension) {
        EXPECT_EQ(d.to, c.from) << d.dimension;
      }
    }
  }
}

// A book of two levers the nominal model cannot rate, the first in the
// earlier stage.
RuleBook two_blind_levers(const std::string& first_acts_on, const std::string& second_acts_on) {
  return parse_rule_book("r.yaml", "stages: [early, late]\nrules:\n"
                                   "  - {id: early.proto, stage: early, lever: nccl_proto, direction: any, why: w, acts_on: [" +
                                       first_acts_on +
                                       "]}\n"
                                       "  - {id: late.connections, stage: late, lever: max_connections, direction: any, why: w, acts_on: [" +
                                       second_acts_on + "]}\n");
}

// Where no move is predicted to beat the noise, the policy explores what the
// model cannot rate where it acts on the most of the step; a lever acting on
// less of the step than the noise threshold is not tried, unless the
// measured step holds time the model cannot place.
TEST(RulesPolicy, ExplorationsGoWhereTheLeverActsOnMoreOfTheStepThanTheNoise) {
  const recipe::Recipe r = llama3_8b();
  const gate::CorrectnessGate gate;
  const sim::Workload base = sim::workload_from_recipe(r);
  const sim::Prediction p = sim::predict(base, {}, sim::Detail::Numbers);
  ASSERT_GT((p.breakdown.compute_s + p.breakdown.recompute_s) / p.step_time_s, 0.5);
  ASSERT_LT(p.breakdown.data_s / p.step_time_s, 0.05);
  const std::vector<Lesson> lessons;
  const double noise = 0.5;  // no move the model rates is worth a trial against it
  auto propose = [&](const RuleBook& book, double measured_step_s) {
    const std::vector<Observation> history = {measured(0, 0, base, measured_step_s, p.tokens_per_s_per_gpu)};
    RulesPolicy rules(book);
    return rules.propose({r, r, 0, p.tokens_per_s_per_gpu, noise, history, nullptr, gate, lessons, 7, 1, 0, 0, {}, {}});
  };
  // The later stage's lever acts on compute; the earlier one's on data loading, which is almost nothing here.
  const PolicyAnswer a = propose(two_blind_levers("data", "compute, recompute"), p.step_time_s);
  ASSERT_TRUE(a.proposal) << a.stop_reason;
  EXPECT_EQ(a.proposal->rule, "explore:late.connections");
  // Neither acts on enough of the step to show above the noise.
  const PolicyAnswer none = propose(two_blind_levers("data", "data"), p.step_time_s);
  EXPECT_FALSE(none.proposal) << none.proposal->rule;
  // A measured step 2.5 times the model's: most of it is in no part the model knows, and either may move it.
  const PolicyAnswer slow = propose(two_blind_levers("data", "data"), 2.5 * p.step_time_s);
  ASSERT_TRUE(slow.proposal) << slow.stop_reason;
  EXPECT_EQ(slow.proposal->rule, "explore:early.proto");
}

TEST(BaselinePolicies, RandomIsReproducibleFromTheSeedAndGridWalksLeverByLever) {
  const recipe::Recipe r = llama3_8b();
  const gate::CorrectnessGate gate;
  const sim::Workload base = sim::workload_from_recipe(r);
  const std::vector<Observation> history = {measured(0, 0, base, 1, 100)};
  const std::vector<Lesson> lessons;
  const PolicyContext ctx{r, r, 0, 100, 0.01, history, nullptr, gate, lessons, 42, 1, 0, 0, {}, {}};
  RandomPolicy a, b;
  EXPECT_EQ(a.propose(ctx).proposal->label(), b.propose(ctx).proposal->label());
  GridPolicy grid;
  const PolicyAnswer g = grid.propose(ctx);
  ASSERT_TRUE(g.proposal);
  EXPECT_EQ(g.proposal->changes.size(), 1u);
  PlannerPolicy planner;
  const PolicyAnswer pl = planner.propose(ctx);
  ASSERT_TRUE(pl.proposal) << pl.stop_reason;
  EXPECT_EQ(pl.proposal->changes.size(), 1u);
}

}  // namespace
}  // namespace attune::policy
