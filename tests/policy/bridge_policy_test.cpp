// The bridge baselines (`optuna`, `xgb`) against the real tuner bridge: a
// python3 child importing Optuna or XGBoost (Debian's python3-optuna,
// python3-xgboost). Seconds, not milliseconds: each policy starts an
// interpreter and imports its library. The interpreter is $ATTUNE_PYTHON,
// else Debian's /usr/bin/python3 (the one the packages install into), else
// python3 on PATH.
#include "attune/policy/bridge_policy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "../fixtures/llama3_8b_script.h"
#include "../fixtures/scratch_dir.h"
#include "attune/sim/step_model.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::policy {
namespace {

std::string test_python() {
  if (const char* p = std::getenv("ATTUNE_PYTHON"); p != nullptr && *p != '\0') return p;
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

BridgeSettings settings_with(std::string python = test_python()) {
  BridgeSettings s;
  s.python = std::move(python);
  s.tools_dir = std::string(ATTUNE_SOURCE_DIR) + "/tools";
  s.answer_timeout_s = 60;
  return s;
}

// An executable shell script (a wrapper around the real interpreter).
std::string write_script(const test::ScratchDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.write(name, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

recipe::Recipe llama3_8b() {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  return recipe::Recipe::from_text("pretrain.sh", test::llama3_8b_script(8, 2), o);
}

// A trial as the campaign records it: measured by the nominal model, or
// failed when the model says it cannot run.
Observation observed(int trial, const sim::Workload& w, const Proposal& p = {}) {
  Observation o;
  o.trial = trial;
  o.proposal = p;
  o.workload = w;
  const sim::Prediction pred = sim::predict(w, {}, sim::Detail::Numbers);
  if (trial == 0) o.outcome = TrialOutcome::Baseline;
  if (pred.ok) {
    if (trial > 0) o.outcome = TrialOutcome::Rejected;
    o.tokens_per_s_per_gpu = pred.tokens_per_s_per_gpu;
    o.step_time_s = pred.step_time_s;
  } else {
    o.outcome = TrialOutcome::Failed;
    o.failure = "oom";
  }
  return o;
}

struct Fixture {
  recipe::Recipe original = llama3_8b();
  gate::CorrectnessGate gate;
  std::vector<Lesson> lessons;
  std::vector<Observation> history{observed(0, sim::workload_from_recipe(original))};

  PolicyContext context(std::uint64_t seed = 7) const {
    return PolicyContext{original, original, 0, history.front().tokens_per_s_per_gpu.value_or(0), 0.01, history, nullptr,
                         gate, lessons, seed, static_cast<int>(history.size()), 0, 0, {}, {}};
  }
  // The proposal's setting as the campaign would read the edited recipe.
  sim::Workload applied(const Proposal& p) const {
    std::string why;
    const std::optional<recipe::Recipe> edited = apply_proposal(original, p, why);
    EXPECT_TRUE(edited) << why;
    return edited ? sim::workload_from_recipe(*edited) : sim::workload_from_recipe(original);
  }
};

class BridgePolicyTest : public ::testing::TestWithParam<BridgeMethod> {};

TEST_P(BridgePolicyTest, TheBridgeAnswersWithAnUntriedSettingTheRecipeCanSpell) {
  Fixture f;
  BridgePolicy policy(GetParam(), settings_with());
  EXPECT_EQ(policy.name(), GetParam() == BridgeMethod::Tpe ? "optuna" : "xgb");
  const PolicyAnswer a = policy.propose(f.context());
  ASSERT_TRUE(a.proposal) << a.stop_reason;
  EXPECT_EQ(a.proposal->rule, policy.name());
  EXPECT_FALSE(a.proposal->changes.empty());
  const sim::Workload w = f.applied(*a.proposal);
  EXPECT_FALSE(tried(f.history, w));
  EXPECT_EQ(policy.explain()["told"]["complete"], 1);
}

TEST_P(BridgePolicyTest, ASeededStudyIsReproducibleAndTheSeedMatters) {
  Fixture f;
  BridgePolicy p(GetParam(), settings_with());
  // The first draws are random (TPE's start-up trials, xgb's initial ones): the seed picks them.
  std::set<std::string> by_seed;
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) by_seed.insert(p.propose(f.context(seed)).proposal.value().setting);
  EXPECT_GT(by_seed.size(), 1u);
  for (int t = 1; t <= 3; ++t) {  // a few trials in, past the first random draws
    const PolicyAnswer a = p.propose(f.context());
    ASSERT_TRUE(a.proposal) << a.stop_reason;
    f.history.push_back(observed(t, f.applied(*a.proposal), *a.proposal));
  }
  BridgePolicy first(GetParam(), settings_with()), second(GetParam(), settings_with());
  const PolicyAnswer a = first.propose(f.context(7)), b = second.propose(f.context(7));
  ASSERT_TRUE(a.proposal && b.proposal);
  EXPECT_EQ(a.proposal->setting, b.proposal->setting);
  // Asked again (a resumed campaign: the same history), the same answer.
  EXPECT_EQ(first.propose(f.context(7)).proposal->setting, a.proposal->setting);
}

TEST_P(BridgePolicyTest, AFailedTrialIsToldAsPruned) {
  Fixture f;
  // A setting that ran out of memory.
  sim::Workload big = f.history.front().workload.value();
  big.plan.mbs = 16;
  Observation failed = observed(1, big);
  failed.outcome = TrialOutcome::Failed;
  failed.failure = "oom";
  failed.tokens_per_s_per_gpu.reset();
  f.history.push_back(failed);
  // The interpreter behind a wrapper that keeps a copy of every request.
  test::ScratchDir dir("bridge_policy");
  const std::string log = (dir.path() / "requests.jsonl").string();
  const std::string python = write_script(dir, "python", "tee '" + log + "' | exec '" + test_python() + "' \"$@\"");
  {
    BridgePolicy policy(GetParam(), settings_with(python));
    const PolicyAnswer a = policy.propose(f.context());
    ASSERT_TRUE(a.proposal) << a.stop_reason;
    EXPECT_EQ(policy.explain()["told"]["pruned"], 1);
  }
  std::ifstream in(log);
  std::string first_line;
  std::getline(in, first_line);
  const nlohmann::json request = nlohmann::json::parse(first_line);
  ASSERT_EQ(request["op"], "study");
  ASSERT_EQ(request["trials"].size(), 2u);
  EXPECT_EQ(request["trials"][0]["state"], "complete");
  EXPECT_EQ(request["trials"][1]["state"], "pruned");
  EXPECT_FALSE(request["trials"][1].contains("value"));
  EXPECT_EQ(request["trials"][1]["params"]["mbs"], "16");
}

TEST_P(BridgePolicyTest, NoSettingIsProposedTwice) {
  Fixture f;
  BridgePolicy policy(GetParam(), settings_with());
  std::set<std::string> proposed;
  for (int t = 1; t <= 12; ++t) {
    const PolicyAnswer a = policy.propose(f.context());
    ASSERT_TRUE(a.proposal) << "trial " << t << ": " << a.stop_reason;
    const sim::Workload w = f.applied(*a.proposal);  // it applies: the policy checked
    EXPECT_FALSE(tried(f.history, w)) << "trial " << t << " repeats " << a.proposal->setting;
    EXPECT_TRUE(proposed.insert(a.proposal->setting).second) << a.proposal->setting;
    f.history.push_back(observed(t, w, *a.proposal));
  }
}

TEST_P(BridgePolicyTest, AMissingModuleIsAClearInputError) {
  test::ScratchDir dir("bridge_policy");
  // The real interpreter without its site packages: the library is not there.
  const std::string python = write_script(dir, "python", "exec '" + test_python() + "' -S \"$@\"");
  const std::string module = GetParam() == BridgeMethod::Tpe ? "optuna" : "numpy";
  try {
    BridgePolicy policy(GetParam(), settings_with(python));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "--policy");
    EXPECT_NE(e.message().find("has no Python module '" + module + "'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("ATTUNE_PYTHON"), std::string::npos) << e.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, BridgePolicyTest, ::testing::Values(BridgeMethod::Tpe, BridgeMethod::Xgb),
                         [](const auto& info) { return info.param == BridgeMethod::Tpe ? "optuna" : "xgb"; });

TEST(BridgePolicySetup, AMissingInterpreterOrScriptIsAClearInputError) {
  try {
    BridgePolicy policy(BridgeMethod::Tpe, settings_with("/nonexistent/python3"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("program '/nonexistent/python3' not found"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("ATTUNE_PYTHON"), std::string::npos) << e.message();
  }
  BridgeSettings s = settings_with();
  s.tools_dir = "/nonexistent/tools";
  try {
    BridgePolicy policy(BridgeMethod::Xgb, s);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("/nonexistent/tools/tuner_bridge.py is not there"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("ATTUNE_TOOLS_DIR"), std::string::npos) << e.message();
  }
}

TEST(BridgePolicySetup, ABridgeThatDoesNotAnswerInTimeIsAnInputError) {
  test::ScratchDir dir("bridge_policy");
  BridgeSettings s = settings_with(write_script(dir, "python", "exec sleep 30"));
  s.answer_timeout_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  try {
    BridgePolicy policy(BridgeMethod::Tpe, s);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("did not start: no line within 0.3 s"), std::string::npos) << e.message();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3);
}

}  // namespace
}  // namespace attune::policy
