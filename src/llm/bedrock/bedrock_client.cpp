#include "attune/llm/bedrock/bedrock_client.h"

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "attune/llm/bedrock/aws_credentials.h"
#include "attune/llm/bedrock/sigv4.h"

namespace attune::llm {

namespace {

using nlohmann::json;

// bedrock-runtime's endpoints sign with the service name "bedrock".
const char* const kSigningName = "bedrock";

// Where the request goes: `origin` (scheme and authority) + `path`, and the
// authority again as the Host header, which is what gets signed.
struct Endpoint {
  std::string origin;
  std::string host;
  std::string path;
  std::string url() const { return origin + path; }
};

Endpoint converse_endpoint(const LlmSettings& settings, const std::string& region) {
  std::string base = settings.base_url.empty() ? "https://bedrock-runtime." + region + ".amazonaws.com"
                                               : settings.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const auto scheme_end = base.find("://");
  const auto host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const auto host_end = std::min(base.find('/', host_start), base.size());
  Endpoint e;
  e.origin = base.substr(0, host_end);
  e.host = base.substr(host_start, host_end - host_start);
  // The id travels encoded once (':' as %3A, an ARN's '/' as %2F); the
  // signer encodes it a second time, as AWS expects.
  e.path = base.substr(host_end) + "/model/" + sigv4_uri_encode(settings.model, false) + "/converse";
  return e;
}

// Each attempt is signed anew, with the time it is sent: a retry after a
// long wait must not carry a signature that has since expired.
class SigningTransport : public HttpTransport {
 public:
  SigningTransport(HttpTransport& inner, AwsCredentials keys, std::string region, Endpoint at)
      : inner_(inner), keys_(std::move(keys)), region_(std::move(region)), at_(std::move(at)) {}

  HttpResponse post(const HttpRequest& request) override {
    const SigV4Scope scope{region_, kSigningName, amz_date(std::chrono::system_clock::now())};
    const auto signature = sigv4_sign(to_sign(request), keys_, scope);
    last_signature_ = signature.signature;
    HttpRequest signed_request = request;
    signed_request.headers.insert(signed_request.headers.end(), signature.headers.begin(), signature.headers.end());
    return inner_.post(signed_request);
  }

  const std::string& last_signature() const { return last_signature_; }

 private:
  // Every header the request carries is signed; Host is the endpoint's.
  SigV4Request to_sign(const HttpRequest& request) const {
    SigV4Request r{"POST", at_.host, at_.path, "", {}, request.body};
    for (const auto& [name, value] : request.headers)
      if (strcasecmp(name.c_str(), "host") != 0) r.headers.emplace_back(name, value);
    return r;
  }

