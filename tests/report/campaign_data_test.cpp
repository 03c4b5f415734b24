// Reading a campaign directory back: trials, memory, the LLM's reasoning, the
// best-so-far line, a copied directory, damaged input.
#include "attune/report/campaign_data.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "../fixtures/scratch_dir.h"
#include "attune/util/error.h"
#include "campaign_fixture.h"

namespace attune::report {
namespace {

namespace fs = std::filesystem;

TEST(CampaignDataTest, ReadsTrialsFromTheJournal) {
  test::ScratchDir scratch("report_data");
  test::write_campaign_fixture(scratch.path());
  const CampaignData d = read_campaign(scratch.path().string());
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  ASSERT_EQ(d.trials.size(), 4u);
  const TrialRow& base = d.trials[0];
  EXPECT_EQ(base.outcome, "baseline");
  ASSERT_TRUE(base.tokens_per_s_per_gpu);
  EXPECT_DOUBLE_EQ(*base.tokens_per_s_per_gpu, 1005);
  ASSERT_TRUE(base.interval);
  EXPECT_LT(base.interval->low, 1005);
  EXPECT_GT(base.interval->high, 1005);
  EXPECT_DOUBLE_EQ(*base.memory_gib, 41);
  const TrialRow& oom = d.trials[1];
  EXPECT_EQ(oom.failure, "oom");
  EXPECT_NE(oom.evidence.find("OutOfMemoryError"), std::string::npos);
  EXPECT_FALSE(oom.tokens_per_s_per_gpu);
  EXPECT_FALSE(oom.memory_gib);
  EXPECT_EQ(oom.lever, "mbs");
  EXPECT_EQ(oom.value, "4");
  const TrialRow& tp = d.trials[2];
  EXPECT_EQ(tp.verdict, "accept: +30% > 2% and U-test p = 0.001 < 0.05");
  EXPECT_EQ(tp.runs.size(), 3u);
  EXPECT_DOUBLE_EQ(*tp.tokens_per_s_per_gpu, 1305);
  EXPECT_EQ(d.trials[3].outcome, "refused");
  EXPECT_TRUE(d.trials[3].runs.empty());
  EXPECT_EQ(d.framework, "axolotl");
  EXPECT_EQ(d.model, "llama3-8b");
  EXPECT_EQ(d.hardware.nodes, 2);
  ASSERT_TRUE(d.gpu_memory_gib);
  EXPECT_DOUBLE_EQ(*d.gpu_memory_gib, 79.1);
  EXPECT_DOUBLE_EQ(d.gpu_hours, 6);
  ASSERT_EQ(d.best_diffs.size(), 1u);
  EXPECT_EQ(d.best_diffs[0].name, "train.yaml.diff");
  EXPECT_TRUE(d.verification.is_object());
}

TEST(CampaignDataTest, KeepsTheRationaleOfEachToolCall) {
  test::ScratchDir scratch("report_data");
  test::write_campaign_fixture(scratch.path());
  const CampaignData d = read_campaign(scratch.path().string());
  const std::vector<std::string>& r = d.trials[2].llm_reasoning;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], "said: TP communication is exposed.");
  EXPECT_EQ(r[1], "predict(lever_or_key = tp, value = 1)");
  // Arguments sent as a JSON string are read as the object they spell.
  EXPECT_EQ(r[2], "propose(expected_effect = +20%, lever_or_key = tp, value = 1): halve TP: <b>all-reduce</b> & \"gathers\" exposed");
  EXPECT_TRUE(d.trials[1].llm_reasoning.empty());
}

TEST(CampaignDataTest, BestSoFarFollowsTheIncumbentOverGpuHours) {
  test::ScratchDir scratch("report_data");
  test::write_campaign_fixture(scratch.path());
  const CampaignData d = read_campaign(scratch.path().string());
  ASSERT_GE(d.best_so_far.size(), 3u);
  EXPECT_DOUBLE_EQ(d.best_so_far.front().gpu_hours, 2);
  EXPECT_DOUBLE_EQ(d.best_so_far.front().tokens_per_s_per_gpu, 1005);
  EXPECT_EQ(d.best_so_far.back().trial, 2);
  EXPECT_DOUBLE_EQ(d.best_so_far.back().gpu_hours, 6);
  for (std::size_t i = 1; i < d.best_so_far.size(); ++i) EXPECT_GE(d.best_so_far[i].gpu_hours, d.best_so_far[i - 1].gpu_hours);
}

TEST(CampaignDataTest, ACopiedDirectoryReadsTheSame) {
  test::ScratchDir scratch("report_data");
  test::write_campaign_fixture(scratch.path() / "a");
  fs::copy(scratch.path() / "a", scratch.path() / "b", fs::copy_options::recursive);
  fs::remove_all(scratch.path() / "a");
  const CampaignData d = read_campaign((scratch.path() / "b").string());
  EXPECT_TRUE(d.problems.empty());
  EXPECT_DOUBLE_EQ(*d.trials[0].memory_gib, 41);
  EXPECT_EQ(d.trials[0].runs[0].dir, "trials/0000-baseline/run-1");
}

TEST(CampaignDataTest, ATruncatedJournalLineIsNamedNotFatal) {
  test::ScratchDir scratch("report_data");
  std::string journal = test::write_campaign_fixture(scratch.path());
  journal.resize(journal.size() - 40);  // the verification event cut short, no newline after it
  test::write_text(scratch.path() / "journal.jsonl", journal);
  const CampaignData d = read_campaign(scratch.path().string());
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_NE(d.problems[0].find("journal.jsonl:17: truncated line"), std::string::npos) << d.problems[0];
  EXPECT_TRUE(d.verification.is_null());
  EXPECT_EQ(d.trials.size(), 4u);
}

TEST(CampaignDataTest, DamagedFieldsAndFilesAreNamed) {
  test::ScratchDir scratch("report_data");
  std::string journal = test::write_campaign_fixture(scratch.path());
  journal = "not json at all\n" + journal + R"({"event":"trial","trial":"x","outcome":5})" + "\n" + "[1,2]\n";
  test::write_text(scratch.path() / "journal.jsonl", journal);
  test::write_text(scratch.path() / "trials/0000-baseline/run-2/diagnosis.json", "{\"memory\": ");
  const CampaignData d = read_campaign(scratch.path().string());
  ASSERT_EQ(d.problems.size(), 3u);
  EXPECT_NE(d.problems[0].find("journal.jsonl:1: damaged line"), std::string::npos) << d.problems[0];
  EXPECT_NE(d.problems[1].find("journal.jsonl:20: damaged line (not a JSON object)"), std::string::npos) << d.problems[1];
  EXPECT_NE(d.problems[2].find("trials/0000-baseline/run-2/diagnosis.json: not valid JSON"), std::string::npos) << d.problems[2];
  EXPECT_EQ(d.trials.size(), 4u);
}

TEST(CampaignDataTest, ADirectoryWithoutJournalOrSummaryIsRefused) {
  test::ScratchDir scratch("report_data");
  try {
    read_campaign(scratch.path().string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "journal.jsonl");
    EXPECT_NE(std::string(e.what()).find("not a campaign directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace attune::report
