// The Anthropic Messages backend against a local server that answers with
// Anthropic's own response bodies, through the real CurlTransport: what the
// client sends, what it reads back, and which errors it retries.
#include "attune/llm/anthropic/anthropic_client.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "llm/scripted_server.h"
#include "llm/test_doubles.h"

namespace attune::llm {
namespace {

using nlohmann::json;
using testing::MapEnvironment;
using testing::ok;
using testing::RecordingSleeper;
using testing::ScriptedResponse;
using testing::ScriptedServer;
using testing::tool_answers;
using testing::user_text;
using testing::Variables;

constexpr const char* kKey = "sk-ant-api03-test-9c1d2e3f4a5b";
constexpr const char* kModel = "claude-sonnet-4-5";

// Anthropic's reply to the request below: a text block and one call of `propose`.
const char* const kToolUseReply = R"({
  "id": "msg_01AbC",
  "type": "message",
  "role": "assistant",
  "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "text", "text": "Headroom allows a larger micro batch."},
    {"type": "tool_use", "id": "toolu_01XyZ", "name": "propose",
     "input": {"lever": "mbs", "value": 2, "why": "31 GiB headroom"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 12, "output_tokens": 61,
            "cache_creation_input_tokens": 100, "cache_read_input_tokens": 700}
})";

const char* const kProposeSchema = R"({
  "type": "object",
  "properties": {"lever": {"type": "string"},
                 "value": {"type": ["integer", "string", "boolean"]},
                 "why": {"type": "string"}},
  "required": ["lever", "value", "why"]
})";

const char* const kOverloaded =
    R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_011CZ8a1"})";

std::string text_reply(const std::string& stop_reason) {
  return R"({"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"text","text":"Nothing left to try."}],"stop_reason":")" +
         stop_reason + R"(","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":6}})";
}

std::string error_body(const std::string& type, const std::string& message) {
  return json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}, {"request_id", "req_011CZ8a2"}}.dump();
}

ChatRequest propose_request() {
  ChatRequest request;
  request.system = "You tune LLM training throughput. One lever per proposal.";
  request.messages.push_back(user_text("Diagnosis: step 1.92 s, 31 GiB headroom, exposed DP comm 9 %."));
  request.tools.push_back({"propose", "Propose exactly one lever change.", json::parse(kProposeSchema)});
  request.max_output_tokens = 1024;
  return request;
}

// One client against one scripted server; the key is set unless a test says otherwise.
struct Harness {
  explicit Harness(std::vector<ScriptedResponse> script,
                   Variables variables = {{"ANTHROPIC_API_KEY", kKey}})
      : server(std::move(script)), environment(std::move(variables)) {
    settings.provider = "anthropic";
    settings.model = kModel;
    settings.base_url = server.url();
  }
  std::unique_ptr<LlmClient> client() { return make_llm_client(settings, transport, environment, sleeper); }
  ChatReply chat(const ChatRequest& request = propose_request()) { return client()->chat(request); }
  json sent(std::size_t i) const { return json::parse(server.requests().at(i).body); }

  ScriptedServer server;
  CurlTransport transport;
  RecordingSleeper sleeper;
  MapEnvironment environment;
  LlmSettings settings;
};

// The LlmError a chat throws; fails the test when it throws none.
LlmError chat_error(Harness& h, const ChatRequest& request = propose_request()) {
  try {
    h.chat(request);
  } catch (const LlmError& e) {
    return e;
  }
  ADD_FAILURE() << "chat did not throw";
  return LlmError(LlmErrorKind::transport, "");
}

TEST(AnthropicClient, SendsMessagesRequest) {
  Harness h({ok(kToolUseReply)});
  h.chat();
  const auto requests = h.server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/messages");
  EXPECT_EQ(requests[0].header("x-api-key"), kKey);
  EXPECT_EQ(requests[0].header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(requests[0].header("content-type"), "application/json");
  EXPECT_EQ(requests[0].header("Authorization"), "");
  const json body = h.sent(0);
  EXPECT_EQ(body["model"], kModel);
  EXPECT_EQ(body["max_tokens"], 1024);
  // One text block, the cache breakpoint after it (tools and system are the cached prefix).
  EXPECT_EQ(body["system"], json::parse(R"([{"type": "text", "text": "You tune LLM training throughput. One lever per proposal.",
    "cache_control": {"type": "ephemeral"}}])"));
  EXPECT_EQ(body["messages"], json::parse(R"([{"role": "user", "content": [
    {"type": "text", "text": "Diagnosis: step 1.92 s, 31 GiB headroom, exposed DP comm 9 %."}]}])"));
  EXPECT_EQ(body["tools"], json::parse(std::string(R"([{"name": "propose",
    "description": "Propose exactly one lever change.", "input_schema": )") + kProposeSchema + "}]"));
  EXPECT_EQ(body["tool_choice"], json::parse(R"({"type": "any", "disable_parallel_tool_use": true})"));
  EXPECT_EQ(body["temperature"], 0);
}

