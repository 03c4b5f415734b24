// The bench (campaign/bench.h) end to end on the simulator (label bench;
// seconds, not milliseconds): two scenarios copied from recipes/scenarios,
// two policies, two seeds, a small budget. The JSON has the documented shape
// and sane ratios, the chart one polyline per policy, the same seeds give the
// same numbers whatever order the threads finish in, and bad requests are
// refused before anything runs.
#include "attune/campaign/bench.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "attune/util/error.h"

namespace {

namespace fs = std::filesystem;
using namespace attune;

const char* kScenarios[] = {"llama3-8b-axolotl-nd-parallel-tp2", "qwen3-30b-a3b-axolotl-sft-tiny-batch"};
const std::vector<std::string> kPolicies = {"rules", "random"};

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attune_bench_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

campaign::BenchRequest small_bench(const fs::path& scenarios, const fs::path& out) {
  campaign::BenchRequest q;
  q.scenarios_dir = scenarios.string();
  q.policies = kPolicies;
  q.budget_gpu_hours = 40;
  q.seeds = 2;
  q.jobs = 2;
  q.out_dir = out.string();
  return q;
}

class BenchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(scratch("root"));
    fs::create_directories(*root_ / "scenarios");
    for (const char* s : kScenarios)
      fs::copy(fs::path(ATTUNE_SOURCE_DIR) / "recipes/scenarios" / s, *root_ / "scenarios" / s, fs::copy_options::recursive);
    result_ = new campaign::BenchResult(campaign::run_bench(small_bench(*root_ / "scenarios", *root_ / "first")));
    json_ = new nlohmann::json(nlohmann::json::parse(read_text(*root_ / "first" / "bench.json")));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete json_;
    delete result_;
    delete root_;
  }
  static fs::path* root_;
  static campaign::BenchResult* result_;
  static nlohmann::json* json_;
};

fs::path* BenchTest::root_ = nullptr;
campaign::BenchResult* BenchTest::result_ = nullptr;
nlohmann::json* BenchTest::json_ = nullptr;

TEST_F(BenchTest, TheJsonHasTheDocumentedShape) {
  const nlohmann::json& j = *json_;
  EXPECT_EQ(j["budget_gpuh"], 40);
  EXPECT_EQ(j["seeds"], 2);
  ASSERT_TRUE(j["policies"].is_object());
  ASSERT_EQ(j["policies"].size(), kPolicies.size());
  for (const std::string& p : kPolicies) {
    const nlohmann::json& s = j["policies"][p];
    for (const char* key : {"median_ratio_to_optimum", "median_gain", "failed_launch_rate", "median_gpuh_to_95pct"})
      EXPECT_TRUE(s[key].is_number()) << p << " " << key;
    ASSERT_EQ(s["scenarios"].size(), std::size(kScenarios)) << p;
    for (const nlohmann::json& sc : s["scenarios"]) {
      EXPECT_TRUE(sc["name"] == kScenarios[0] || sc["name"] == kScenarios[1]) << sc["name"];
      for (const char* key : {"ratio_to_optimum", "gain", "gpuh_to_95pct", "failed_launches", "gate_refusals"}) {
        ASSERT_EQ(sc[key].size(), 2u) << p << " " << key;
      }
      EXPECT_TRUE(sc["gain_basis"] == "true" || sc["gain_basis"] == "measured");
    }
  }
  EXPECT_EQ(j["scenarios"].size(), std::size(kScenarios));
  EXPECT_FALSE(j["targets"].empty());
}

TEST_F(BenchTest, RatiosAreOfTheTrueOptimumAndGainsArePositive) {
  for (const std::string& p : kPolicies) {
    for (const nlohmann::json& sc : (*json_)["policies"][p]["scenarios"]) {
      for (double r : sc["ratio_to_optimum"]) {
        EXPECT_GT(r, 0) << p << " " << sc["name"];
        EXPECT_LE(r, 1.0001) << p << " " << sc["name"];
      }
      for (double g : sc["gain"]) EXPECT_GT(g, 0) << p << " " << sc["name"];
      for (double h : sc["gpuh_to_95pct"]) {
        EXPECT_GE(h, 0);
        EXPECT_LE(h, 40 + 1e-9);
      }
    }
  }
}

