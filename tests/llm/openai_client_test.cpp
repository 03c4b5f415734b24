// The OpenAI Chat Completions backend against a local server that answers
// with OpenAI's own response bodies, through the real CurlTransport: what the
// client sends, what it reads back, and which errors it retries.
#include "attune/llm/openai/openai_client.h"

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

constexpr const char* kKey = "sk-test-4f9a1c2b7d3e8f60";
constexpr const char* kModel = "gpt-4o-mini";

// OpenAI's reply to the request below: one call of `propose`.
const char* const kToolCallReply = R"({
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1735689600,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": null,
      "tool_calls": [{
        "id": "call_abc123",
        "type": "function",
        "function": {"name": "propose",
                     "arguments": "{\"lever\":\"mbs\",\"value\":2,\"why\":\"31 GiB headroom\"}"}
      }]
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843,
            "prompt_tokens_details": {"cached_tokens": 768, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
})";

const char* const kProposeSchema = R"({
  "type": "object",
  "properties": {
    "lever": {"type": "string"},
    "value": {"type": ["integer", "string", "boolean"]},
    "why":   {"type": "string"}
  },
  "required": ["lever", "value", "why"],
  "additionalProperties": false
})";

// A reply whose one tool call carries `arguments` (a JSON string literal, quotes included).
std::string reply_with_arguments(const std::string& arguments) {
  return R"({"id":"chatcmpl-1","object":"chat.completion","created":1735689600,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1",
"type":"function","function":{"name":"propose","arguments":)" +
         arguments + R"(}}]},"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})";
}

std::string text_reply(const std::string& finish_reason) {
  return R"({"id":"chatcmpl-2","object":"chat.completion","created":1735689600,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":"Nothing left to try.","refusal":null},
"logprobs":null,"finish_reason":")" +
         finish_reason + R"("}],"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}})";
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
  explicit Harness(std::vector<ScriptedResponse> script, Variables variables = {{"OPENAI_API_KEY", kKey}})
      : server(std::move(script)), environment(std::move(variables)) {
    settings.provider = "openai";
    settings.model = kModel;
    settings.base_url = server.url() + "/v1";
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

TEST(OpenAiClient, SendsChatCompletionsRequest) {
  Harness h({ok(kToolCallReply)});
  h.chat();
  const auto requests = h.server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].header("Authorization"), std::string("Bearer ") + kKey);
  EXPECT_EQ(requests[0].header("Content-Type"), "application/json");
  const json body = h.sent(0);
  EXPECT_EQ(body["model"], kModel);
  EXPECT_EQ(body["messages"], json::parse(R"([
    {"role": "system", "content": "You tune LLM training throughput. One lever per proposal."},
    {"role": "user", "content": "Diagnosis: step 1.92 s, 31 GiB headroom, exposed DP comm 9 %."}])"));
  EXPECT_EQ(body["tools"], json::parse(std::string(R"([{"type": "function", "function": {
    "name": "propose", "description": "Propose exactly one lever change.", "parameters": )") + kProposeSchema + "}}]"));
  EXPECT_EQ(body["tool_choice"], "required");
  EXPECT_EQ(body["parallel_tool_calls"], false);
  EXPECT_EQ(body["max_completion_tokens"], 1024);
  EXPECT_EQ(body["temperature"], 0);
}

TEST(OpenAiClient, ToolChoiceIsAutoUnlessAToolIsRequired) {
  Harness h({ok(kToolCallReply), ok(text_reply("stop"))});
  ChatRequest request = propose_request();
  request.require_tool = false;
  h.chat(request);
  EXPECT_EQ(h.sent(0)["tool_choice"], "auto");

  request.tools.clear();  // OpenAI refuses tool_choice and parallel_tool_calls without tools
  h.chat(request);
  EXPECT_FALSE(h.sent(1).contains("tools"));
  EXPECT_FALSE(h.sent(1).contains("tool_choice"));
  EXPECT_FALSE(h.sent(1).contains("parallel_tool_calls"));
}