TEST(AnthropicClient, ToolChoiceIsAutoUnlessAToolIsRequired) {
  Harness h({ok(kToolUseReply), ok(text_reply("end_turn"))});
  ChatRequest request = propose_request();
  request.require_tool = false;
  h.chat(request);
  EXPECT_EQ(h.sent(0)["tool_choice"]["type"], "auto");

  request.tools.clear();  // Anthropic refuses tool_choice without tools
  request.system.clear();
  h.chat(request);
  EXPECT_FALSE(h.sent(1).contains("tools"));
  EXPECT_FALSE(h.sent(1).contains("tool_choice"));
  EXPECT_FALSE(h.sent(1).contains("system"));
}

TEST(AnthropicClient, ParsesToolUseReply) {
  Harness h({ok(kToolUseReply, {{"request-id", "req_011CZ8a3"}})});
  const ChatReply reply = h.chat();
  EXPECT_EQ(reply.message.role, Role::assistant);
  EXPECT_EQ(reply.message.text, "Headroom allows a larger micro batch.");
  ASSERT_EQ(reply.message.tool_calls.size(), 1u);
  const ToolCall& call = reply.message.tool_calls[0];
  EXPECT_EQ(call.id, "toolu_01XyZ");
  EXPECT_EQ(call.name, "propose");
  EXPECT_EQ(call.arguments, json::parse(R"({"lever": "mbs", "value": 2, "why": "31 GiB headroom"})"));
  EXPECT_EQ(json::parse(call.arguments_text), call.arguments);
  EXPECT_EQ(call.parse_error, "");
  EXPECT_EQ(reply.stop, StopReason::tool_use);
  EXPECT_EQ(reply.stop_text, "tool_use");
  EXPECT_EQ(reply.usage.input_tokens, 812);  // the uncached 12, the 100 written to the cache and the 700 read from it
  EXPECT_EQ(reply.usage.cache_write_tokens, 100);
  EXPECT_EQ(reply.usage.cache_read_tokens, 700);
  EXPECT_EQ(reply.usage.output_tokens, 61);
  EXPECT_EQ(reply.request_id, "req_011CZ8a3");
  EXPECT_EQ(reply.message.raw, json::parse(kToolUseReply));
}

TEST(AnthropicClient, EchoesContentVerbatimAndAnswersWithToolResults) {
  Harness h({ok(kToolUseReply), ok(text_reply("end_turn"))});
  ChatRequest request = propose_request();
  const ChatReply first = h.chat(request);

  request.messages.push_back(first.message);
  Message answer;
  answer.text = "Budget: 3 trials left.";
  answer.tool_results = {{"toolu_01XyZ", "refused: global batch would change", true}};
  request.messages.push_back(answer);
  h.chat(request);

  const json messages = h.sent(1)["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1], (json{{"role", "assistant"}, {"content", json::parse(kToolUseReply)["content"]}}));
  EXPECT_EQ(messages[2], json::parse(R"({"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_01XyZ",
     "content": "refused: global batch would change", "is_error": true},
    {"type": "text", "text": "Budget: 3 trials left."}]})"));
}

