#include "attune/llm/anthropic/anthropic_client.h"

#include <string>
#include <utility>

#include "attune/llm/wire_util.h"

namespace attune::llm {

namespace {

using nlohmann::json;

constexpr const char* kDefaultBaseUrl = "https://api.anthropic.com";
constexpr const char* kApiVersion = "2023-06-01";

// --- request ---------------------------------------------------------------

json tool_of(const ToolSpec& tool) {
  // input_schema is required; a tool without parameters takes an empty object.
  json schema = tool.input_schema.is_null() ? json{{"type", "object"}} : tool.input_schema;
  return {{"name", tool.name}, {"description", tool.description}, {"input_schema", std::move(schema)}};
}

json text_block(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

json user_turn(const Message& message) {
  json content = json::array();
  // The tool_result blocks before any text, as Anthropic's tool-use guide asks.
  for (const ToolResult& result : message.tool_results)
    content.push_back({{"type", "tool_result"},
                       {"tool_use_id", result.call_id},
                       {"content", result.content},
                       {"is_error", result.is_error}});
  if (!message.text.empty() || content.empty()) content.push_back(text_block(message.text));
  return {{"role", "user"}, {"content", std::move(content)}};
}

// The provider wants its content blocks back exactly as it sent them; a turn
// without them (written by hand, or replayed from our fields) is written in
// the same shape.
json assistant_turn(const Message& message) {
  const json& received = wire::member(message.raw, "content");
  if (received.is_array()) return {{"role", "assistant"}, {"content", received}};
  json content = json::array();
  if (!message.text.empty()) content.push_back(text_block(message.text));
  for (const ToolCall& call : message.tool_calls)
    content.push_back({{"type", "tool_use"},
                       {"id", call.id},
                       {"name", call.name},
                       {"input", call.arguments.is_object() ? call.arguments : json::object()}});
  return {{"role", "assistant"}, {"content", std::move(content)}};
}

json request_body(const std::string& model, const ChatRequest& request) {
  json messages = json::array();
  for (const Message& message : request.messages)
    messages.push_back(message.role == Role::user ? user_turn(message) : assistant_turn(message));
  json body = {{"model", model},
               {"max_tokens", request.max_output_tokens},
               {"messages", std::move(messages)},
               {"temperature", request.temperature}};
  // The tools and the system prompt are the same in every call of a
  // campaign: a cache breakpoint after them lets later calls read that
  // prefix from the prompt cache (a prefix under the model's minimum is
  // simply not cached).
  if (!request.system.empty())
    body["system"] = json::array({{{"type", "text"}, {"text", request.system}, {"cache_control", {{"type", "ephemeral"}}}}});
  if (request.tools.empty()) return body;  // tool_choice is refused without tools
  json tools = json::array();
  for (const ToolSpec& tool : request.tools) tools.push_back(tool_of(tool));
  body["tools"] = std::move(tools);
  // One proposal per turn, as with OpenAI's parallel_tool_calls: false.
  body["tool_choice"] = {{"type", request.require_tool ? "any" : "auto"}, {"disable_parallel_tool_use", true}};
  return body;
}

// --- response --------------------------------------------------------------

ToolCall tool_call_from(const json& block) {
  ToolCall call;
  call.id = wire::string_at(block, "id");
  call.name = wire::string_at(block, "name");
  const json& input = wire::member(block, "input");
  call.arguments_text = input.dump();
  if (input.is_object())
    call.arguments = input;
  else
    call.parse_error = std::string("the input is a JSON ") + input.type_name() + ", not an object";
  return call;
}

StopReason stop_reason(const std::string& stop) {
  if (stop == "tool_use") return StopReason::tool_use;
  if (stop == "end_turn") return StopReason::end_turn;
  if (stop == "max_tokens") return StopReason::max_tokens;
  return StopReason::other;
}

ChatReply reply_from(const wire::JsonReply& answer, const wire::ErrorScope& scope) {
  const json& content = wire::member(answer.body, "content");
  if (wire::string_at(answer.body, "type") != "message" || !content.is_array())
    scope.fail_format(answer.response, "a Messages reply");

  ChatReply reply;
  reply.message.role = Role::assistant;
  reply.message.raw = answer.body;
  for (const json& block : content) {
    const std::string type = wire::string_at(block, "type");
    // Text may come in several blocks (split around citations): they join without a separator.
    if (type == "text") reply.message.text += wire::string_at(block, "text");
    if (type == "tool_use") reply.message.tool_calls.push_back(tool_call_from(block));
  }
  reply.stop_text = wire::string_at(answer.body, "stop_reason");
  reply.stop = stop_reason(reply.stop_text);
  const json& usage = wire::member(answer.body, "usage");
  // input_tokens is the uncached part: the cache's writes and reads come beside it.
  reply.usage.cache_write_tokens = wire::integer_at(usage, "cache_creation_input_tokens");
  reply.usage.cache_read_tokens = wire::integer_at(usage, "cache_read_input_tokens");
  reply.usage.input_tokens =
      wire::integer_at(usage, "input_tokens") + reply.usage.cache_write_tokens + reply.usage.cache_read_tokens;
  reply.usage.output_tokens = wire::integer_at(usage, "output_tokens");
  reply.request_id = answer.response.header("request-id");
  return reply;
}

// The spend cap's own code where it gives one (its type is rate_limit_error
// like any 429), else the error type ("overloaded_error").
std::string error_word(const wire::ProviderError& error) {
  const std::string code = wire::string_at(wire::member(error.error, "details"), "error_code");
  return code.empty() ? error.type : code;
}

class AnthropicClient final : public LlmClient {
 public:
  AnthropicClient(const LlmSettings& settings, const std::string& url, std::string key, HttpTransport& transport,
                  Sleeper& sleeper)
      : model_(settings.model),
        key_(std::move(key)),
        endpoint_(settings, url, {"anthropic " + model_, key_}, error_word, transport, sleeper) {}

  std::string provider() const override { return "anthropic"; }
  std::string model() const override { return model_; }

  ChatReply chat(const ChatRequest& request) override {
    HttpHeaders headers = {{"x-api-key", key_}, {"anthropic-version", kApiVersion}};
    return reply_from(endpoint_.post(std::move(headers), request_body(model_, request)), endpoint_.scope());
  }

 private:
  std::string model_;
  std::string key_;
  wire::JsonEndpoint endpoint_;
};

}  // namespace

std::unique_ptr<LlmClient> make_anthropic_client(const LlmSettings& settings, HttpTransport& transport,
                                          const Environment& environment, Sleeper& sleeper) {
  const auto key = wire::nonempty(environment, "ANTHROPIC_API_KEY");
  if (!key) throw LlmError(LlmErrorKind::config, "anthropic " + settings.model + ": ANTHROPIC_API_KEY is not set");
  const std::string base = wire::without_trailing_slash(settings.base_url.empty() ? kDefaultBaseUrl : settings.base_url);
  return std::make_unique<AnthropicClient>(settings, base + "/v1/messages", *key, transport, sleeper);
}

}  // namespace attune::llm
