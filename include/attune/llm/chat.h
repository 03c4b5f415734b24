// The conversation the LLM policy holds with a model, in terms common to
// every provider: a system prompt, turns of text, the tools the model may
// call, its tool calls (with the provider's call id) and our answers to them.
// Each client translates this to and from its provider's wire format; an
// assistant turn keeps the provider's own JSON (`raw`) so it is echoed back
// exactly as received, as the providers require.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::llm {

struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json input_schema;         // a JSON Schema object
};

struct ToolCall {
  std::string id;                      // the provider's call id, answered by ToolResult::call_id
  std::string name;
  nlohmann::json arguments;            // an object; null when the model's text did not parse
  std::string arguments_text;          // as the model wrote them (OpenAI sends a JSON string)
  std::string parse_error;             // why `arguments_text` is not a JSON object; "" when it is
};

struct ToolResult {
  std::string call_id;
  std::string content;
  bool is_error = false;
};

enum class Role { user, assistant };

struct Message {
  Role role = Role::user;
  std::string text;                    // may be empty beside tool calls or results
  std::vector<ToolCall> tool_calls;    // assistant turns
  std::vector<ToolResult> tool_results;  // user turns answering the previous assistant turn
  nlohmann::json raw;                  // assistant turns: the provider's message as received; null otherwise
};

enum class StopReason { tool_use, end_turn, max_tokens, other };

// Tokens one call (or a campaign) used. input_tokens counts every input
// token, cached or not; the cache figures are the parts of it that were
// written to or read from the provider's prompt cache, which are priced
// apart (PriceTable).
struct Usage {
  long input_tokens = 0;
  long output_tokens = 0;
  long cache_write_tokens = 0;
  long cache_read_tokens = 0;
};

struct ChatRequest {
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;
  bool require_tool = true;            // the model must call some tool (OpenAI "required", Anthropic "any")
  int max_output_tokens = 2048;
  double temperature = 0;
};

struct ChatReply {
  Message message;                     // role assistant, `raw` set
  StopReason stop = StopReason::other;
  std::string stop_text;               // the provider's own word for it
  Usage usage;
  std::string request_id;              // from the provider's response headers, for support; "" when absent
};

}  // namespace attune::llm