TEST(AnthropicClient, AssistantTurnWithoutRawIsWrittenAsContentBlocks) {
  Harness h({ok(text_reply("end_turn"))});
  ChatRequest request = propose_request();
  Message made;
  made.role = Role::assistant;
  made.text = "Trying a larger micro batch.";
  made.tool_calls.push_back({"toolu_9", "propose", json{{"lever", "mbs"}}, "", ""});
  request.messages.push_back(made);
  request.messages.push_back(tool_answers({{"toolu_9", "ok"}}));
  h.chat(request);
  const json messages = h.sent(0)["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1], json::parse(R"({"role": "assistant", "content": [
    {"type": "text", "text": "Trying a larger micro batch."},
    {"type": "tool_use", "id": "toolu_9", "name": "propose", "input": {"lever": "mbs"}}]})"));
  EXPECT_EQ(messages[2]["content"][0]["is_error"], false);
}

TEST(AnthropicClient, UnknownBlocksAndKeysAreKept) {
  // A thinking block this client does not read must still go back as sent.
  const std::string reply = R"({"id":"msg_03","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"thinking","thinking":"Headroom is large.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA"},
{"type":"tool_use","id":"toolu_02","name":"propose","input":{"lever":"mbs","value":2,"why":"w","confidence":0.8}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":9}})";
  Harness h({ok(reply), ok(text_reply("end_turn"))});
  ChatRequest request = propose_request();
  const ChatReply first = h.chat(request);
  EXPECT_EQ(first.message.text, "");
  EXPECT_EQ(first.message.tool_calls.at(0).arguments["confidence"], 0.8);

  request.messages.push_back(first.message);
  request.messages.push_back(tool_answers({{"toolu_02", "measured"}}));
  h.chat(request);
  EXPECT_EQ(h.sent(1)["messages"][1]["content"], json::parse(reply)["content"]);
}

TEST(AnthropicClient, StopReasonsMap) {
  Harness h({ok(text_reply("end_turn")), ok(text_reply("max_tokens")), ok(text_reply("refusal"))});
  const ChatReply end = h.chat();
  EXPECT_EQ(end.message.text, "Nothing left to try.");
  EXPECT_TRUE(end.message.tool_calls.empty());
  EXPECT_EQ(end.stop, StopReason::end_turn);
  EXPECT_EQ(end.usage.input_tokens, 20);
  EXPECT_EQ(end.usage.output_tokens, 6);
  EXPECT_EQ(h.chat().stop, StopReason::max_tokens);
  const ChatReply refused = h.chat();
  EXPECT_EQ(refused.stop, StopReason::other);
  EXPECT_EQ(refused.stop_text, "refusal");
}

TEST(AnthropicClient, Overloaded529IsRetried) {
  Harness h({{529, {}, kOverloaded}, ok(kToolUseReply)});
  const ChatReply reply = h.chat();
  EXPECT_EQ(reply.message.tool_calls.at(0).id, "toolu_01XyZ");
  EXPECT_EQ(h.server.requests().size(), 2u);
  EXPECT_EQ(h.sleeper.waits.size(), 1u);
}

TEST(AnthropicClient, OverloadThatOutlastsTheRetriesIsServerError) {
  Harness h({{529, {}, kOverloaded}, {529, {}, kOverloaded}});
  h.settings.max_attempts = 2;
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::server);
  EXPECT_EQ(e.status(), 529);
  EXPECT_STREQ(e.what(), "anthropic claude-sonnet-4-5: HTTP 529 overloaded_error: Overloaded");
  EXPECT_EQ(h.server.requests().size(), 2u);
}

TEST(AnthropicClient, RateLimit429WithRetryAfterIsRetried) {
  const std::string limited = error_body(
      "rate_limit_error",
      "This request would exceed the rate limit for your organization of 50 input tokens per minute.");
  Harness h({{429, {{"retry-after", "3"}}, limited}, ok(kToolUseReply)});
  h.chat();
  EXPECT_EQ(h.server.requests().size(), 2u);
  EXPECT_EQ(h.sleeper.waits, std::vector<long>{3000});
}

TEST(AnthropicClient, RateLimitThatOutlastsTheRetriesIsRateLimited) {
  const std::string limited = error_body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit.");
  Harness h({{429, {{"retry-after", "1"}}, limited}, {429, {{"retry-after", "1"}}, limited}});
  h.settings.max_attempts = 2;
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::rate_limited);
  EXPECT_NE(std::string(e.what()).find("HTTP 429 rate_limit_error: Number of request tokens"), std::string::npos);
}

TEST(AnthropicClient, SpendCap429IsQuotaAndNotRetried) {
  Harness h({{429, {}, R"({"type": "error", "error": {"type": "rate_limit_error",
    "message": "You have reached your specified API usage limits. You will regain access on 2026-01-01 at 00:00 UTC.",
    "details": {"error_code": "enforced_spend_limit_reached"}}, "request_id": "req_011CZ8a4"})"}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::quota);
  EXPECT_EQ(std::string(e.what()).rfind("anthropic claude-sonnet-4-5: HTTP 429 enforced_spend_limit_reached: You have reached", 0), 0u)
      << e.what();
  EXPECT_EQ(h.server.requests().size(), 1u);
  EXPECT_TRUE(h.sleeper.waits.empty());
}

