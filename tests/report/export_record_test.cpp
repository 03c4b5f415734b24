// The export record against docs/export-schema.json, its hashes against the
// files, and the schema check against records it must refuse.
#include "attune/report/export_record.h"

#include <gtest/gtest.h>

#include "../fixtures/scratch_dir.h"
#include "attune/report/sha256.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "campaign_fixture.h"
#include "json_schema_check.h"

namespace attune::report {
namespace {

test::SchemaCheck schema() {
  return test::SchemaCheck(nlohmann::json::parse(read_file(std::string(ATTUNE_SOURCE_DIR) + "/docs/export-schema.json")));
}

std::string joined(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

TEST(ExportRecordTest, MatchesTheSchema) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  const nlohmann::json r = export_record(scratch.path().string());
  const std::vector<std::string> errors = schema().errors(r);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_EQ(r["framework"]["name"], "axolotl");
  EXPECT_TRUE(r["framework"]["version"].is_null());
  EXPECT_TRUE(r["framework"]["container_image"].is_null());
  EXPECT_EQ(r["hardware"]["gpus_per_node"], 8);
  EXPECT_EQ(r["recipe"]["original"], "tensor_parallel_size: 2\nmicro_batch_size: 1\n");
  EXPECT_EQ(r["recipe"]["tuned"], "tensor_parallel_size: 1\nmicro_batch_size: 1\n");
  EXPECT_DOUBLE_EQ(r["throughput"]["before"]["tokens_per_s_per_gpu"].get<double>(), 1005);
  EXPECT_EQ(r["throughput"]["after"]["trial"], 2);
  EXPECT_EQ(r["throughput"]["after"]["ci95"].size(), 2u);
  EXPECT_TRUE(r["loss_parity"]["verified"].get<bool>());
  EXPECT_EQ(r["loss_parity"]["event"]["event"], "verification");
  EXPECT_DOUBLE_EQ(r["gpu_hours"].get<double>(), 6);
}

// The version and image are what the baseline's wrapper as launched declares.
TEST(ExportRecordTest, TheFrameworkVersionAndImageAreTheWrappersOwn) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  test::write_text(scratch.path() / "trials/0000-baseline/run-1/train.attune.yaml",
                   "framework: axolotl\nframework_version: 0.9.2\nconfig: train.yaml\nmodel: llama3-8b\n"
                   "hardware: {gpu: h100, nodes: 2, gpus_per_node: 8}\n"
                   "launch: {container: {image: \"axolotlai/axolotl:0.9.2\"}}\n");
  const nlohmann::json r = export_record(scratch.path().string());
  EXPECT_TRUE(schema().errors(r).empty()) << joined(schema().errors(r));
  EXPECT_EQ(r["framework"]["version"], "0.9.2");
  EXPECT_EQ(r["framework"]["container_image"], "axolotlai/axolotl:0.9.2");
}

TEST(ExportRecordTest, HashesEveryLogOfTheBaselineAndTheBestTrial) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  const nlohmann::json r = export_record(scratch.path().string());
  ASSERT_EQ(r["logs"].size(), 5u);  // baseline runs 1-2, trial 2 runs 1-3; the failed trial 1 is no part of the claim
  for (const auto& log : r["logs"]) {
    EXPECT_NE(log["trial"], 1);
    const FileHash h = sha256_file((scratch.path() / log["path"].get<std::string>()).string());
    EXPECT_EQ(log["sha256"], h.sha256);
    EXPECT_EQ(log["bytes"], h.bytes);
  }
  // A known digest: SHA-256 of "abc".
  test::write_text(scratch.path() / "abc", "abc");
  EXPECT_EQ(sha256_file((scratch.path() / "abc").string()).sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(ExportRecordTest, AMissingLogIsAProblemInTheRecord) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  std::filesystem::remove(scratch.path() / "trials/0002-tp/run-3/run.log");
  const nlohmann::json r = export_record(scratch.path().string());
  EXPECT_EQ(r["logs"].size(), 4u);
  ASSERT_EQ(r["problems"].size(), 1u);
  EXPECT_EQ(r["problems"][0], "trials/0002-tp/run-3: no run log to hash");
  EXPECT_TRUE(schema().errors(r).empty());
}

TEST(ExportRecordTest, AnUnfinishedCampaignIsRefused) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  std::filesystem::remove(scratch.path() / "summary.json");
  EXPECT_THROW(export_record(scratch.path().string()), InputError);
}

TEST(ExportRecordTest, TheSchemaCheckRefusesBrokenRecords) {
  test::ScratchDir scratch("report_export");
  test::write_campaign_fixture(scratch.path());
  const nlohmann::json good = export_record(scratch.path().string());
  test::SchemaCheck check = schema();
  nlohmann::json r = good;
  r.erase("gpu_hours");
  EXPECT_EQ(joined(check.errors(r)), "/: required 'gpu_hours' is missing\n");
  r = good;
  r["logs"][0]["sha256"] = "XYZ";
  EXPECT_EQ(check.errors(r).size(), 1u);
  r = good;
  r["hardware"]["nodes"] = "two";
  EXPECT_EQ(check.errors(r).size(), 1u);
  r = good;
  r["extra"] = 1;
  EXPECT_EQ(joined(check.errors(r)), "/: 'extra' is not allowed\n");
  r = good;
  r["format"] = "other/2";
  EXPECT_EQ(check.errors(r).size(), 1u);
  r = good;
  r["throughput"]["after"]["ci95"] = nlohmann::json::array({"low"});
  EXPECT_EQ(check.errors(r).size(), 1u);
}

}  // namespace
}  // namespace attune::report