  HttpTransport& inner_;
  AwsCredentials keys_;
  std::string region_;
  Endpoint at_;
  std::string last_signature_;
};

// --- the request ---

json tool_result_block(const ToolResult& result) {
  json block = {{"toolUseId", result.call_id}, {"content", json::array({{{"text", result.content}}})}};
  // Only the error case is marked: not every model behind Converse takes `status`.
  if (result.is_error) block["status"] = "error";
  return {{"toolResult", block}};
}

// Tool results first: the models that answer tool use want them leading the turn.
json user_content(const Message& m) {
  json content = json::array();
  for (const auto& result : m.tool_results) content.push_back(tool_result_block(result));
  if (!m.text.empty() || content.empty()) content.push_back({{"text", m.text}});
  return content;
}

// The assistant's turn as Bedrock sent it, when we have that; else rebuilt
// from the common form (a turn made up by the caller, or from another provider).
json assistant_content(const Message& m) {
  if (m.raw.is_object() && m.raw.contains("content") && m.raw["content"].is_array()) return m.raw["content"];
  json content = json::array();
  if (!m.text.empty()) content.push_back({{"text", m.text}});
  for (const auto& call : m.tool_calls) {
    const json input = call.arguments.is_object() ? call.arguments : json::object();
    content.push_back({{"toolUse", {{"toolUseId", call.id}, {"name", call.name}, {"input", input}}}});
  }
  return content;
}

json message_json(const Message& m) {
  if (m.role == Role::assistant) return {{"role", "assistant"}, {"content", assistant_content(m)}};
  return {{"role", "user"}, {"content", user_content(m)}};
}

json tool_spec(const ToolSpec& tool) {
  json spec = {{"name", tool.name}};
  if (!tool.description.empty()) spec["description"] = tool.description;
  const json schema = tool.input_schema.is_null() ? json{{"type", "object"}, {"properties", json::object()}}
                                                  : tool.input_schema;
  spec["inputSchema"] = {{"json", schema}};
  return {{"toolSpec", spec}};
}

json tool_config(const ChatRequest& request) {
  json tools = json::array();
  for (const auto& tool : request.tools) tools.push_back(tool_spec(tool));
  const char* choice = request.require_tool ? "any" : "auto";
  return {{"tools", tools}, {"toolChoice", {{choice, json::object()}}}};
}

json converse_body(const ChatRequest& request) {
  json body = {{"messages", json::array()}};
  for (const auto& m : request.messages) body["messages"].push_back(message_json(m));
  if (!request.system.empty()) body["system"] = json::array({{{"text", request.system}}});
  // Bedrock refuses a toolConfig without tools.
  if (!request.tools.empty()) body["toolConfig"] = tool_config(request);
  body["inferenceConfig"] = {{"maxTokens", request.max_output_tokens}, {"temperature", request.temperature}};
  return body;
}

// --- the answer ---

std::string snippet(const std::string& body) {
  std::string out = body.substr(0, 300);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out + (body.size() > 300 ? "..." : "");
}

// Keys, tokens and the signature never reach a message, even when a server
// or a proxy echoes them back.
std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
      text.replace(at, secret.size(), "<redacted>");
  }
  return text;
}

ToolCall tool_call(const json& use) {
  ToolCall call;
  call.id = use.value("toolUseId", "");
  call.name = use.value("name", "");
  const json input = use.contains("input") ? use["input"] : json();
  call.arguments_text = input.dump();
  if (input.is_object()) {
    call.arguments = input;
  } else {
    call.parse_error = "toolUse.input is " + std::string(input.type_name()) + ", not a JSON object";
  }
  return call;
}

StopReason stop_reason(const std::string& word) {
  if (word == "tool_use") return StopReason::tool_use;
  if (word == "end_turn") return StopReason::end_turn;
  if (word == "max_tokens") return StopReason::max_tokens;
  return StopReason::other;
}

long token_count(const json& usage, const char* key) {
  return usage.is_object() && usage.contains(key) && usage[key].is_number_integer() ? usage[key].get<long>() : 0;
}

Message assistant_message(const json& raw) {
  Message m;
  m.role = Role::assistant;
  m.raw = raw;
  for (const auto& block : raw["content"]) {
    if (!block.is_object()) continue;
    if (block.contains("text") && block["text"].is_string())
      m.text += (m.text.empty() ? "" : "\n") + block["text"].get<std::string>();
    if (block.contains("toolUse") && block["toolUse"].is_object()) m.tool_calls.push_back(tool_call(block["toolUse"]));
  }
  return m;
}

// A 2xx answer; LlmError(server) when it is not a Converse response.
ChatReply parse_converse(const HttpResponse& response, const std::string& who) {
  const json body = json::parse(response.body, nullptr, false);
  const bool ok = body.is_object() && body.contains("output") && body["output"].is_object() &&
                  body["output"].contains("message") && body["output"]["message"].is_object() &&
                  body["output"]["message"].contains("content") && body["output"]["message"]["content"].is_array();
  if (!ok)
    throw LlmError(LlmErrorKind::server,
                   who + ": HTTP " + std::to_string(response.status) +
                       " answer is not a Converse response (no output.message.content): " + snippet(response.body),
                   response.status);
  ChatReply reply;
  reply.message = assistant_message(body["output"]["message"]);
  reply.stop_text = body.value("stopReason", "");
  reply.stop = stop_reason(reply.stop_text);
  const json usage = body.contains("usage") ? body["usage"] : json();
  reply.usage = {token_count(usage, "inputTokens"), token_count(usage, "outputTokens")};
  reply.request_id = response.header("x-amzn-RequestId");
  return reply;
}