TEST(AnthropicClient, BillingErrorsAreQuotaAndNotRetried) {
  // A spend cap that does not name itself in details: its message says so and no retry-after comes.
  Harness h({{402, {}, error_body("billing_error", "Your credit balance is too low to access the Anthropic API.")},
             {429, {}, error_body("rate_limit_error", "You have reached your specified API usage limits.")}});
  const LlmError billing = chat_error(h);
  EXPECT_EQ(billing.kind(), LlmErrorKind::quota);
  EXPECT_NE(std::string(billing.what()).find("HTTP 402 billing_error: Your credit balance"), std::string::npos);
  const LlmError cap = chat_error(h);
  EXPECT_EQ(cap.kind(), LlmErrorKind::quota);
  EXPECT_EQ(h.server.requests().size(), 2u);
  EXPECT_TRUE(h.sleeper.waits.empty());
}

TEST(AnthropicClient, Unauthorized401IsAuthAndNotRetried) {
  Harness h({{401, {}, error_body("authentication_error", "invalid x-api-key")}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::auth);
  EXPECT_EQ(e.status(), 401);
  EXPECT_STREQ(e.what(), "anthropic claude-sonnet-4-5: HTTP 401 authentication_error: invalid x-api-key");
  EXPECT_EQ(h.server.requests().size(), 1u);
  EXPECT_TRUE(h.sleeper.waits.empty());
}

TEST(AnthropicClient, ClientErrorsAreBadRequests) {
  Harness h({{400, {}, error_body("invalid_request_error", "messages: at least one message is required")},
             {404, {}, error_body("not_found_error", "model: claude-sonnet-4-5")},
             {413, {}, error_body("request_too_large", "Request exceeds the maximum allowed number of bytes.")}});
  for (const int status : {400, 404, 413}) {
    const LlmError e = chat_error(h);
    EXPECT_EQ(e.kind(), LlmErrorKind::bad_request) << e.what();
    EXPECT_EQ(e.status(), status);
  }
  EXPECT_EQ(h.server.requests().size(), 3u);
}

TEST(AnthropicClient, SuccessThatIsNotAMessageIsServerError) {
  Harness h({{200, {}, "<html><body>Gateway login</body></html>", "text/html"}, ok(R"({"type":"completion"})")});
  const LlmError page = chat_error(h);
  EXPECT_EQ(page.kind(), LlmErrorKind::server);
  EXPECT_NE(std::string(page.what()).find("<html><body>Gateway login"), std::string::npos) << page.what();
  const LlmError other = chat_error(h);
  EXPECT_EQ(other.kind(), LlmErrorKind::server);
  EXPECT_NE(std::string(other.what()).find("not a Messages reply"), std::string::npos) << other.what();
}

TEST(AnthropicClient, MissingKeyIsConfigError) {
  Harness h({}, {});
  try {
    h.client();
    ADD_FAILURE() << "no error without ANTHROPIC_API_KEY";
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::config);
    EXPECT_NE(std::string(e.what()).find("ANTHROPIC_API_KEY is not set"), std::string::npos) << e.what();
  }
}

TEST(AnthropicClient, ApiKeyNeverAppearsInErrors) {
  Harness h({{401, {}, error_body("authentication_error", std::string("invalid x-api-key ") + kKey)},
             {400, {}, std::string("bad key ") + kKey}, ok(std::string("<p>") + kKey + "</p>")});
  for (int i = 0; i < 3; ++i) {
    const LlmError e = chat_error(h);
    EXPECT_EQ(std::string(e.what()).find(kKey), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[redacted]"), std::string::npos) << e.what();
  }
}

TEST(AnthropicClient, BaseUrlWithTrailingSlash) {
  Harness h({ok(kToolUseReply)});
  h.settings.base_url = h.server.url() + "/";
  h.chat();
  EXPECT_EQ(h.server.requests().at(0).path, "/v1/messages");
}

TEST(AnthropicClient, RegistryNamesProviderAndModel) {
  Harness h({});
  const auto client = h.client();
  EXPECT_EQ(client->provider(), "anthropic");
  EXPECT_EQ(client->model(), kModel);
}

}  // namespace
}  // namespace attune::llm
