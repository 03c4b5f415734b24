// The LLM policy against a real local server speaking OpenAI's and
// Anthropic's formats: scripted conversations for a normal proposal, every
// fault the issue names (malformed arguments, a hallucinated lever, a gate
// refusal, a repeat, 429 storms, 529, timeouts, 500s until the fallback,
// 401, stop, text without a tool call), hybrid's ranking, and no secret in
// anything the policy hands the campaign.
#include "attune/policy/candidates.h"
#include "attune/policy/llm_policy.h"
#include "attune/recipe/recipe_diff.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "../fixtures/llama3_8b_script.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"
#include "llm/scripted_server.h"
#include "llm/test_doubles.h"

namespace attune::policy {
namespace {

using llm::testing::MapEnvironment;
using llm::testing::RecordingSleeper;
using llm::testing::ScriptedResponse;
using llm::testing::ScriptedServer;
using nlohmann::json;

constexpr const char* kKey = "sk-policy-test-77e1c0ffee";

recipe::Recipe llama3_8b() {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  return recipe::Recipe::from_text("pretrain.sh", test::llama3_8b_script(8, 2), o);
}

// OpenAI's answer carrying one tool call.
ScriptedResponse openai_call(const std::string& id, const std::string& name, const json& args) {
  const json call = {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", args.dump()}}}};
  const json body = {
      {"id", "chatcmpl-" + id}, {"object", "chat.completion"}, {"created", 1735689600}, {"model", "gpt-4o-mini-2024-07-18"},
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}}},
                    {"logprobs", nullptr}, {"finish_reason", "tool_calls"}}}},
      {"usage", {{"prompt_tokens", 812}, {"completion_tokens", 31}, {"total_tokens", 843}}}};
  return {200, {}, body.dump()};
}

ScriptedResponse openai_raw_arguments(const std::string& id, const std::string& arguments_text) {
  ScriptedResponse r = openai_call(id, "propose", json::object());
  json body = json::parse(r.body);
  body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = arguments_text;
  r.body = body.dump();
  return r;
}

ScriptedResponse openai_text(const std::string& text) {
  const json body = {{"id", "chatcmpl-t"}, {"object", "chat.completion"}, {"created", 1735689600}, {"model", "gpt-4o-mini"},
                     {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}},
                                   {"logprobs", nullptr}, {"finish_reason", "stop"}}}},
                     {"usage", {{"prompt_tokens", 700}, {"completion_tokens", 20}, {"total_tokens", 720}}}};
  return {200, {}, body.dump()};
}

ScriptedResponse openai_error(int status, const std::string& type, const std::string& message,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
  const json body = {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}};
  return {status, std::move(headers), body.dump()};
}

json propose_args(const std::string& lever, const json& value) {
  return {{"lever_or_key", lever}, {"value", value}, {"rationale", "headroom"}, {"expected_effect", "+3%"}};
}

// One policy over one scripted server, with the campaign's context.
struct Harness {
  explicit Harness(std::vector<ScriptedResponse> script, bool hybrid = false, std::string provider = "openai")
      : server(std::move(script)),
        environment(llm::testing::Variables{{"OPENAI_API_KEY", kKey}, {"ANTHROPIC_API_KEY", kKey}}),
        original(llama3_8b()) {
    settings.client.provider = provider;
    settings.client.model = provider == "openai" ? "gpt-4o-mini" : "claude-sonnet-4-20250514";
    settings.client.base_url = provider == "openai" ? server.url() + "/v1" : server.url();
    settings.client.max_attempts = 3;
    settings.max_faults = 2;
    this->hybrid = hybrid;
    const sim::Prediction p = sim::predict(sim::workload_from_recipe(original), {}, sim::Detail::Numbers);
    Observation base;
    base.trial = 0;
    base.outcome = TrialOutcome::Baseline;
    base.workload = sim::workload_from_recipe(original);
    base.step_time_s = p.step_time_s;
    base.tokens_per_s_per_gpu = p.tokens_per_s_per_gpu;
    history.push_back(base);
  }
  LlmPolicy& policy() {
    if (!policy_) {
      policy_ = std::make_unique<LlmPolicy>(hybrid, settings,
                                            llm::make_llm_client(settings.client, transport, environment, sleeper));
    }
    return *policy_;
  }
  PolicyAnswer propose(int trial = 1) {
    const PolicyContext ctx{original, original, 0, history[0].tokens_per_s_per_gpu.value_or(0), 0.01, history,
                            nullptr, gate, lessons, 7, trial, 40.0, 0.5, {}, {}};
    return policy().propose(ctx);
  }
  json sent(std::size_t i) const { return json::parse(server.requests().at(i).body); }
  // The tool messages of request i, by call id.
  std::map<std::string, std::string> tool_results(std::size_t i) const {
    std::map<std::string, std::string> out;
    const json request = sent(i);
    for (const auto& m : request.at("messages")) {
      if (m.value("role", "") == "tool") out[m.at("tool_call_id").get<std::string>()] = m.at("content").get<std::string>();
    }
    return out;
  }

