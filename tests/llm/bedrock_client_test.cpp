// The Bedrock Converse client against a local server replaying Bedrock's
// answers: what it sends (path, JSON, headers, a SigV4 signature checked
// here by an independent computation from the request as received), what it
// makes of the answers, which errors it retries, and that no key, token or
// signature reaches an error message.
#include "attune/llm/bedrock/bedrock_client.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/llm/bedrock/aws_credentials.h"
#include "attune/llm/llm_client.h"
#include "llm/scripted_server.h"
#include "llm/test_doubles.h"

namespace attune::llm {
namespace {

using nlohmann::json;
using testing::MapEnvironment;
using testing::RecordedRequest;
using testing::RecordingSleeper;
using testing::ScriptedResponse;
using testing::ScriptedServer;

const char* const kModel = "anthropic.claude-3-haiku-20240307-v1:0";
const char* const kKeyId = "AKIDEXAMPLE";
const char* const kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

// A RecordingSleeper that, when asked, also waits into the next wall-clock
// second: that makes the retry's X-Amz-Date differ from the first attempt's,
// so a signature reused would show.
class ClockSleeper : public RecordingSleeper {
 public:
  bool until_next_second = false;

  void sleep_ms(long ms) override {
    RecordingSleeper::sleep_ms(ms);
    if (!until_next_second) return;
    const auto now = std::chrono::system_clock::now();
    std::this_thread::sleep_until(std::chrono::ceil<std::chrono::seconds>(now) + std::chrono::milliseconds(20));
  }
};

MapEnvironment key_environment() {
  MapEnvironment env;
  env.variables = {{"AWS_ACCESS_KEY_ID", kKeyId}, {"AWS_SECRET_ACCESS_KEY", kSecret}, {"AWS_REGION", "us-west-2"}};
  return env;
}

// --- an independent SigV4, from the request as the server received it ---

std::string to_hex(const unsigned char* data, unsigned size) {
  std::string out;
  char byte[3];
  for (unsigned i = 0; i < size; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", data[i]);
    out += byte;
  }
  return out;
}

std::string digest_hex(const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_Digest(data.data(), data.size(), out, &size, EVP_sha256(), nullptr);
  return to_hex(out, size);
}

std::string mac(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &size);
  return std::string(reinterpret_cast<const char*>(out), size);
}

// The path as received encoded once more; only '%' occurs in ours beyond
// the characters kept.
std::string encode_again(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%25") : std::string(1, c);
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

struct AuthorizationParts {
  std::string algorithm, credential, signed_headers, signature;
};

AuthorizationParts split_authorization(const std::string& value) {
  AuthorizationParts parts;
  std::istringstream in(value);
  in >> parts.algorithm;
  std::string field;
  while (in >> field) {
    if (!field.empty() && field.back() == ',') field.pop_back();
    const auto eq = field.find('=');
    const std::string name = field.substr(0, eq), v = field.substr(eq + 1);
    if (name == "Credential") parts.credential = v;
    if (name == "SignedHeaders") parts.signed_headers = v;
    if (name == "Signature") parts.signature = v;
  }
  return parts;
}

std::string expected_signature(const RecordedRequest& r, const std::string& secret, const std::string& region) {
  const auto auth = split_authorization(r.header("Authorization"));
  std::string header_lines;
  std::istringstream names(auth.signed_headers);
  for (std::string name; std::getline(names, name, ';');) header_lines += name + ":" + trimmed(r.header(name)) + "\n";
  const std::string canonical = r.method + "\n" + encode_again(r.path) + "\n\n" + header_lines + "\n" +
                                auth.signed_headers + "\n" + digest_hex(r.body);
  const std::string amz_date = r.header("X-Amz-Date");
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/bedrock/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + digest_hex(canonical);
  const std::string key = mac(mac(mac(mac("AWS4" + secret, date), region), "bedrock"), "aws4_request");
  const std::string signature = mac(key, to_sign);
  return to_hex(reinterpret_cast<const unsigned char*>(signature.data()), static_cast<unsigned>(signature.size()));
}

// --- requests and answers ---

ScriptedResponse converse_answer(const std::string& body_json, std::vector<std::pair<std::string, std::string>> h = {}) {
  h.emplace_back("x-amzn-RequestId", "2b2ee4c7-1b3b-4d1c-9e0b-5d6f1a0f3c11");
  return {200, h, body_json};
}

ScriptedResponse text_answer() {
  return converse_answer(
      R"({"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn",)"
      R"("usage":{"inputTokens":10,"outputTokens":2,"totalTokens":12},"metrics":{"latencyMs":100}})");
}

ScriptedResponse tool_use_answer() {
  return converse_answer(R"({"output":{"message":{"role":"assistant","content":[
      {"text":"Headroom allows a larger micro batch."},
      {"toolUse":{"toolUseId":"tooluse_kZJMlvQm","name":"propose",
                  "input":{"lever":"mbs","value":2,"why":"31 GiB headroom"}}}]}},
    "stopReason":"tool_use","usage":{"inputTokens":812,"outputTokens":61,"totalTokens":873},
    "metrics":{"latencyMs":1840}})");
}