TEST_F(BenchTest, EachCampaignRanInItsOwnDirectoryWithoutItsRunLogs) {
  ASSERT_EQ(result_->campaigns.size(), kPolicies.size() * std::size(kScenarios) * 2);
  for (const campaign::BenchCampaign& c : result_->campaigns) {
    EXPECT_TRUE(fs::exists(fs::path(c.dir) / "journal.jsonl")) << c.dir;
    EXPECT_TRUE(fs::exists(fs::path(c.dir) / "summary.json")) << c.dir;
    EXPECT_FALSE(fs::exists(fs::path(c.dir) / "trials")) << c.dir;
    const nlohmann::json summary = nlohmann::json::parse(read_text(fs::path(c.dir) / "summary.json"));
    EXPECT_FALSE(summary["best"].contains("true_score")) << c.dir;  // the truth is the bench's, not the campaign's
    EXPECT_LE(c.gpu_hours, 40 + 1e-9);
    EXPECT_GT(c.launches, 0);
    ASSERT_FALSE(c.curve.empty());
  }
}

TEST_F(BenchTest, TheChartHasOnePolylinePerPolicyAndTheTableOneRow) {
  const std::string svg = read_text(*root_ / "first" / "bench.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), kPolicies.size());
  const std::string md = read_text(*root_ / "first" / "bench.md");
  for (const std::string& p : kPolicies) EXPECT_NE(md.find("| " + p + " |"), std::string::npos) << p;
}

// Run again with --keep-runs: the same figures, and every campaign's run logs stay.
TEST_F(BenchTest, TheSameSeedsGiveTheSameNumbers) {
  campaign::BenchRequest q = small_bench(*root_ / "scenarios", *root_ / "again");
  q.keep_runs = true;
  const campaign::BenchResult again = campaign::run_bench(q);
  for (const campaign::BenchCampaign& c : again.campaigns)
    EXPECT_TRUE(fs::exists(fs::path(c.dir) / "trials" / "0000-baseline" / "run-1" / "run.log")) << c.dir;
  const nlohmann::json a = campaign::to_json(*result_), b = campaign::to_json(again);
  for (const std::string& p : kPolicies) {
    for (std::size_t i = 0; i < std::size(kScenarios); ++i) {
      const nlohmann::json &x = a["policies"][p]["scenarios"][i], &y = b["policies"][p]["scenarios"][i];
      for (const char* key : {"ratio_to_optimum", "gain", "gpuh_to_95pct", "failed_launches", "launches", "gate_refusals", "gpu_hours"})
        EXPECT_EQ(x[key], y[key]) << p << " " << x["name"] << " " << key;
    }
  }
}

TEST_F(BenchTest, ADirectoryHoldingABenchIsRefused) {
  EXPECT_THROW(campaign::run_bench(small_bench(*root_ / "scenarios", *root_ / "first")), InputError);
}

TEST(BenchPolicies, AnUnknownPolicyIsAnInputErrorListingTheKnownOnes) {
  try {
    campaign::parse_bench_policies("rules,nonesuch", {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "--policies");
    EXPECT_NE(e.message().find("nonesuch"), std::string::npos);
    EXPECT_NE(e.message().find("planner"), std::string::npos) << e.message();
  }
  campaign::BenchRequest q;
  q.policies = {"nonesuch"};
  EXPECT_THROW(campaign::run_bench(q), InputError);
}

TEST(BenchPolicies, AnLlmPolicyWithoutAModelOrARepeatIsRefused) {
  EXPECT_THROW(campaign::parse_bench_policies("hybrid", {}), InputError);
  EXPECT_THROW(campaign::parse_bench_policies("rules,rules", {}), InputError);
  EXPECT_THROW(campaign::parse_bench_policies("", {}), InputError);
}

TEST(BenchPolicies, TheDefaultListHoldsTheRegisteredBaselines) {
  const std::vector<std::string> d = campaign::default_bench_policies({});
  const auto& known = policy::policy_names();
  for (const std::string& p : d) EXPECT_NE(std::find(known.begin(), known.end(), p), known.end()) << p;
  for (const char* p : {"rules", "random", "grid", "planner"}) EXPECT_NE(std::find(d.begin(), d.end(), p), d.end()) << p;
  EXPECT_EQ(std::find(d.begin(), d.end(), "llm"), d.end());
  EXPECT_EQ(d.front(), "rules");
}

TEST(BenchRequest, ADirectoryWithoutScenariosIsRefused) {
  const fs::path empty = scratch("empty");
  fs::create_directories(empty);
  campaign::BenchRequest q;
  q.scenarios_dir = empty.string();
  q.policies = {"planner"};
  q.out_dir = (empty / "out").string();
  try {
    campaign::run_bench(q);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "--scenarios");
  }
  EXPECT_FALSE(fs::exists(empty / "out"));
  fs::remove_all(empty);
}

}  // namespace
