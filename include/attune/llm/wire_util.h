// What the provider clients share on the wire: where a request goes, how it
// is sent (with the retries), and how an error answer becomes an LlmError.
// Each provider's own fields (quota codes, body shapes) stay in its folder;
// this is the part that is the same for all of them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "attune/llm/llm_client.h"
#include "attune/llm/retry.h"

namespace attune::llm::wire {

// The URL without trailing '/', so "{base}/path" has exactly one.
std::string without_trailing_slash(std::string url);

// The host of an http(s) URL, lower case: "https://API.openai.com:443/v1" -> "api.openai.com".
std::string url_host(std::string_view url);

// A variable's value; nullopt when unset or empty (an empty key is no key).
std::optional<std::string> nonempty(const Environment& environment, const std::string& name);

// `object[key]`; null when `object` is not an object or lacks the key (an
// answer's shape is the provider's, so nothing here throws on it).
const nlohmann::json& member(const nlohmann::json& object, const char* key);
// `object[key]` when it is a string, else "".
std::string string_at(const nlohmann::json& object, const char* key);
// `object[key]` when it is an integer, else 0.
long integer_at(const nlohmann::json& object, const char* key);

// The body cut to `max_chars` on one line, for a message about an answer
// that is not what the provider sends.
std::string excerpt(std::string_view body, std::size_t max_chars = 160);

// An error body as the providers send it: nested `{"error":{"message",
// "type","code",...}}` (OpenAI, Anthropic, newer vLLM), flat `{"object":
// "error","message",...}` (older vLLM, FastChat) or `{"error":"text"}`.
// `code` is the provider's string code; an integer code (vLLM repeats the
// status) is left out. `error` is the object the fields came from, for a
// provider's own extras; null when the body had none.
struct ProviderError {
  std::string message;
  std::string type;
  std::string code;
  nlohmann::json error;
};
ProviderError parse_provider_error(std::string_view body);

// The kind an error answer means: 401/403 auth, 402 quota, 429 rate_limited,
// 5xx server (Anthropic's 529 among them), other 4xx bad_request; but a 429
// that `rule` holds lasting (OpenAI's insufficient_quota, Anthropic's spend
// cap) is quota, so the clients and the retries agree on what waiting cures.
LlmErrorKind kind_for(const HttpResponse& response, const RetryRule& rule);

// One client's identity in its messages ("openai gpt-4o") and the secret
// none of them may carry: a provider may echo a key back in its message.
class ErrorScope {
 public:
  ErrorScope(std::string who, std::string secret) : who_(std::move(who)), secret_(std::move(secret)) {}
  const std::string& who() const { return who_; }

  // LlmError "WHO: TEXT" with the secret blanked out.
  [[noreturn]] void fail(LlmErrorKind kind, const std::string& text, int status = 0) const;
  // LlmError "WHO: HTTP 429 WORD: MESSAGE", WORD being the provider's code
  // or type (left out when it gave neither), MESSAGE its message or an
  // excerpt of the body.
  [[noreturn]] void fail_http(LlmErrorKind kind, const HttpResponse& response, const std::string& word,
                              const std::string& message) const;
  // LlmError(server) "WHO: HTTP 200 answer is not EXPECTED: <excerpt>", for
  // a success status whose body is not the provider's (a proxy's page, say).
  [[noreturn]] void fail_format(const HttpResponse& response, const std::string& expected) const;

 private:
  std::string excerpt_of(const HttpResponse& response) const;
  std::string redact(std::string text) const;

  std::string who_;
  std::string secret_;
};

// The word a provider names an error by in messages ("insufficient_quota",
// "overloaded_error"); "" when it gave none.
using ErrorWord = std::string (*)(const ProviderError& error);

// A 2xx answer: its body as a JSON object, and the answer itself (headers,
// and the text for an excerpt when the object is not the provider's shape).
struct JsonReply {
  nlohmann::json body;
  HttpResponse response;
};

// One provider endpoint taking JSON: where it is, the settings' timeouts and
// attempts, and how its errors read. The transport and sleeper outlive it.
class JsonEndpoint {
 public:
  JsonEndpoint(const LlmSettings& settings, std::string url, ErrorScope scope, ErrorWord word,
               HttpTransport& transport, Sleeper& sleeper);
  const ErrorScope& scope() const { return scope_; }

  // Posts `body` with `headers` (then Content-Type), asking again while the
  // answer is transient. An error status throws LlmError of kind_for's kind
  // with the provider's word and message; a 2xx body that is not a JSON
  // object throws LlmError(server) with an excerpt.
  JsonReply post(HttpHeaders headers, const nlohmann::json& body) const;

 private:
  std::string url_;
  long connect_timeout_ms_;
  long total_timeout_ms_;
  int max_attempts_;
  ErrorScope scope_;
  ErrorWord word_;
  HttpTransport& transport_;
  Sleeper& sleeper_;
};

}  // namespace attune::llm::wire