  ScriptedServer server;
  llm::CurlTransport transport;
  RecordingSleeper sleeper;
  MapEnvironment environment;
  LlmPolicySettings settings;
  bool hybrid = false;
  recipe::Recipe original;
  gate::CorrectnessGate gate;
  std::vector<Observation> history;
  std::vector<Lesson> lessons;
  std::unique_ptr<LlmPolicy> policy_;
};

TEST(LlmPolicy, PredictsThenProposesThroughTheToolsItWasGiven) {
  Harness h({openai_call("call_1", "predict", {{"lever_or_key", "mbs"}, {"value", 2}}),
             openai_call("call_2", "propose", propose_args("mbs", 2))});
  const PolicyAnswer a = h.propose();
  ASSERT_TRUE(a.proposal) << a.stop_reason;
  EXPECT_EQ(a.proposal->label(), "mbs 1 -> 2");
  ASSERT_EQ(h.server.requests().size(), 2u);
  const json first = h.sent(0);
  EXPECT_EQ(first.at("model"), "gpt-4o-mini");
  std::vector<std::string> tools;
  for (const auto& t : first.at("tools")) tools.push_back(t.at("function").at("name").get<std::string>());
  EXPECT_EQ(tools, (std::vector<std::string>{"propose", "predict", "read_log", "read_profile", "stop"}));
  EXPECT_EQ(first.at("tool_choice"), "required");
  const std::string state = first.at("messages").at(1).at("content").get<std::string>();
  EXPECT_NE(state.find("Campaign state: propose trial 1"), std::string::npos);
  EXPECT_NE(state.find("| 0 | 0 | (the recipe as written) | baseline |"), std::string::npos);
  EXPECT_NE(state.find("Budget left 40.00 GPU-hours"), std::string::npos);
  // The prediction went back with its call's id, from the corrected model.
  const auto results = h.tool_results(1);
  ASSERT_EQ(results.count("call_1"), 1u);
  const json predicted = json::parse(results.at("call_1"));
  EXPECT_EQ(predicted.at("edit"), "mbs 1 -> 2");
  EXPECT_TRUE(predicted.at("predicted_tokens_per_s_per_gpu").get<double>() > 0);
  EXPECT_EQ(predicted.at("gate"), "allowed");
}

TEST(LlmPolicy, MalformedArgumentsGoBackAsThatCallsResult) {
  Harness h({openai_raw_arguments("call_bad", "{\"lever_or_key\": \"mbs\", \"value\": 2,"),
             openai_call("call_ok", "propose", propose_args("mbs", 2))});
  ASSERT_TRUE(h.propose().proposal);
  const auto results = h.tool_results(1);
  ASSERT_EQ(results.count("call_bad"), 1u);
  EXPECT_NE(results.at("call_bad").find("not a JSON object"), std::string::npos) << results.at("call_bad");
}

TEST(LlmPolicy, AHallucinatedLeverOrAMissingArgumentIsExplained) {
  Harness h({openai_call("c1", "propose", propose_args("turbo_mode", true)),
             openai_call("c2", "propose", {{"lever_or_key", "mbs"}, {"value", 2}}),
             openai_call("c3", "propose", propose_args("mbs", 2))});
  ASSERT_TRUE(h.propose().proposal);
  EXPECT_NE(h.tool_results(1).at("c1").find("cannot apply"), std::string::npos) << h.tool_results(1).at("c1");
  EXPECT_NE(h.tool_results(2).at("c2").find("missing argument 'rationale'"), std::string::npos);
}

TEST(LlmPolicy, AGateRefusalGoesBackThenAGoodProposalIsTaken) {
  Harness h({openai_call("c1", "propose", propose_args("--global-batch-size", 128)),
             openai_call("c2", "propose", propose_args("mbs", 2))});
  const PolicyAnswer a = h.propose();
  ASSERT_TRUE(a.proposal);
  EXPECT_EQ(a.proposal->label(), "mbs 1 -> 2");
  EXPECT_NE(h.tool_results(1).at("c1").find("the gate refuses it"), std::string::npos) << h.tool_results(1).at("c1");
}