TEST(OpenAiClient, ParsesToolCallReply) {
  Harness h({ok(kToolCallReply, {{"x-request-id", "req_7f3a"}})});
  const ChatReply reply = h.chat();
  EXPECT_EQ(reply.message.role, Role::assistant);
  EXPECT_EQ(reply.message.text, "");
  ASSERT_EQ(reply.message.tool_calls.size(), 1u);
  const ToolCall& call = reply.message.tool_calls[0];
  EXPECT_EQ(call.id, "call_abc123");
  EXPECT_EQ(call.name, "propose");
  EXPECT_EQ(call.arguments, json::parse(R"({"lever":"mbs","value":2,"why":"31 GiB headroom"})"));
  EXPECT_EQ(call.arguments_text, R"({"lever":"mbs","value":2,"why":"31 GiB headroom"})");
  EXPECT_EQ(call.parse_error, "");
  EXPECT_EQ(reply.stop, StopReason::tool_use);
  EXPECT_EQ(reply.stop_text, "tool_calls");
  EXPECT_EQ(reply.usage.input_tokens, 812);  // cached tokens included
  EXPECT_EQ(reply.usage.cache_read_tokens, 768);
  EXPECT_EQ(reply.usage.cache_write_tokens, 0);
  EXPECT_EQ(reply.usage.output_tokens, 31);
  EXPECT_EQ(reply.request_id, "req_7f3a");
  EXPECT_EQ(reply.message.raw, json::parse(kToolCallReply)["choices"][0]["message"]);
}

TEST(OpenAiClient, EchoesAssistantTurnVerbatimAndAnswersEachCall) {
  // Keys this client does not know (refusal, annotations) must go back too.
  const std::string two_calls = R"({"id":"chatcmpl-3","object":"chat.completion","created":1735689600,
"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,
"annotations":[],"tool_calls":[
{"id":"call_a","type":"function","function":{"name":"propose","arguments":"{\"lever\":\"mbs\",\"value\":2,\"why\":\"x\"}"}},
{"id":"call_b","type":"function","function":{"name":"propose","arguments":"{\"lever\":\"tp\",\"value\":4,\"why\":\"y\"}"}}]},
"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";
  Harness h({ok(two_calls), ok(text_reply("stop"))});
  ChatRequest request = propose_request();
  const ChatReply first = h.chat(request);

  request.messages.push_back(first.message);
  Message answers;
  answers.tool_results = {{"call_a", R"({"verdict":"refused","reason":"global batch would change"})", true},
                          {"call_b", R"({"verdict":"measured","step_s":1.71})"}};
  request.messages.push_back(answers);
  h.chat(request);

  const json messages = h.sent(1)["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[2], json::parse(two_calls)["choices"][0]["message"]);
  EXPECT_EQ(messages[3], json::parse(R"({"role": "tool", "tool_call_id": "call_a",
    "content": "{\"verdict\":\"refused\",\"reason\":\"global batch would change\"}"})"));
  EXPECT_EQ(messages[4], json::parse(R"({"role": "tool", "tool_call_id": "call_b",
    "content": "{\"verdict\":\"measured\",\"step_s\":1.71}"})"));
}

TEST(OpenAiClient, AssistantTurnWithoutRawIsWrittenAsOpenAiSendsOne) {
  Harness h({ok(text_reply("stop"))});
  ChatRequest request = propose_request();
  Message made;
  made.role = Role::assistant;
  made.tool_calls.push_back({"call_9", "propose", json{{"lever", "mbs"}}, "", ""});
  request.messages.push_back(made);
  request.messages.push_back(tool_answers({{"call_9", "ok"}}));
  h.chat(request);
  const json messages = h.sent(0)["messages"];
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[2], json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_9", "type": "function", "function": {"name": "propose", "arguments": "{\"lever\":\"mbs\"}"}}]})"));
  EXPECT_EQ(messages[3], json::parse(R"({"role": "tool", "tool_call_id": "call_9", "content": "ok"})"));
}

