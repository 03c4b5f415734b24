// RetryRule: when a provider's answer is worth asking again and how long to
// wait first. Transient: 408, 409, 429 (not a quota or spend cap), 5xx,
// Anthropic's 529, and no answer at all. The server's own hint wins
// (`retry-after-ms`, `retry-after` in seconds or as an HTTP date,
// `x-should-retry`); otherwise exponential backoff with jitter. The Sleeper
// is the clock the waits run on, so tests wait no real time.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "attune/llm/http_transport.h"

namespace attune::llm {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void sleep_ms(long ms) = 0;
};

class RealSleeper : public Sleeper {
 public:
  void sleep_ms(long ms) override;
};

struct RetryRule {
  long base_delay_ms = 500;
  long max_delay_ms = 8'000;           // our own backoff's cap
  long max_server_delay_ms = 120'000;  // a longer server hint means: do not retry
  std::uint64_t jitter_seed = 0;       // 0 = seeded from the clock

  // Whether `status` with these headers (and body, which names quota
  // errors) is worth retrying.
  bool transient(const HttpResponse& response) const;
  // Milliseconds to wait before attempt `attempt` (1 = the first retry);
  // nullopt when the server asked for longer than max_server_delay_ms or said
  // x-should-retry: false.
  std::optional<long> delay_ms(int attempt, const HttpResponse* response, std::mt19937_64& random) const;
};

// Posts `request`, asking again while the answer is transient, up to
// `max_attempts` in all. Returns the last answer, whatever its status (the
// client turns an error status into LlmError with the provider's message);
// throws LlmError(transport) naming `who` ("openai gpt-4o") when no attempt
// got an answer.
HttpResponse post_with_retries(HttpTransport& transport, const HttpRequest& request, const RetryRule& rule,
                               Sleeper& sleeper, int max_attempts, const std::string& who);

}  // namespace attune::llm
