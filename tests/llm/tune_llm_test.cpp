// `attune tune --policy llm|hybrid` end to end on the simulator, the attune
// binary against a local server speaking each provider's format (OpenAI,
// Anthropic, Bedrock with SigV4): the scripted proposals become trials, the
// journal keeps every exchange, the summary says what the LLM used, a
// provider that keeps failing hands the campaign to the rules, and no file
// the campaign writes holds the key.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fixtures/run_command.h"

#include "llm/scripted_server.h"

namespace {

namespace fs = std::filesystem;
using attune::llm::testing::ScriptedResponse;
using attune::llm::testing::ScriptedServer;
using nlohmann::json;

const std::string kScenario = std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/llama3-8b-axolotl-nd-parallel-tp2";
constexpr const char* kKey = "sk-e2e-secret-5b2c9d41";
constexpr const char* kAwsSecret = "e2eAwsSecretKey/K7MDENG/bPxRfiCYEXAMPLEKEY";

using attune::test::Ran;

Ran run(const std::string& args, const std::string& env) {
  const std::string cmd = "env -u OPENAI_BASE_URL " + env + " " + ATTUNE_BINARY + " " + args + " 2>&1";
  return attune::test::run_command(cmd);
}

std::string scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("attune_tune_llm_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p.string();
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<json> journal(const std::string& dir) {
  std::vector<json> out;
  std::ifstream in(dir + "/journal.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// Every file under `dir` that contains `secret`.
std::vector<std::string> files_holding(const std::string& dir, const std::string& secret) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(secret) != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

json propose(const std::string& lever, const json& value) {
  return {{"lever_or_key", lever}, {"value", value}, {"rationale", "the diagnosis allows it"}, {"expected_effect", "faster"}};
}

// One tool call in each provider's response format.
ScriptedResponse call(const std::string& provider, int n, const std::string& tool, const json& args) {
  const std::string id = "call_" + std::to_string(n);
  json body;
  if (provider == "openai") {
    body = {{"id", "chatcmpl-" + id}, {"object", "chat.completion"}, {"created", 1735689600}, {"model", "gpt-4o-mini"},
            {"choices", {{{"index", 0},
                          {"message", {{"role", "assistant"}, {"content", nullptr},
                                       {"tool_calls", {{{"id", id}, {"type", "function"},
                                                        {"function", {{"name", tool}, {"arguments", args.dump()}}}}}}}},
                          {"logprobs", nullptr}, {"finish_reason", "tool_calls"}}}},
            {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 50}, {"total_tokens", 1050}}}};
  } else if (provider == "anthropic") {
    body = {{"id", "msg_" + id}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-20250514"},
            {"content", {{{"type", "tool_use"}, {"id", "toolu_" + id}, {"name", tool}, {"input", args}}}},
            {"stop_reason", "tool_use"}, {"stop_sequence", nullptr},
            {"usage", {{"input_tokens", 1000}, {"output_tokens", 50}}}};
  } else {
    body = {{"output", {{"message", {{"role", "assistant"},
                                     {"content", {{{"toolUse", {{"toolUseId", "tooluse_" + id}, {"name", tool}, {"input", args}}}}}}}}}},
            {"stopReason", "tool_use"},
            {"usage", {{"inputTokens", 1000}, {"outputTokens", 50}, {"totalTokens", 1050}}},
            {"metrics", {{"latencyMs", 1840}}}};
  }
  return {200, {}, body.dump()};
}

// After a stop the campaign measures its close calls again and asks once
// more, as often as that changes something: the model keeps saying stop.
void add_stops(ScriptedServer& server, const std::string& provider, int first, const std::string& reason) {
  for (int n = first; n < first + 30; ++n) server.push(call(provider, n, "stop", {{"reason", reason}}));
}

std::string model_flag(const std::string& provider) {
  if (provider == "openai") return "openai:gpt-4o-mini";
  if (provider == "anthropic") return "anthropic:claude-sonnet-4-20250514";
  return "bedrock:anthropic.claude-sonnet-4-20250514-v1:0";
}

std::string provider_env(const std::string& provider) {
  if (provider == "openai") return std::string("OPENAI_API_KEY=") + kKey;
  if (provider == "anthropic") return std::string("ANTHROPIC_API_KEY=") + kKey;
  return std::string("-u AWS_BEARER_TOKEN_BEDROCK AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=") + kAwsSecret +
         " AWS_SESSION_TOKEN=" + kKey + " AWS_REGION=us-east-1";
}

std::string base_url(const std::string& provider, const ScriptedServer& server) {
  return provider == "openai" ? server.url() + "/v1" : server.url();
}

std::string tune_args(const std::string& dir, const std::string& policy, const std::string& provider,
                      const ScriptedServer& server) {
  return "tune " + kScenario + " --out " + dir + " --seed 3 --no-lessons --max-trials 4 --json --policy " + policy +
         " --llm " + model_flag(provider) + " --llm-base-url " + base_url(provider, server);
}

class TuneLlm : public ::testing::TestWithParam<std::string> {};

TEST_P(TuneLlm, ScriptedProposalsBecomeTrialsAndEveryExchangeIsJournalled) {
  const std::string provider = GetParam();
  ScriptedServer server({call(provider, 1, "propose", propose("recompute", false)),
                         call(provider, 2, "propose", propose("fsdp_reshard_after_forward", false))});
  add_stops(server, provider, 3, "nothing left beats the noise");
  const std::string dir = scratch("llm_" + provider);
  const Ran r = run(tune_args(dir, "llm", provider, server), provider_env(provider));
  ASSERT_EQ(r.status, 0) << r.out;
  const json s = read_json(dir + "/summary.json");
  EXPECT_EQ(s.at("policy"), "llm");
  EXPECT_EQ(s.at("stop_reason"), "the LLM stopped: nothing left beats the noise");
  const json& usage = s.at("policy_usage");
  const int calls = usage.at("calls").get<int>();
  EXPECT_GE(calls, 3);
  EXPECT_EQ(static_cast<int>(server.requests().size()), calls);
  EXPECT_EQ(usage.at("input_tokens"), 1000 * calls);
  EXPECT_EQ(usage.at("trials_by_llm"), calls);
  EXPECT_EQ(usage.at("trials_by_rules"), 0);
  EXPECT_TRUE(usage.at("fallback").is_null());
  const json& history = s.at("history");
  ASSERT_GE(history.size(), 3u);
  EXPECT_EQ(history[1].at("label"), "recompute true -> false");
  EXPECT_EQ(history[1].at("rule"), "llm");
  // The second request carries the first trial's outcome in its state
  // table, the edit as the recipe spells it with its lever beside it.
  EXPECT_NE(server.requests()[1].body.find("gradient_checkpointing: true -> false [recompute]"), std::string::npos);
  int proposals_with_exchanges = 0;
  for (const json& e : journal(dir)) {
    if (e.value("event", "") == "proposal" && e.at("policy").at("llm").at("exchanges").size() >= 2) ++proposals_with_exchanges;
  }
  EXPECT_EQ(proposals_with_exchanges, 2);
  EXPECT_EQ(files_holding(dir, kKey), std::vector<std::string>{});
  EXPECT_EQ(files_holding(dir, kAwsSecret), std::vector<std::string>{});
  if (provider == "bedrock") {
    const std::string auth = server.requests()[0].header("Authorization");
    EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u) << auth;
    EXPECT_NE(auth.find("/us-east-1/bedrock/aws4_request"), std::string::npos);
    EXPECT_NE(server.requests()[0].path.find("anthropic.claude-sonnet-4-20250514-v1%3A0/converse"), std::string::npos);
  }
  if (!HasFailure()) fs::remove_all(dir);
}

TEST_P(TuneLlm, HybridTakesTheRulesTopCandidate) {
  const std::string provider = GetParam();
  ScriptedServer server({call(provider, 1, "propose", propose("candidate", 1))});
  add_stops(server, provider, 2, "done");
  const std::string dir = scratch("hybrid_" + provider);
  const Ran r = run(tune_args(dir, "hybrid", provider, server), provider_env(provider));
  ASSERT_EQ(r.status, 0) << r.out;
  const json s = read_json(dir + "/summary.json");
  EXPECT_EQ(s.at("policy"), "hybrid");
  ASSERT_GE(s.at("history").size(), 2u);
  EXPECT_NE(server.requests()[0].body.find("The rules' ranking"), std::string::npos);
  EXPECT_EQ(s.at("stop_reason"), "the LLM stopped: done");
  EXPECT_EQ(s.at("policy_usage").at("trials_by_rules"), 0);
  // Trial 1 is the rules' best-ranked candidate, as the rules would have proposed it.
  EXPECT_NE(s.at("history")[1].at("rule").get<std::string>(), "hybrid");
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Providers, TuneLlm, ::testing::Values("openai", "anthropic", "bedrock"));

TEST(TuneLlmFallback, AProviderThatKeepsFailingHandsTheCampaignToTheRules) {
  std::vector<ScriptedResponse> failing(10, {500, {}, R"({"error":{"message":"The server had an error","type":"server_error"}})"});
  ScriptedServer server(failing);
  const std::string dir = scratch("fallback");
  const Ran r = run(tune_args(dir, "llm", "openai", server) + " --llm-retries 0", provider_env("openai"));
  ASSERT_EQ(r.status, 0) << r.out;
  const json s = read_json(dir + "/summary.json");
  EXPECT_EQ(server.requests().size(), 3u) << "three trials in a row, then no more calls";
  const std::string fallback = s.at("policy_usage").at("fallback").get<std::string>();
  EXPECT_NE(fallback.find("3 trials in a row"), std::string::npos) << fallback;
  EXPECT_GE(s.at("policy_notes").size(), 3u);
  EXPECT_EQ(s.at("trials"), 4) << "the rules carried on";
  bool noted = false;
  for (const json& e : journal(dir)) noted = noted || e.value("event", "") == "policy_note";
  EXPECT_TRUE(noted);
  EXPECT_EQ(files_holding(dir, kKey), std::vector<std::string>{});
  fs::remove_all(dir);
}

// `attune replay DIR --what-if llm`: the model is asked against a recorded
// rules campaign, reads the record's baseline log, and its proposal is
// answered by the corrected model; what it used is in the result.
TEST(ReplayWhatIfLlm, TheModelIsAskedAgainstTheRecordAndReadsItsLogs) {
  const std::string dir = scratch("what_if_record");
  ASSERT_EQ(run("tune " + kScenario + " --out " + dir + " --seed 3 --no-lessons --max-trials 4 --json", "").status, 0);
  ScriptedServer server({call("openai", 1, "read_log", {{"trial", 0}, {"pattern", "'loss'"}, {"max_lines", 2}}),
                         call("openai", 2, "propose", propose("recompute", false))});
  add_stops(server, "openai", 3, "enough");
  const Ran r = run("replay " + dir + " --what-if llm --json --llm openai:gpt-4o-mini --llm-base-url " +
                        base_url("openai", server),
                    provider_env("openai"));
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  const json& w = j.at("what_if");
  EXPECT_EQ(w.at("policy"), "llm");
  EXPECT_EQ(w.at("trials")[0].at("what_if").at("label"), "recompute true -> false");
  EXPECT_EQ(w.at("trials")[0].at("what_if").at("source"), "predicted");
  EXPECT_EQ(w.at("stop_reason"), "the LLM stopped: enough");
  EXPECT_EQ(w.at("policy_usage").at("calls").get<std::size_t>(), server.requests().size());
  ASSERT_GE(server.requests().size(), 2u);
  // The read_log answer: the baseline's own first loss line, from the record.
  std::ifstream log(dir + "/trials/0000-baseline/run-1/run.log");
  std::string line, first_loss;
  while (first_loss.empty() && std::getline(log, line)) {
    if (line.find("'loss'") != std::string::npos) first_loss = line.substr(0, 40);
  }
  ASSERT_FALSE(first_loss.empty());
  EXPECT_NE(server.requests()[1].body.find(first_loss), std::string::npos) << server.requests()[1].body.substr(0, 2000);
  EXPECT_EQ(files_holding(dir, kKey), std::vector<std::string>{});

  const Ran stray = run("replay " + dir + " --what-if rules --llm openai:gpt-4o-mini", provider_env("openai"));
  EXPECT_EQ(stray.status, 2) << stray.out;
  EXPECT_NE(stray.out.find("--what-if llm"), std::string::npos) << stray.out;
  const Ran no_model = run("replay " + dir + " --what-if hybrid", "");
  EXPECT_EQ(no_model.status, 2) << no_model.out;
  EXPECT_NE(no_model.out.find("--llm"), std::string::npos) << no_model.out;
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(TuneLlmFallback, AnLlmPolicyWithoutAModelIsAnInputErrorThatLeavesNoCampaign) {
  const std::string dir = scratch("refused");
  const Ran r = run("tune " + kScenario + " --policy llm --no-lessons --out " + dir, "");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--llm PROVIDER:MODEL"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused request leaves no half-made campaign";
  const Ran missing_key = run("tune " + kScenario + " --policy llm --llm anthropic:claude-sonnet-4 --no-lessons --out " + dir,
                              "-u ANTHROPIC_API_KEY");
  EXPECT_EQ(missing_key.status, 2) << missing_key.out;
  EXPECT_NE(missing_key.out.find("ANTHROPIC_API_KEY"), std::string::npos) << missing_key.out;
  EXPECT_FALSE(fs::exists(dir));
  // In a directory that was there already, only what the tune put there goes.
  fs::create_directories(dir);
  std::ofstream(dir + "/mine.txt") << "kept\n";
  EXPECT_EQ(run("tune " + kScenario + " --cluster nosuch --no-lessons --out " + dir, "").status, 2);
  EXPECT_TRUE(fs::exists(dir + "/mine.txt"));
  EXPECT_FALSE(fs::exists(dir + "/journal.jsonl"));
  EXPECT_FALSE(fs::exists(dir + "/campaign.log"));
  fs::remove_all(dir);
}

}  // namespace