TEST(OpenAiClient, MalformedArgumentsSetParseErrorWithoutThrowing) {
  Harness h({ok(reply_with_arguments(R"("{\"lever\":\"mbs\",\"value\":")")),
             ok(reply_with_arguments(R"("[\"mbs\", 2]")")), ok(reply_with_arguments(R"("")"))});
  const ToolCall cut = h.chat().message.tool_calls.at(0);
  EXPECT_EQ(cut.arguments_text, R"({"lever":"mbs","value":)");
  EXPECT_TRUE(cut.arguments.is_null());
  EXPECT_NE(cut.parse_error.find("not JSON"), std::string::npos) << cut.parse_error;

  const ToolCall array = h.chat().message.tool_calls.at(0);
  EXPECT_TRUE(array.arguments.is_null());
  EXPECT_NE(array.parse_error.find("array"), std::string::npos) << array.parse_error;

  const ToolCall empty = h.chat().message.tool_calls.at(0);
  EXPECT_TRUE(empty.arguments.is_null());
  EXPECT_NE(empty.parse_error, "");
}

TEST(OpenAiClient, UnknownArgumentKeysAreKept) {
  Harness h({ok(reply_with_arguments(R"("{\"lever\":\"mbs\",\"value\":2,\"why\":\"w\",\"confidence\":0.8}")"))});
  const ToolCall call = h.chat().message.tool_calls.at(0);
  EXPECT_EQ(call.parse_error, "");
  EXPECT_EQ(call.arguments["confidence"], 0.8);
  EXPECT_EQ(call.arguments["lever"], "mbs");
}

TEST(OpenAiClient, FinishReasonsMapToStopReasons) {
  Harness h({ok(text_reply("stop")), ok(text_reply("length")), ok(text_reply("content_filter"))});
  const ChatReply stop = h.chat();
  EXPECT_EQ(stop.message.text, "Nothing left to try.");
  EXPECT_EQ(stop.stop, StopReason::end_turn);
  EXPECT_EQ(stop.usage.input_tokens, 20);
  EXPECT_EQ(stop.usage.output_tokens, 6);
  EXPECT_EQ(stop.request_id, "");
  EXPECT_EQ(h.chat().stop, StopReason::max_tokens);
  const ChatReply filtered = h.chat();
  EXPECT_EQ(filtered.stop, StopReason::other);
  EXPECT_EQ(filtered.stop_text, "content_filter");
}

TEST(OpenAiClient, ToolCallsEndedWithStopStillWaitForAnswers) {
  // vLLM ends a turn of required tool calls with "stop".
  std::string body = reply_with_arguments(R"("{\"lever\":\"mbs\",\"value\":2,\"why\":\"w\"}")");
  body.replace(body.find("\"tool_calls\"}"), 13, "\"stop\"}");
  Harness h({ok(body)});
  const ChatReply reply = h.chat();
  EXPECT_EQ(reply.stop, StopReason::tool_use);
  EXPECT_EQ(reply.stop_text, "stop");
}

TEST(OpenAiClient, Unauthorized401IsAuthAndNotRetried) {
  Harness h({{401, {}, R"({
    "error": {
        "message": "Incorrect API key provided: sk-test-************8f60. You can find your API key at https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": null,
        "code": "invalid_api_key"
    }
})"}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::auth);
  EXPECT_EQ(e.status(), 401);
  EXPECT_EQ(std::string(e.what()).rfind("openai gpt-4o-mini: HTTP 401 invalid_api_key: Incorrect API key provided", 0), 0u)
      << e.what();
  EXPECT_EQ(h.server.requests().size(), 1u);
  EXPECT_TRUE(h.sleeper.waits.empty());
}

TEST(OpenAiClient, InsufficientQuota429IsQuotaAndNotRetried) {
  Harness h({{429, {}, R"({
    "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "param": null,
        "code": "insufficient_quota"
    }
})"}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::quota);
  EXPECT_STREQ(e.what(), "openai gpt-4o-mini: HTTP 429 insufficient_quota: You exceeded your current quota, "
                         "please check your plan and billing details.");
  EXPECT_EQ(h.server.requests().size(), 1u);
  EXPECT_TRUE(h.sleeper.waits.empty());
}

const char* const kRateLimitBody = R"({
    "error": {
        "message": "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
        "type": "requests",
        "param": null,
        "code": "rate_limit_exceeded"
    }
})";

TEST(OpenAiClient, RateLimit429WithRetryAfterIsRetried) {
  Harness h({{429, {{"retry-after", "2"}}, kRateLimitBody}, ok(kToolCallReply)});
  const ChatReply reply = h.chat();
  EXPECT_EQ(reply.message.tool_calls.at(0).id, "call_abc123");
  const auto requests = h.server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, requests[1].body);
  EXPECT_EQ(h.sleeper.waits, std::vector<long>{2000});
}

TEST(OpenAiClient, RateLimitThatOutlastsTheRetriesIsRateLimited) {
  Harness h({{429, {{"retry-after", "1"}}, kRateLimitBody}, {429, {{"retry-after", "1"}}, kRateLimitBody}});
  h.settings.max_attempts = 2;
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::rate_limited);
  EXPECT_EQ(e.status(), 429);
  EXPECT_NE(std::string(e.what()).find("HTTP 429 rate_limit_exceeded: Rate limit reached"), std::string::npos);
  EXPECT_EQ(h.server.requests().size(), 2u);
}

TEST(OpenAiClient, ServerErrorsAreRetriedThenReported) {
  const std::string body = R"({"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}})";
  Harness h({{500, {}, body}, {503, {}, body}});
  h.settings.max_attempts = 2;
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::server);
  EXPECT_EQ(e.status(), 503);
  EXPECT_NE(std::string(e.what()).find("HTTP 503 server_error: The server had an error"), std::string::npos);
  EXPECT_EQ(h.sleeper.waits.size(), 1u);
}

TEST(OpenAiClient, FlatVllmErrorIsParsed) {
  Harness h({{400, {}, R"({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::bad_request);
  EXPECT_EQ(std::string(e.what()).rfind("openai gpt-4o-mini: HTTP 400 BadRequestError: This model's maximum context length", 0), 0u)
      << e.what();
}

TEST(OpenAiClient, NestedVllmErrorWithIntegerCodeIsParsed) {
  Harness h({{404, {}, R"({"error":{"message":"The model `gpt-4o-mini` does not exist.","type":"NotFoundError","param":"model","code":404}})"}});
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::bad_request);
  EXPECT_STREQ(e.what(), "openai gpt-4o-mini: HTTP 404 NotFoundError: The model `gpt-4o-mini` does not exist.");
}

TEST(OpenAiClient, SuccessThatIsNotAChatCompletionIsServerError) {
  Harness h({{200, {}, "<html><body>Gateway login</body></html>", "text/html"},
             ok(R"({"object":"list","data":[]})")});
  const LlmError page = chat_error(h);
  EXPECT_EQ(page.kind(), LlmErrorKind::server);
  EXPECT_NE(std::string(page.what()).find("<html><body>Gateway login"), std::string::npos) << page.what();
  const LlmError list = chat_error(h);
  EXPECT_EQ(list.kind(), LlmErrorKind::server);
  EXPECT_NE(std::string(list.what()).find("not a chat completion"), std::string::npos) << list.what();
  EXPECT_NE(std::string(list.what()).find(R"({"object":"list")"), std::string::npos) << list.what();
}

TEST(OpenAiClient, MissingKeyForOpenAiIsConfigError) {
  for (const std::string base : {"", "https://api.openai.com/v1/", "https://API.openai.com:443/v1"}) {
    Harness h({}, {});
    h.settings.base_url = base;
    try {
      h.client();
      ADD_FAILURE() << "no error for " << base;
    } catch (const LlmError& e) {
      EXPECT_EQ(e.kind(), LlmErrorKind::config);
      EXPECT_NE(std::string(e.what()).find("OPENAI_API_KEY is not set"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(h.server.requests().empty());
  }
}

TEST(OpenAiClient, LocalServerWithoutKeySendsNoAuthorization) {
  Harness h({ok(kToolCallReply)}, {});
  h.chat();
  ASSERT_EQ(h.server.requests().size(), 1u);
  EXPECT_EQ(h.server.requests()[0].header("Authorization"), "");
}

TEST(OpenAiClient, OpenAiBaseUrlIsHonoured) {
  Harness h({ok(kToolCallReply), ok(kToolCallReply)});
  h.settings.base_url = "";
  h.environment = MapEnvironment(Variables{{"OPENAI_API_KEY", kKey}, {"OPENAI_BASE_URL", h.server.url() + "/v1/"}});
  h.chat();
  EXPECT_EQ(h.server.requests().at(0).path, "/v1/chat/completions");

  // The settings' URL wins over the variable.
  h.settings.base_url = h.server.url() + "/compat/v1";
  h.environment = MapEnvironment(Variables{{"OPENAI_BASE_URL", "http://127.0.0.1:1/v1"}});
  h.chat();
  EXPECT_EQ(h.server.requests().at(1).path, "/compat/v1/chat/completions");
}

TEST(OpenAiClient, ApiKeyNeverAppearsInErrors) {
  const std::string echoed = std::string(R"({"error":{"message":"key )") + kKey + R"( refused","type":"x","code":"y"}})";
  Harness h({{401, {}, echoed}, {429, {}, std::string(R"({"error":{"message":")") + kKey + R"(","code":"insufficient_quota"}})"},
             {400, {}, std::string("bad key ") + kKey}, ok(std::string("<p>") + kKey + "</p>"),
             {400, {}, std::string(150, 'x') + kKey}});  // where an excerpt would cut the key in two
  for (int i = 0; i < 5; ++i) {
    const LlmError e = chat_error(h);
    EXPECT_EQ(std::string(e.what()).find(kKey), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[redacted]"), std::string::npos) << e.what();
  }
}

TEST(OpenAiClient, NoAnswerIsTransportError) {
  Harness h({});
  h.settings.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  h.settings.max_attempts = 2;
  const LlmError e = chat_error(h);
  EXPECT_EQ(e.kind(), LlmErrorKind::transport);
  EXPECT_NE(std::string(e.what()).find("openai gpt-4o-mini"), std::string::npos) << e.what();
  EXPECT_EQ(h.sleeper.waits.size(), 1u);
}

TEST(OpenAiClient, RegistryNamesProviderAndModel) {
  Harness h({});
  const auto client = h.client();
  EXPECT_EQ(client->provider(), "openai");
  EXPECT_EQ(client->model(), kModel);
}

}  // namespace
}  // namespace attune::llm