ScriptedResponse bedrock_error(int status, const std::string& type, const std::string& message) {
  return {status,
          {{"x-amzn-ErrorType", type + ":http://internal.amazon.com/coral/com.amazon.bedrock/"},
           {"x-amzn-RequestId", "5d1c9f2e-0000-4000-8000-000000000000"}},
          json{{"message", message}}.dump()};
}

ToolSpec propose_tool() {
  return {"propose", "Propose exactly one lever change.",
          json::parse(R"({"type":"object","properties":{"lever":{"type":"string"},"why":{"type":"string"},
                          "value":{"type":["integer","string","boolean"]}},"required":["lever","value","why"]})")};
}

ChatRequest simple_request() {
  ChatRequest r;
  r.system = "You tune LLM training throughput. One lever per proposal.";
  r.messages.push_back({Role::user, "Diagnosis: step 1.92 s, 31 GiB headroom.", {}, {}, nullptr});
  r.tools = {propose_tool()};
  r.max_output_tokens = 1024;
  return r;
}

struct Fixture {
  ScriptedServer server;
  CurlTransport transport;
  ClockSleeper sleeper;
  MapEnvironment env = key_environment();
  LlmSettings settings;

  explicit Fixture(std::vector<ScriptedResponse> script) : server(std::move(script)) {
    settings.provider = "bedrock";
    settings.model = kModel;
    settings.base_url = server.url();
  }
  std::unique_ptr<LlmClient> client() { return make_llm_client(settings, transport, env, sleeper); }
  ChatReply chat(const ChatRequest& request = simple_request()) { return client()->chat(request); }
  RecordedRequest only_request() {
    const auto all = server.requests();
    EXPECT_EQ(all.size(), 1u);
    return all.empty() ? RecordedRequest{} : all.front();
  }
};

LlmError chat_error(Fixture& f, const ChatRequest& request = simple_request()) {
  try {
    f.chat(request);
  } catch (const LlmError& e) {
    return e;
  }
  ADD_FAILURE() << "no LlmError";
  return LlmError(LlmErrorKind::transport, "none");
}

// --- what is sent ---

TEST(BedrockClient, PostsToConversePathWithModelIdEncodedOnce) {
  Fixture f({text_answer()});
  f.chat();
  const auto r = f.only_request();
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.header("Host"), "127.0.0.1:" + std::to_string(f.server.port()));
}

TEST(BedrockClient, ModelArnSlashesAreEncodedInThePath) {
  Fixture f({text_answer()});
  f.settings.model = "arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-haiku-v1:0";
  f.chat();
  EXPECT_EQ(f.only_request().path,
            "/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Ainference-profile%2F"
            "us.anthropic.claude-3-haiku-v1%3A0/converse");
}

TEST(BedrockClient, SendsSystemToolsAndInferenceConfig) {
  Fixture f({text_answer()});
  f.chat();
  const json body = json::parse(f.only_request().body);
  EXPECT_EQ(body["system"], json::parse(R"([{"text":"You tune LLM training throughput. One lever per proposal."}])"));
  EXPECT_EQ(body["messages"],
            json::parse(R"([{"role":"user","content":[{"text":"Diagnosis: step 1.92 s, 31 GiB headroom."}]}])"));
  const json& spec = body["toolConfig"]["tools"][0]["toolSpec"];
  EXPECT_EQ(spec["name"], "propose");
  EXPECT_EQ(spec["description"], "Propose exactly one lever change.");
  EXPECT_EQ(spec["inputSchema"]["json"], propose_tool().input_schema);
  EXPECT_EQ(body["toolConfig"]["toolChoice"], json::parse(R"({"any":{}})"));
  EXPECT_EQ(body["inferenceConfig"]["maxTokens"], 1024);
  EXPECT_EQ(body["inferenceConfig"]["temperature"], 0.0);
}

