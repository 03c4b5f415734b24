// Test doubles shared by the LLM client tests: an Environment read from maps
// (so no real variable or ~/.aws is read), a Sleeper that records the waits
// instead of waiting them, and small builders of requests and scripted
// answers used by more than one test file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/llm/chat.h"
#include "attune/llm/http_transport.h"
#include "attune/llm/llm_client.h"
#include "attune/llm/retry.h"
#include "llm/scripted_server.h"

namespace attune::llm::testing {

using Variables = std::map<std::string, std::string>;
using HomeFiles = std::map<std::string, std::string>;   // path relative to home -> contents

// The environment variables and home files a test gives; anything else is absent.
class MapEnvironment : public Environment {
 public:
  MapEnvironment() = default;
  explicit MapEnvironment(Variables variables_in, HomeFiles home_files_in = {})
      : variables(std::move(variables_in)), home_files(std::move(home_files_in)) {}

  std::optional<std::string> get(const std::string& name) const override {
    const auto it = variables.find(name);
    return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::optional<std::string> read_home_file(const std::string& relative_path) const override {
    const auto it = home_files.find(relative_path);
    return it == home_files.end() ? std::nullopt : std::optional<std::string>(it->second);
  }

  Variables variables;
  HomeFiles home_files;
};

// Records the waits instead of waiting them.
class RecordingSleeper : public Sleeper {
 public:
  void sleep_ms(long ms) override { waits.push_back(ms); }
  std::vector<long> waits;
};

// A 200 answer with `body` and `headers`.
inline ScriptedResponse ok(std::string body, HttpHeaders headers = {}) {
  return {200, std::move(headers), std::move(body)};
}

// A user message of plain text.
inline Message user_text(std::string text) {
  Message message;
  message.text = std::move(text);
  return message;
}

// A user message answering tool calls.
inline Message tool_answers(std::vector<ToolResult> results) {
  Message message;
  message.tool_results = std::move(results);
  return message;
}

}  // namespace attune::llm::testing
