#include "attune/llm/openai/openai_client.h"

#include <optional>
#include <string>
#include <utility>

#include "attune/llm/wire_util.h"

namespace attune::llm {

namespace {

using nlohmann::json;

constexpr const char* kDefaultBaseUrl = "https://api.openai.com/v1";
constexpr const char* kOpenAiHost = "api.openai.com";

// The settings' URL, else OPENAI_BASE_URL (where the OpenAI SDKs look for a
// compatible server), else OpenAI's own.
std::string base_url(const LlmSettings& settings, const Environment& environment) {
  if (!settings.base_url.empty()) return wire::without_trailing_slash(settings.base_url);
  return wire::without_trailing_slash(wire::nonempty(environment, "OPENAI_BASE_URL").value_or(kDefaultBaseUrl));
}

// --- request ---------------------------------------------------------------

json function_tool(const ToolSpec& tool) {
  json function = {{"name", tool.name}, {"description", tool.description}};
  if (!tool.input_schema.is_null()) function["parameters"] = tool.input_schema;  // omitted = no parameters
  return {{"type", "function"}, {"function", std::move(function)}};
}

std::string arguments_text_of(const ToolCall& call) {
  if (!call.arguments_text.empty()) return call.arguments_text;
  return call.arguments.is_object() ? call.arguments.dump() : "{}";
}

// An assistant turn without the provider's own JSON (written by hand, or
// replayed from our fields), in the shape OpenAI sends one.
json assistant_from_fields(const Message& message) {
  json calls = json::array();
  for (const ToolCall& call : message.tool_calls)
    calls.push_back({{"id", call.id},
                     {"type", "function"},
                     {"function", {{"name", call.name}, {"arguments", arguments_text_of(call)}}}});
  json out = {{"role", "assistant"}, {"content", message.text}};
  if (calls.empty()) return out;
  if (message.text.empty()) out["content"] = nullptr;
  out["tool_calls"] = std::move(calls);
  return out;
}

void append_user(const Message& message, json& messages) {
  // The tool answers first: OpenAI wants them right after the assistant turn
  // whose calls they answer, before any other message.
  for (const ToolResult& result : message.tool_results)
    messages.push_back({{"role", "tool"}, {"tool_call_id", result.call_id}, {"content", result.content}});
  if (!message.text.empty() || message.tool_results.empty())
    messages.push_back({{"role", "user"}, {"content", message.text}});
}

json messages_of(const ChatRequest& request) {
  json messages = json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const Message& message : request.messages) {
    if (message.role == Role::user) {
      append_user(message, messages);
    } else {
      // The provider wants its own message back, exactly as it sent it.
      messages.push_back(message.raw.is_object() ? message.raw : assistant_from_fields(message));
    }
  }
  return messages;
}

json request_body(const std::string& model, const ChatRequest& request) {
  json body = {{"model", model},
               {"messages", messages_of(request)},
               {"max_completion_tokens", request.max_output_tokens},
               {"temperature", request.temperature}};
  if (request.tools.empty()) return body;  // tool_choice and parallel_tool_calls are refused without tools
  json tools = json::array();
  for (const ToolSpec& tool : request.tools) tools.push_back(function_tool(tool));
  body["tools"] = std::move(tools);
  body["tool_choice"] = request.require_tool ? "required" : "auto";
  body["parallel_tool_calls"] = false;  // one proposal per turn
  return body;
}

// --- response --------------------------------------------------------------

// The model writes the arguments as text, which need not be JSON: keep what
// parses and say why what does not (the policy tells the model), never throw.
void parse_arguments(ToolCall& call) {
  try {
    json parsed = json::parse(call.arguments_text);
    if (parsed.is_object()) {
      call.arguments = std::move(parsed);
      return;
    }
    call.parse_error = std::string("the arguments are a JSON ") + parsed.type_name() + ", not an object";
  } catch (const json::exception& e) {
    std::string why = e.what();
    const auto tag = why.find("] ");  // "[json.exception.parse_error.101] parse error at ..."
    call.parse_error = "the arguments are not JSON: " + (tag == std::string::npos ? why : why.substr(tag + 2));
  }
  call.arguments = nullptr;
}

ToolCall tool_call_from(const json& wire_call) {
  ToolCall call;
  call.id = wire::string_at(wire_call, "id");
  const json& function = wire::member(wire_call, "function");
  call.name = wire::string_at(function, "name");
  const json& arguments = wire::member(function, "arguments");
  if (arguments.is_object()) {  // some compatible servers send the object itself
    call.arguments = arguments;
    call.arguments_text = arguments.dump();
    return call;
  }
  call.arguments_text = wire::string_at(function, "arguments");
  parse_arguments(call);
  return call;
}

StopReason stop_reason(const std::string& finish_reason, bool made_calls) {
  if (finish_reason == "tool_calls" || finish_reason == "function_call") return StopReason::tool_use;
  // Some compatible servers (vLLM when a tool is required) end a turn of
  // tool calls with "stop"; the turn still waits for our answers.
  if (finish_reason == "stop") return made_calls ? StopReason::tool_use : StopReason::end_turn;
  if (finish_reason == "length") return StopReason::max_tokens;
  return StopReason::other;
}

ChatReply reply_from(const wire::JsonReply& answer, const wire::ErrorScope& scope) {
  const json& choices = wire::member(answer.body, "choices");
  if (!choices.is_array() || choices.empty() || !wire::member(choices[0], "message").is_object())
    scope.fail_format(answer.response, "a chat completion");
  const json& choice = choices[0];
  const json& message = choice["message"];

  ChatReply reply;
  reply.message.role = Role::assistant;
  reply.message.raw = message;
  reply.message.text = wire::string_at(message, "content");  // null beside tool calls
  const json& calls = wire::member(message, "tool_calls");
  if (calls.is_array())
    for (const json& call : calls) reply.message.tool_calls.push_back(tool_call_from(call));
  reply.stop_text = wire::string_at(choice, "finish_reason");
  reply.stop = stop_reason(reply.stop_text, !reply.message.tool_calls.empty());
  const json& usage = wire::member(answer.body, "usage");
  reply.usage.input_tokens = wire::integer_at(usage, "prompt_tokens");  // cached tokens included
  reply.usage.output_tokens = wire::integer_at(usage, "completion_tokens");
  // OpenAI caches long prompt prefixes by itself and says how much it read.
  reply.usage.cache_read_tokens = wire::integer_at(wire::member(usage, "prompt_tokens_details"), "cached_tokens");
  reply.request_id = answer.response.header("x-request-id");
  return reply;
}

// OpenAI's code ("insufficient_quota", "invalid_api_key"); vLLM's type
// ("BadRequestError") where its code is only the status again.
std::string error_word(const wire::ProviderError& error) { return error.code.empty() ? error.type : error.code; }

class OpenAiClient final : public LlmClient {
 public:
  OpenAiClient(const LlmSettings& settings, const std::string& url, std::optional<std::string> key,
               HttpTransport& transport, Sleeper& sleeper)
      : model_(settings.model),
        key_(std::move(key)),
        endpoint_(settings, url, {"openai " + model_, key_.value_or("")}, error_word, transport, sleeper) {}