TEST(BedrockClient, ToolChoiceAutoWhenNoToolIsRequired) {
  Fixture f({text_answer()});
  ChatRequest request = simple_request();
  request.require_tool = false;
  f.chat(request);
  EXPECT_EQ(json::parse(f.only_request().body)["toolConfig"]["toolChoice"], json::parse(R"({"auto":{}})"));
}

TEST(BedrockClient, NoToolConfigWithoutTools) {
  Fixture f({text_answer()});
  ChatRequest request = simple_request();
  request.tools.clear();
  f.chat(request);
  EXPECT_FALSE(json::parse(f.only_request().body).contains("toolConfig"));
}

TEST(BedrockClient, EchoesAssistantTurnAndAnswersToolUseById) {
  Fixture f({tool_use_answer(), text_answer()});
  auto client = f.client();
  ChatRequest request = simple_request();
  const ChatReply first = client->chat(request);
  request.messages.push_back(first.message);
  Message answer;
  answer.tool_results = {{"tooluse_kZJMlvQm", "refused: global batch would change", true}};
  request.messages.push_back(answer);
  client->chat(request);

  const auto sent = f.server.requests();
  ASSERT_EQ(sent.size(), 2u);
  const json messages = json::parse(sent[1].body)["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"], json::parse(tool_use_answer().body)["output"]["message"]["content"]);
  EXPECT_EQ(messages[2], json::parse(R"({"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_kZJMlvQm",
      "content":[{"text":"refused: global batch would change"}],"status":"error"}}]})"));
}

TEST(BedrockClient, SuccessfulToolResultCarriesNoStatus) {
  Fixture f({text_answer()});
  ChatRequest request = simple_request();
  Message call;
  call.role = Role::assistant;
  call.tool_calls = {{"tooluse_1", "propose", json{{"lever", "mbs"}}, R"({"lever":"mbs"})", ""}};
  Message answer;
  answer.text = "Measured.";
  answer.tool_results = {{"tooluse_1", "accepted", false}};
  request.messages.push_back(call);
  request.messages.push_back(answer);
  f.chat(request);
  const json messages = json::parse(f.only_request().body)["messages"];
  // Without `raw` the assistant turn is rebuilt from its calls.
  EXPECT_EQ(messages[1]["content"],
            json::parse(R"([{"toolUse":{"toolUseId":"tooluse_1","name":"propose","input":{"lever":"mbs"}}}])"));
  EXPECT_EQ(messages[2]["content"], json::parse(R"([{"toolResult":{"toolUseId":"tooluse_1",
      "content":[{"text":"accepted"}]}},{"text":"Measured."}])"));
}

// --- how it is signed ---

TEST(BedrockClient, SignsWithSigV4ForBedrockInTheRegion) {
  Fixture f({text_answer()});
  f.chat();
  const auto r = f.only_request();
  const auto auth = split_authorization(r.header("Authorization"));
  const std::string amz_date = r.header("X-Amz-Date");
  ASSERT_EQ(amz_date.size(), 16u);
  EXPECT_EQ(auth.algorithm, "AWS4-HMAC-SHA256");
  EXPECT_EQ(auth.credential, std::string(kKeyId) + "/" + amz_date.substr(0, 8) + "/us-west-2/bedrock/aws4_request");
  EXPECT_EQ(auth.signed_headers, "accept;content-type;host;x-amz-date");
  EXPECT_EQ(auth.signature, expected_signature(r, kSecret, "us-west-2"));
  EXPECT_EQ(r.header("X-Amz-Security-Token"), "");
}

TEST(BedrockClient, SessionTokenIsSentAndSigned) {
  Fixture f({text_answer()});
  f.env.variables["AWS_SESSION_TOKEN"] = "FQoGZXIvYXdzEXAMPLETOKEN";
  f.chat();
  const auto r = f.only_request();
  EXPECT_EQ(r.header("X-Amz-Security-Token"), "FQoGZXIvYXdzEXAMPLETOKEN");
  const auto auth = split_authorization(r.header("Authorization"));
  EXPECT_EQ(auth.signed_headers, "accept;content-type;host;x-amz-date;x-amz-security-token");
  EXPECT_EQ(auth.signature, expected_signature(r, kSecret, "us-west-2"));
}