// Trial 1 ran the proposal, rejected: the campaign's record of it names its
// recipe by its settings.
Observation ran_as_trial_1(const recipe::Recipe& incumbent, const Proposal& p) {
  Observation tried;
  tried.trial = 1;
  tried.proposal = p;
  tried.outcome = TrialOutcome::Rejected;
  tried.runs = 1;
  std::string why;
  const auto edited = apply_proposal(incumbent, p, why);
  if (!edited) throw std::runtime_error("the proposal does not apply: " + why);
  tried.recipe_identity = recipe::settings_identity(*edited);
  tried.workload = sim::workload_from_recipe(*edited);
  return tried;
}

TEST(LlmPolicy, TheSameProposalTwiceIsARepeat) {
  Harness h({openai_call("c1", "propose", propose_args("mbs", 2)), openai_call("c2", "propose", propose_args("mbs", 2)),
             openai_call("c3", "propose", propose_args("--overlap-grad-reduce", true))});
  const PolicyAnswer first = h.propose(1);
  ASSERT_TRUE(first.proposal);
  h.history.push_back(ran_as_trial_1(h.original, *first.proposal));
  const PolicyAnswer second = h.propose(2);
  ASSERT_TRUE(second.proposal);
  EXPECT_NE(second.proposal->label(), first.proposal->label());
  EXPECT_NE(h.tool_results(2).at("c2").find("repeated: trial 1"), std::string::npos) << h.tool_results(2).at("c2");
}

// Two levers the performance model does not read leave the same modelled
// setting: what tells trials apart is the recipe's settings, so the second
// is no repeat of the first.
TEST(LlmPolicy, LeversTheModelDoesNotReadAreNotRepeatsOfEachOther) {
  Harness h({openai_call("c1", "propose", propose_args("--manual-gc", true)),
             openai_call("c2", "propose", propose_args("--cross-entropy-loss-fusion", true))});
  const PolicyAnswer first = h.propose(1);
  ASSERT_TRUE(first.proposal);
  const Observation tried = ran_as_trial_1(h.original, *first.proposal);
  ASSERT_EQ(setting_key(*tried.workload), setting_key(sim::workload_from_recipe(h.original)))
      << "the model reads neither lever: both trials are one modelled setting";
  h.history.push_back(tried);
  const PolicyAnswer second = h.propose(2);
  ASSERT_TRUE(second.proposal) << "the second lever was refused";
  EXPECT_NE(second.proposal->label().find("cross-entropy-loss-fusion"), std::string::npos) << second.proposal->label();
}

TEST(LlmPolicy, A429StormIsWaitedOutAsTheServerAsks) {
  Harness h({openai_error(429, "rate_limit_error", "Rate limit reached", {{"retry-after", "2"}}),
             openai_error(429, "rate_limit_error", "Rate limit reached", {{"retry-after-ms", "1500"}}),
             openai_call("c1", "propose", propose_args("mbs", 2))});
  ASSERT_TRUE(h.propose().proposal);
  EXPECT_EQ(h.sleeper.waits, (std::vector<long>{2000, 1500}));
}

TEST(LlmPolicy, AnthropicOverloadIsRetried) {
  const json overloaded = {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}};
  const json tool_use = {{"id", "msg_01"}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-20250514"},
                         {"content", {{{"type", "tool_use"}, {"id", "toolu_01"}, {"name", "propose"}, {"input", propose_args("mbs", 2)}}}},
                         {"stop_reason", "tool_use"}, {"stop_sequence", nullptr},
                         {"usage", {{"input_tokens", 900}, {"output_tokens", 40}}}};
  Harness h({{529, {}, overloaded.dump()}, {200, {}, tool_use.dump()}}, false, "anthropic");
  ASSERT_TRUE(h.propose().proposal);
  EXPECT_EQ(h.server.requests().size(), 2u);
  EXPECT_EQ(h.server.requests()[0].header("x-api-key"), kKey);
}

TEST(LlmPolicy, ATimeoutGivesTheTrialToTheRules) {
  ScriptedResponse slow = openai_call("c1", "propose", propose_args("mbs", 2));
  slow.delay_ms = 600;
  Harness h({slow, slow, slow});
  h.settings.client.total_timeout_ms = 150;
  const PolicyAnswer a = h.propose();
  ASSERT_TRUE(a.proposal);
  EXPECT_NE(a.proposal->why.find("(rules, for the LLM:"), std::string::npos) << a.proposal->why;
  const auto notes = h.policy().take_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the rules propose this one"), std::string::npos);
  EXPECT_FALSE(h.policy().fell_back());
}