  std::string provider() const override { return "openai"; }
  std::string model() const override { return model_; }

  ChatReply chat(const ChatRequest& request) override {
    HttpHeaders headers;
    if (key_) headers.emplace_back("Authorization", "Bearer " + *key_);
    return reply_from(endpoint_.post(std::move(headers), request_body(model_, request)), endpoint_.scope());
  }

 private:
  std::string model_;
  std::optional<std::string> key_;
  wire::JsonEndpoint endpoint_;
};

}  // namespace

std::unique_ptr<LlmClient> make_openai_client(const LlmSettings& settings, HttpTransport& transport,
                                          const Environment& environment, Sleeper& sleeper) {
  const std::string base = base_url(settings, environment);
  auto key = wire::nonempty(environment, "OPENAI_API_KEY");
  // Local compatible servers (vLLM, SGLang, Ollama, llama.cpp) take no key; OpenAI's own always does.
  if (!key && wire::url_host(base) == kOpenAiHost)
    throw LlmError(LlmErrorKind::config, "openai " + settings.model + ": OPENAI_API_KEY is not set (" + base +
                                             " needs it; a local OpenAI-compatible server named by "
                                             "OPENAI_BASE_URL does not)");
  return std::make_unique<OpenAiClient>(settings, base + "/chat/completions", std::move(key), transport, sleeper);
}

}  // namespace attune::llm