TEST(BedrockClient, BearerTokenSendsNoSigV4) {
  Fixture f({text_answer()});
  f.env.variables["AWS_BEARER_TOKEN_BEDROCK"] = "bedrock-api-key-EXAMPLE";
  f.env.variables["AWS_SESSION_TOKEN"] = "FQoGZXIvYXdzEXAMPLETOKEN";
  f.chat();
  const auto r = f.only_request();
  EXPECT_EQ(r.header("Authorization"), "Bearer bedrock-api-key-EXAMPLE");
  EXPECT_EQ(r.header("X-Amz-Date"), "");
  EXPECT_EQ(r.header("X-Amz-Security-Token"), "");
}

TEST(BedrockClient, KeysFromCredentialsFileProfile) {
  Fixture f({text_answer()});
  f.env.variables = {{"AWS_DEFAULT_REGION", "eu-central-1"}, {"AWS_PROFILE", "work"}};
  f.env.home_files[".aws/credentials"] =
      "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = defaultsecret\n\n"
      "# the work account\n[work]\nAWS_Access_Key_Id=AKIDWORK\r\naws_secret_access_key = worksecret\r\n"
      "aws_session_token = worktoken\n";
  f.chat();
  const auto r = f.only_request();
  EXPECT_EQ(split_authorization(r.header("Authorization")).credential.substr(0, 9), "AKIDWORK/");
  EXPECT_NE(r.header("Authorization").find("/eu-central-1/bedrock/aws4_request"), std::string::npos);
  EXPECT_EQ(r.header("X-Amz-Security-Token"), "worktoken");
  EXPECT_EQ(split_authorization(r.header("Authorization")).signature, expected_signature(r, "worksecret", "eu-central-1"));
}

TEST(BedrockClient, CredentialsIniParsing) {
  const std::string ini = "; comment\n[default]\naws_access_key_id=A\naws_secret_access_key=S\n[empty]\n";
  const auto keys = aws_credentials_from_ini(ini, "default");
  ASSERT_TRUE(keys.has_value());
  EXPECT_EQ(keys->access_key_id, "A");
  EXPECT_EQ(keys->secret_access_key, "S");
  EXPECT_EQ(keys->session_token, "");
  EXPECT_FALSE(aws_credentials_from_ini(ini, "empty").has_value());
  EXPECT_FALSE(aws_credentials_from_ini(ini, "absent").has_value());
}

// --- what it makes of the answers ---

TEST(BedrockClient, ToolUseAnswerBecomesToolCalls) {
  Fixture f({tool_use_answer()});
  const ChatReply reply = f.chat();
  EXPECT_EQ(reply.message.role, Role::assistant);
  EXPECT_EQ(reply.message.text, "Headroom allows a larger micro batch.");
  ASSERT_EQ(reply.message.tool_calls.size(), 1u);
  const ToolCall& call = reply.message.tool_calls[0];
  EXPECT_EQ(call.id, "tooluse_kZJMlvQm");
  EXPECT_EQ(call.name, "propose");
  EXPECT_EQ(call.arguments, json::parse(R"({"lever":"mbs","value":2,"why":"31 GiB headroom"})"));
  EXPECT_EQ(json::parse(call.arguments_text), call.arguments);
  EXPECT_EQ(call.parse_error, "");
  EXPECT_EQ(reply.stop, StopReason::tool_use);
  EXPECT_EQ(reply.stop_text, "tool_use");
  EXPECT_EQ(reply.usage.input_tokens, 812);
  EXPECT_EQ(reply.usage.output_tokens, 61);
  EXPECT_EQ(reply.request_id, "2b2ee4c7-1b3b-4d1c-9e0b-5d6f1a0f3c11");
  EXPECT_EQ(reply.message.raw, json::parse(tool_use_answer().body)["output"]["message"]);
}

