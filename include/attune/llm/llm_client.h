// LlmClient: one provider's chat endpoint with tool use, behind one
// interface. The backends (openai/, anthropic/, bedrock/) are found through
// make_llm_client, the one registry, by the provider half of `--llm
// PROVIDER:MODEL`. A client retries what the provider says is transient
// (RetryRule) and throws LlmError for everything else, naming the provider,
// the model and the provider's own message — never a key, token or signature.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attune/llm/chat.h"
#include "attune/llm/http_transport.h"
#include "attune/llm/retry.h"

namespace attune::llm {

// Where a client reads its settings from: the environment and the user's
// files, swapped in tests so no real variable or ~/.aws is read.
class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::optional<std::string> get(const std::string& name) const = 0;
  virtual std::optional<std::string> read_home_file(const std::string& relative_path) const = 0;
};

class ProcessEnvironment : public Environment {
 public:
  std::optional<std::string> get(const std::string& name) const override;
  std::optional<std::string> read_home_file(const std::string& relative_path) const override;
};

enum class LlmErrorKind {
  transport,      // no answer after the retries
  rate_limited,   // transient limits still hit after the retries
  quota,          // spend cap or billing quota: waiting does not help
  auth,           // 401 / 403
  bad_request,    // 400 / 404 / 413 / 422: our request or the model id
  server,         // 5xx after the retries, or an answer that is not the provider's format
  config,         // no key, no region, a malformed --llm
};

class LlmError : public std::runtime_error {
 public:
  LlmError(LlmErrorKind kind, std::string message, int status = 0)
      : std::runtime_error(std::move(message)), kind_(kind), status_(status) {}
  LlmErrorKind kind() const { return kind_; }
  int status() const { return status_; }   // HTTP status; 0 when there was none

 private:
  LlmErrorKind kind_;
  int status_;
};

struct LlmSettings {
  std::string provider;                // openai | anthropic | bedrock
  std::string model;
  std::string base_url;                // "" = the provider's default (or OPENAI_BASE_URL)
  long connect_timeout_ms = 10'000;
  long total_timeout_ms = 600'000;
  int max_attempts = 4;                // first try plus retries
};

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual std::string provider() const = 0;
  virtual std::string model() const = 0;
  // One model turn. Throws LlmError.
  virtual ChatReply chat(const ChatRequest& request) = 0;
};

// "openai:gpt-4o" -> provider and model; LlmError(config) naming the flag
// and the known providers when it is not PROVIDER:MODEL with a known provider.
LlmSettings parse_llm_flag(const std::string& value, const std::string& flag = "--llm");
const std::vector<std::string>& llm_provider_names();

// The client registered for settings.provider. The transport, environment and
// sleeper outlive the client. Throws LlmError(config) for a missing key or region.
std::unique_ptr<LlmClient> make_llm_client(const LlmSettings& settings, HttpTransport& transport,
                                           const Environment& environment, Sleeper& sleeper);

}  // namespace attune::llm