// "aws.protocol#ThrottlingException:http://..." -> "ThrottlingException".
std::string sanitize_error_type(std::string type) {
  type = type.substr(0, type.find(':'));
  const auto hash = type.find('#');
  return hash == std::string::npos ? type : type.substr(hash + 1);
}

std::string error_type(const HttpResponse& response, const json& body) {
  std::string type = response.header("x-amzn-ErrorType");
  for (const char* key : {"code", "__type"})
    if (type.empty() && body.is_object() && body.contains(key) && body[key].is_string()) type = body[key];
  return sanitize_error_type(type);
}

std::string provider_message(const HttpResponse& response, const json& body) {
  for (const char* key : {"message", "Message"})
    if (body.is_object() && body.contains(key) && body[key].is_string()) return body[key];
  return snippet(response.body);
}

LlmErrorKind error_kind(int status, const std::string& type) {
  if (type == "ServiceQuotaExceededException") return LlmErrorKind::quota;
  if (status == 429) return LlmErrorKind::rate_limited;
  if (status == 401 || status == 403) return LlmErrorKind::auth;
  // 424 ModelErrorException and 408 ModelTimeoutException are the model
  // failing, not our request.
  if (status == 408 || status == 424 || status >= 500 || status < 400) return LlmErrorKind::server;
  return LlmErrorKind::bad_request;
}

[[noreturn]] void throw_http_error(const HttpResponse& response, const std::string& who,
                                   const std::vector<std::string>& secrets) {
  const json body = json::parse(response.body, nullptr, false);
  const std::string type = error_type(response, body);
  const std::string message = provider_message(response, body);
  std::string text = who + ": HTTP " + std::to_string(response.status);
  if (!type.empty()) text += " " + type;
  if (!message.empty()) text += ": " + message;
  throw LlmError(error_kind(response.status, type), redact(text, secrets), response.status);
}

class BedrockClient : public LlmClient {
 public:
  BedrockClient(const LlmSettings& settings, HttpTransport& transport, BedrockAuth auth, Sleeper& sleeper)
      : settings_(settings),
        transport_(transport),
        auth_(std::move(auth)),
        sleeper_(sleeper),
        endpoint_(converse_endpoint(settings_, auth_.region)),
        signing_(transport, auth_.keys, auth_.region, endpoint_) {}

  std::string provider() const override { return "bedrock"; }
  std::string model() const override { return settings_.model; }

  ChatReply chat(const ChatRequest& request) override {
    const std::string who = "bedrock " + settings_.model;
    HttpTransport& via = auth_.bearer_token.empty() ? static_cast<HttpTransport&>(signing_) : transport_;
    const HttpResponse response =
        post_with_retries(via, http_request(request), RetryRule{}, sleeper_, settings_.max_attempts, who);
    if (response.status < 200 || response.status >= 300) throw_http_error(response, who, secrets());
    return parse_converse(response, who);
  }

 private:
  HttpRequest http_request(const ChatRequest& request) const {
    HttpRequest http;
    http.url = endpoint_.url();
    http.headers = {{"Host", endpoint_.host}, {"Content-Type", "application/json"}, {"Accept", "application/json"}};
    if (!auth_.bearer_token.empty()) http.headers.emplace_back("Authorization", "Bearer " + auth_.bearer_token);
    http.body = converse_body(request).dump();
    http.connect_timeout_ms = settings_.connect_timeout_ms;
    http.total_timeout_ms = settings_.total_timeout_ms;
    return http;
  }

  std::vector<std::string> secrets() const {
    return {auth_.bearer_token, auth_.keys.secret_access_key, auth_.keys.session_token, auth_.keys.access_key_id,
            signing_.last_signature()};
  }

  LlmSettings settings_;
  HttpTransport& transport_;
  BedrockAuth auth_;
  Sleeper& sleeper_;
  Endpoint endpoint_;
  SigningTransport signing_;
};

}  // namespace

std::unique_ptr<LlmClient> make_bedrock_client(const LlmSettings& settings, HttpTransport& transport,
                                               const Environment& environment, Sleeper& sleeper) {
  return std::make_unique<BedrockClient>(settings, transport, bedrock_auth(environment), sleeper);
}

}  // namespace attune::llm