TEST(BedrockClient, StopReasons) {
  Fixture f({text_answer(),
             converse_answer(R"({"output":{"message":{"role":"assistant","content":[{"text":"cut"}]}},)"
                             R"("stopReason":"max_tokens","usage":{}})"),
             converse_answer(R"({"output":{"message":{"role":"assistant","content":[]}},)"
                             R"("stopReason":"guardrail_intervened"})")});
  auto client = f.client();
  EXPECT_EQ(client->chat(simple_request()).stop, StopReason::end_turn);
  EXPECT_EQ(client->chat(simple_request()).stop, StopReason::max_tokens);
  const ChatReply other = client->chat(simple_request());
  EXPECT_EQ(other.stop, StopReason::other);
  EXPECT_EQ(other.stop_text, "guardrail_intervened");
}

TEST(BedrockClient, AnswerThatIsNotConverseIsServerError) {
  Fixture f({{200, {}, R"({"unexpected":true})"}});
  const LlmError e = chat_error(f);
  EXPECT_EQ(e.kind(), LlmErrorKind::server);
  EXPECT_NE(std::string(e.what()).find(std::string("bedrock ") + kModel), std::string::npos) << e.what();
}

// --- errors and retries ---

TEST(BedrockClient, ThrottlingIsRetriedAndEachAttemptSignedAnew) {
  Fixture f({bedrock_error(429, "ThrottlingException", "Too many requests, please wait before trying again."),
             tool_use_answer()});
  f.sleeper.until_next_second = true;
  const ChatReply reply = f.chat();
  EXPECT_EQ(reply.message.tool_calls.size(), 1u);
  EXPECT_EQ(f.sleeper.waits.size(), 1u);
  const auto sent = f.server.requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].header("X-Amz-Date"), sent[1].header("X-Amz-Date"));
  for (const auto& r : sent)
    EXPECT_EQ(split_authorization(r.header("Authorization")).signature, expected_signature(r, kSecret, "us-west-2"));
}

TEST(BedrockClient, ValidationExceptionIsBadRequestAndNotRetried) {
  Fixture f({bedrock_error(400, "ValidationException", "The provided model identifier is invalid.")});
  const LlmError e = chat_error(f);
  EXPECT_EQ(e.kind(), LlmErrorKind::bad_request);
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(std::string(e.what()), std::string("bedrock ") + kModel +
                                       ": HTTP 400 ValidationException: The provided model identifier is invalid.");
  EXPECT_EQ(f.server.requests().size(), 1u);
  EXPECT_TRUE(f.sleeper.waits.empty());
}

TEST(BedrockClient, ErrorKindsByTypeAndStatus) {
  struct Case {
    int status;
    const char* type;
    LlmErrorKind kind;
  };
  const Case cases[] = {
      {403, "AccessDeniedException", LlmErrorKind::auth},
      {404, "ResourceNotFoundException", LlmErrorKind::bad_request},
      {400, "ServiceQuotaExceededException", LlmErrorKind::quota},
      {424, "ModelErrorException", LlmErrorKind::server},
      {429, "ThrottlingException", LlmErrorKind::rate_limited},
      {503, "ServiceUnavailableException", LlmErrorKind::server},
  };
  for (const auto& c : cases) {
    Fixture f({bedrock_error(c.status, c.type, "provider says no")});
    f.settings.max_attempts = 1;
    const LlmError e = chat_error(f);
    EXPECT_EQ(e.kind(), c.kind) << c.type;
    EXPECT_EQ(e.status(), c.status) << c.type;
    EXPECT_NE(std::string(e.what()).find(std::string(c.type) + ": provider says no"), std::string::npos) << e.what();
  }
}