TEST(LlmPolicy, ServerErrorsUntilTheFallbackToRules) {
  std::vector<ScriptedResponse> script(6, openai_error(500, "server_error", "The server had an error"));
  Harness h(script);
  h.propose(1);
  h.propose(2);
  EXPECT_TRUE(h.policy().fell_back());
  const std::size_t asked = h.server.requests().size();
  EXPECT_EQ(asked, 6u);  // two trials, three attempts each
  const PolicyAnswer third = h.propose(3);
  EXPECT_EQ(h.server.requests().size(), asked) << "no call after the fallback";
  EXPECT_TRUE(third.proposal || !third.stop_reason.empty());
  const json usage = h.policy().usage();
  EXPECT_NE(usage.at("fallback").get<std::string>().find("2 trials in a row"), std::string::npos);
}

TEST(LlmPolicy, A401EndsTheLlmAtOnceNamingProviderModelAndError) {
  Harness h({openai_error(401, "invalid_request_error", "Incorrect API key provided: sk-polic*****ffee")});
  const PolicyAnswer a = h.propose();
  EXPECT_TRUE(h.policy().fell_back());
  EXPECT_EQ(h.server.requests().size(), 1u) << "a 401 is not retried";
  const auto notes = h.policy().take_notes();
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("openai gpt-4o-mini"), std::string::npos) << notes.back();
  EXPECT_NE(notes.back().find("Incorrect API key"), std::string::npos);
  EXPECT_EQ(notes.back().find(kKey), std::string::npos);
}

TEST(LlmPolicy, TheModelCallingStopEndsTheCampaignWithItsReason) {
  Harness h({openai_call("c1", "stop", {{"reason", "every lever is within the noise"}})});
  const PolicyAnswer a = h.propose();
  EXPECT_FALSE(a.proposal);
  EXPECT_EQ(a.stop_reason, "the LLM stopped: every lever is within the noise");
}

TEST(LlmPolicy, TextWithoutAToolCallIsAskedAgain) {
  Harness h({openai_text("I would raise the micro batch."), openai_call("c1", "propose", propose_args("mbs", 2))});
  ASSERT_TRUE(h.propose().proposal);
  const json second = h.sent(1);
  const json& messages = second.at("messages");
  EXPECT_EQ(messages.back().at("role"), "user");
  EXPECT_NE(messages.back().at("content").get<std::string>().find("Answer with a tool call"), std::string::npos);
}

TEST(LlmPolicy, NoValidProposalWithinTheRoundsIsAFault) {
  std::vector<ScriptedResponse> script;
  for (int i = 0; i < 3; ++i) script.push_back(openai_call("c" + std::to_string(i), "propose", propose_args("turbo_mode", true)));
  Harness h(script);
  h.settings.rounds_per_trial = 3;
  const PolicyAnswer a = h.propose();
  ASSERT_TRUE(a.proposal);
  EXPECT_NE(a.proposal->why.find("no valid proposal in 3 rounds"), std::string::npos) << a.proposal->why;
}

TEST(LlmPolicy, HybridShowsTheRankingAndTakesACandidateByNumber) {
  Harness h({openai_call("c1", "propose", propose_args("candidate", 1))}, true);
  const PolicyAnswer a = h.propose();
  ASSERT_TRUE(a.proposal);
  const std::string state = h.sent(0).at("messages").at(1).at("content").get<std::string>();
  EXPECT_NE(state.find("The rules' ranking"), std::string::npos);
  EXPECT_NE(state.find("1. " + a.proposal->label()), std::string::npos) << state.substr(state.find("ranking"));
}

TEST(LlmPolicy, UsageAndTheJournalledExchangesCarryNoSecret) {
  Harness h({openai_call("c1", "propose", propose_args("mbs", 2))});
  ASSERT_TRUE(h.propose().proposal);
  const json usage = h.policy().usage();
  EXPECT_EQ(usage.at("calls"), 1);
  EXPECT_EQ(usage.at("input_tokens"), 812);
  EXPECT_EQ(usage.at("output_tokens"), 31);
  EXPECT_NEAR(usage.at("cost_usd").get<double>(), 0, 1e-12);  // a local server costs nothing
  const std::string journalled = h.policy().explain().dump();
  EXPECT_NE(journalled.find("system_prompt"), std::string::npos);
  EXPECT_NE(journalled.find("\"propose\""), std::string::npos);
  EXPECT_EQ(journalled.find(kKey), std::string::npos);
  EXPECT_EQ(usage.dump().find(kKey), std::string::npos);
}

TEST(LlmPolicy, NoCoreFileCanHoldTheKey) {
  Harness h({});
  h.policy();
  rlimit core{};
  ASSERT_EQ(getrlimit(RLIMIT_CORE, &core), 0);
  EXPECT_EQ(core.rlim_cur, 0u);
  EXPECT_EQ(core.rlim_max, 0u);
}

}  // namespace
}  // namespace attune::policy