TEST(BedrockClient, ErrorTypeFromBodyWhenNoHeader) {
  Fixture f({{400, {}, R"({"__type":"com.amazon.coral.validate#ValidationException","message":"bad"})"}});
  EXPECT_EQ(std::string(chat_error(f).what()), std::string("bedrock ") + kModel + ": HTTP 400 ValidationException: bad");
}

TEST(BedrockClient, ServerErrorsAfterRetriesAreServer) {
  Fixture f({bedrock_error(500, "InternalServerException", "internal"),
             bedrock_error(500, "InternalServerException", "internal")});
  f.settings.max_attempts = 2;
  const LlmError e = chat_error(f);
  EXPECT_EQ(e.kind(), LlmErrorKind::server);
  EXPECT_EQ(f.server.requests().size(), 2u);
}

TEST(BedrockClient, NoSecretInErrorMessages) {
  // A server (or a proxy) that echoes everything it was sent.
  const std::string token = "FQoGZXIvYXdzEXAMPLETOKEN";
  Fixture f({});
  f.env.variables["AWS_SESSION_TOKEN"] = token;
  f.server.push(bedrock_error(403, "InvalidSignatureException",
                              std::string("secret ") + kSecret + " token " + token + " key " + kKeyId));
  f.settings.max_attempts = 1;
  const std::string message = chat_error(f).what();
  const auto r = f.only_request();
  const std::string signature = split_authorization(r.header("Authorization")).signature;
  ASSERT_FALSE(signature.empty());
  for (const std::string& secret : {std::string(kSecret), token, signature, std::string(kKeyId)})
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
  EXPECT_NE(message.find("InvalidSignatureException"), std::string::npos) << message;
}

TEST(BedrockClient, BearerTokenNeverInErrorMessages) {
  Fixture f({bedrock_error(403, "AccessDeniedException", "bad key bedrock-api-key-EXAMPLE")});
  f.env.variables["AWS_BEARER_TOKEN_BEDROCK"] = "bedrock-api-key-EXAMPLE";
  const std::string message = chat_error(f).what();
  EXPECT_EQ(message.find("bedrock-api-key-EXAMPLE"), std::string::npos) << message;
}

// --- configuration ---

LlmError config_error(MapEnvironment env) {
  CurlTransport transport;
  RecordingSleeper sleeper;
  LlmSettings settings;
  settings.provider = "bedrock";
  settings.model = kModel;
  try {
    make_llm_client(settings, transport, env, sleeper);
  } catch (const LlmError& e) {
    return e;
  }
  ADD_FAILURE() << "no LlmError";
  return LlmError(LlmErrorKind::transport, "none");
}

TEST(BedrockClient, MissingCredentialsIsConfigNamingWhereItLooked) {
  MapEnvironment env;
  env.variables = {{"AWS_REGION", "us-east-1"}};
  const LlmError e = config_error(env);
  EXPECT_EQ(e.kind(), LlmErrorKind::config);
  const std::string m = e.what();
  for (const char* looked : {"AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
                             "~/.aws/credentials", "'default'"})
    EXPECT_NE(m.find(looked), std::string::npos) << looked << " not in: " << m;
}

TEST(BedrockClient, MissingProfileIsConfig) {
  MapEnvironment env;
  env.variables = {{"AWS_REGION", "us-east-1"}, {"AWS_PROFILE", "nope"}};
  env.home_files[".aws/credentials"] = std::string("[default]\naws_access_key_id=A\naws_secret_access_key=") + kSecret;
  const LlmError e = config_error(env);
  EXPECT_EQ(e.kind(), LlmErrorKind::config);
  EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find(kSecret), std::string::npos) << e.what();
}

TEST(BedrockClient, HalfAKeyPairIsConfigWithoutTheSecret) {
  MapEnvironment env;
  env.variables = {{"AWS_REGION", "us-east-1"}, {"AWS_SECRET_ACCESS_KEY", kSecret}};
  const LlmError e = config_error(env);
  EXPECT_EQ(e.kind(), LlmErrorKind::config);
  EXPECT_NE(std::string(e.what()).find("AWS_ACCESS_KEY_ID"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find(kSecret), std::string::npos) << e.what();
}

TEST(BedrockClient, MissingOrBadRegionIsConfig) {
  MapEnvironment env = key_environment();
  env.variables.erase("AWS_REGION");
  LlmError e = config_error(env);
  EXPECT_EQ(e.kind(), LlmErrorKind::config);
  EXPECT_NE(std::string(e.what()).find("AWS_REGION"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("AWS_DEFAULT_REGION"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find(kSecret), std::string::npos) << e.what();

  env.variables["AWS_REGION"] = "us-east-1.example.com/x";
  EXPECT_EQ(config_error(env).kind(), LlmErrorKind::config);
}

TEST(BedrockClient, FoundThroughTheRegistry) {
  Fixture f({});
  auto client = f.client();
  EXPECT_EQ(client->provider(), "bedrock");
  EXPECT_EQ(client->model(), kModel);
}

}  // namespace
}  // namespace attune::llm
