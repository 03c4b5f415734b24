#include "attune/llm/retry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "attune/llm/llm_client.h"
#include "llm/scripted_server.h"
#include "llm/test_doubles.h"

namespace attune::llm {
namespace {

using testing::RecordingSleeper;
using testing::ScriptedResponse;
using testing::ScriptedServer;

// The real transport, except that the calls `drop` picks (1 = the first)
// get no answer.
class DroppingTransport : public HttpTransport {
 public:
  explicit DroppingTransport(std::function<bool(int call)> drop) : drop_(std::move(drop)) {}
  HttpResponse post(const HttpRequest& request) override {
    if (drop_(++calls)) throw TransportError("POST to 127.0.0.1 failed: Timeout was reached", true);
    return CurlTransport().post(request);
  }
  int calls = 0;

 private:
  std::function<bool(int)> drop_;
};

HttpResponse answer(int status, HttpHeaders headers = {}, std::string body = "{}") {
  return {status, std::move(headers), std::move(body)};
}

std::optional<long> delay_for(const HttpResponse& response, int attempt = 1) {
  std::mt19937_64 random(7);
  return RetryRule{}.delay_ms(attempt, &response, random);
}

// An IMF-fixdate `seconds` from now.
std::string http_date_in(int seconds) {
  const std::time_t when = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()) + seconds;
  std::tm utc{};
  gmtime_r(&when, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

const char* const kRateLimited = R"({"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}})";
const char* const kOpenAiQuota =
    R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})";
const char* const kOverloaded = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

struct Posting {
  ScriptedServer server;
  RecordingSleeper sleeper;
  RetryRule rule{.jitter_seed = 42};

  explicit Posting(std::vector<ScriptedResponse> script) : server(std::move(script)) {}
  HttpResponse post(int max_attempts = 4) {
    CurlTransport transport;
    return post_with_retries(transport, {server.url() + "/v1/chat/completions", {}, "{}"}, rule, sleeper, max_attempts,
                             "openai gpt-4o");
  }
};

TEST(RetryRule, TransientStatuses) {
  for (int status : {408, 409, 429, 500, 502, 503, 504, 529}) EXPECT_TRUE(RetryRule{}.transient(answer(status))) << status;
  for (int status : {200, 201, 400, 401, 402, 403, 404, 413, 422, 424}) EXPECT_FALSE(RetryRule{}.transient(answer(status))) << status;
}

TEST(RetryRule, ServerVerdictWins) {
  EXPECT_FALSE(RetryRule{}.transient(answer(503, {{"X-Should-Retry", "false"}})));
  EXPECT_TRUE(RetryRule{}.transient(answer(400, {{"x-should-retry", "true"}})));
  EXPECT_TRUE(RetryRule{}.transient(answer(429, {{"x-should-retry", "true"}}, kOpenAiQuota)));
  EXPECT_FALSE(RetryRule{}.transient(answer(200, {{"x-should-retry", "true"}})));  // a success is never asked again
}

TEST(RetryRule, OpenAiQuotaIsNotTransientButItsRateLimitIs) {
  EXPECT_FALSE(RetryRule{}.transient(answer(429, {}, kOpenAiQuota)));
  EXPECT_FALSE(RetryRule{}.transient(answer(429, {}, R"({"error":{"message":"x","code":"insufficient_quota"}})")));
  EXPECT_TRUE(RetryRule{}.transient(answer(429, {}, kRateLimited)));
  // Rate-limit messages may link to the billing page; that is no quota.
  EXPECT_TRUE(RetryRule{}.transient(answer(
      429, {}, R"({"error":{"message":"Rate limit reached. Add a payment method at https://platform.openai.com/account/billing","code":"rate_limit_exceeded"}})")));
  EXPECT_TRUE(RetryRule{}.transient(answer(429, {}, "not json")));
}

TEST(RetryRule, AnthropicSpendCapIsNotTransientButItsRateLimitIs) {
  EXPECT_FALSE(RetryRule{}.transient(answer(
      429, {},
      R"({"type":"error","error":{"type":"rate_limit_error","message":"limit reached","details":{"error_code":"enforced_spend_limit_reached"}}})")));
  const std::string cap = R"({"type":"error","error":{"type":"rate_limit_error","message":"You have reached your monthly spend limit."}})";
  EXPECT_FALSE(RetryRule{}.transient(answer(429, {}, cap)));
  EXPECT_TRUE(RetryRule{}.transient(answer(429, {{"retry-after", "20"}}, cap)));  // a rate limit says when to come back
  EXPECT_TRUE(RetryRule{}.transient(answer(
      429, {{"retry-after", "20"}},
      R"({"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization"}})")));
  EXPECT_TRUE(RetryRule{}.transient(answer(529, {}, kOverloaded)));
}

TEST(RetryRule, BedrockServiceQuotaIsNotTransientButThrottlingIs) {
  EXPECT_FALSE(RetryRule{}.transient(
      answer(429, {{"x-amzn-ErrorType", "ServiceQuotaExceededException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
             R"({"message":"Limit exceeded."})")));
  EXPECT_FALSE(RetryRule{}.transient(
      answer(429, {}, R"({"__type":"com.amazon.bedrock#ServiceQuotaExceededException","message":"quota"})")));
  EXPECT_FALSE(RetryRule{}.transient(answer(429, {}, R"({"message":"Your request exceeds the service quota for your account."})")));
  EXPECT_TRUE(RetryRule{}.transient(
      answer(429, {{"x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
             R"({"message":"Too many requests, please wait before trying again."})")));
  EXPECT_TRUE(RetryRule{}.transient(answer(429, {{"x-amzn-ErrorType", "ModelNotReadyException"}}, R"({"message":"not ready"})")));
}

TEST(RetryRule, ServerDelayInMillisecondsComesFirst) {
  EXPECT_EQ(delay_for(answer(429, {{"retry-after-ms", "150"}, {"retry-after", "9"}})), 150);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after-ms", "12.2"}})), 13);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after-ms", "soon"}, {"retry-after", "2"}})), 2000);
}

TEST(RetryRule, ServerDelayInSecondsMayBeFractional) {
  EXPECT_EQ(delay_for(answer(429, {{"Retry-After", "3"}})), 3000);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after", "1.5"}})), 1500);
}

TEST(RetryRule, ServerDelayAsHttpDateCountsFromNow) {
  const auto delay = delay_for(answer(503, {{"retry-after", http_date_in(30)}}));
  ASSERT_TRUE(delay.has_value());
  EXPECT_GT(*delay, 28'000);
  EXPECT_LE(*delay, 30'000);
  EXPECT_EQ(delay_for(answer(503, {{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}})), delay_for(answer(503)));  // past: our own
  EXPECT_EQ(delay_for(answer(503, {{"retry-after", "Sun, 32 Nov 2094 08:49:37 GMT"}})), delay_for(answer(503)));
  EXPECT_EQ(delay_for(answer(503, {{"retry-after", "Sun, 06 Nov 2094 08:49:37 UTC"}})), delay_for(answer(503)));
}

TEST(RetryRule, NoUsableServerDelayMeansOurBackoff) {
  const auto ours = delay_for(answer(503));
  ASSERT_TRUE(ours.has_value());
  EXPECT_GE(*ours, 375);
  EXPECT_LE(*ours, 500);
  for (const char* value : {"0", "-5", "soon", "inf", "nan", ""}) EXPECT_EQ(delay_for(answer(503, {{"retry-after", value}})), ours) << value;
}

TEST(RetryRule, ServerDelayBeyondTheCapMeansNoRetry) {
  EXPECT_EQ(delay_for(answer(429, {{"retry-after", "121"}})), std::nullopt);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after-ms", "1e300"}})), std::nullopt);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after", http_date_in(3600)}})), std::nullopt);
  EXPECT_EQ(delay_for(answer(429, {{"retry-after", "120"}})), 120'000);  // the cap itself is allowed
  EXPECT_EQ(delay_for(answer(503, {{"x-should-retry", "false"}})), std::nullopt);
}

TEST(RetryRule, BackoffDoublesUpToTheCapWithinJitterBounds) {
  const RetryRule rule;
  std::mt19937_64 random(42), again(42);
  bool jittered = false;
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const double ceiling = std::min(500.0 * std::pow(2.0, attempt - 1), 8000.0);
    const auto delay = rule.delay_ms(attempt, nullptr, random);
    ASSERT_TRUE(delay.has_value());
    EXPECT_GE(*delay, 0.75 * ceiling) << attempt;
    EXPECT_LE(*delay, ceiling) << attempt;
    EXPECT_EQ(rule.delay_ms(attempt, nullptr, again), delay) << "same seed, same waits";
    jittered |= *delay < ceiling;
  }
  EXPECT_TRUE(jittered);
}

TEST(PostWithRetries, RetriesARateLimitThenReturnsTheAnswer) {
  Posting posting({{429, {{"retry-after", "2"}}, kRateLimited}, {200, {}, R"({"id":"ok"})"}});
  const HttpResponse response = posting.post();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, R"({"id":"ok"})");
  EXPECT_EQ(posting.server.requests().size(), 2u);
  EXPECT_EQ(posting.sleeper.waits, std::vector<long>{2000});
}

TEST(PostWithRetries, HonoursRetryAfterMs) {
  Posting posting({{429, {{"retry-after-ms", "150"}, {"retry-after", "9"}}, kRateLimited}, {200, {}, "{}"}});
  EXPECT_EQ(posting.post().status, 200);
  EXPECT_EQ(posting.sleeper.waits, std::vector<long>{150});
}

TEST(PostWithRetries, RetriesAnthropicOverload) {
  Posting posting({{529, {}, kOverloaded}, {200, {}, "{}"}});
  EXPECT_EQ(posting.post().status, 200);
  EXPECT_EQ(posting.server.requests().size(), 2u);
  ASSERT_EQ(posting.sleeper.waits.size(), 1u);
  EXPECT_GE(posting.sleeper.waits[0], 375);
  EXPECT_LE(posting.sleeper.waits[0], 500);
  std::mt19937_64 seeded(42);
  EXPECT_EQ(posting.sleeper.waits[0], RetryRule{}.delay_ms(1, nullptr, seeded)) << "the rule's seed fixes the jitter";
}

TEST(PostWithRetries, DoesNotRetryClientErrors) {
  Posting posting({});
  for (int status : {400, 401, 403, 404}) {
    posting.server.push({status, {}, R"({"error":{"message":"no"}})"});
    EXPECT_EQ(posting.post().status, status);
  }
  EXPECT_EQ(posting.server.requests().size(), 4u);
  EXPECT_TRUE(posting.sleeper.waits.empty());
}

TEST(PostWithRetries, DoesNotRetryInsufficientQuota) {
  Posting posting({{429, {}, kOpenAiQuota}});
  const HttpResponse response = posting.post();
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(response.body, kOpenAiQuota);
  EXPECT_EQ(posting.server.requests().size(), 1u);
}

TEST(PostWithRetries, DoesNotRetryWhenTheServerSaysNot) {
  Posting posting({{503, {{"x-should-retry", "false"}}, "{}"}});
  EXPECT_EQ(posting.post().status, 503);
  EXPECT_EQ(posting.server.requests().size(), 1u);
}

TEST(PostWithRetries, DoesNotRetryWhenTheServerAsksForTooLong) {
  Posting posting({{429, {{"retry-after", "3600"}}, kRateLimited}});
  EXPECT_EQ(posting.post().status, 429);
  EXPECT_EQ(posting.server.requests().size(), 1u);
  EXPECT_TRUE(posting.sleeper.waits.empty());
}

TEST(PostWithRetries, ReturnsTheLastAnswerWhenAttemptsRunOut) {
  Posting posting({{503, {}, "first"}, {502, {}, "second"}, {500, {}, "third"}});
  const HttpResponse response = posting.post(3);
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, "third");
  EXPECT_EQ(posting.server.requests().size(), 3u);
  ASSERT_EQ(posting.sleeper.waits.size(), 2u);
  EXPECT_GT(posting.sleeper.waits[1], posting.sleeper.waits[0]);  // [750, 1000] after [375, 500]
}

TEST(PostWithRetries, RetriesAfterNoAnswer) {
  ScriptedServer server({{200, {}, R"({"id":"ok"})"}});
  DroppingTransport transport([](int call) { return call == 1; });
  RecordingSleeper sleeper;
  const HttpResponse response = post_with_retries(transport, {server.url(), {}, "{}"}, RetryRule{.jitter_seed = 1}, sleeper, 4, "anthropic claude");
  EXPECT_EQ(response.body, R"({"id":"ok"})");
  EXPECT_EQ(transport.calls, 2);
  EXPECT_EQ(sleeper.waits.size(), 1u);
}

TEST(PostWithRetries, NoAnswerAtAllThrowsTransportError) {
  DroppingTransport transport([](int) { return true; });
  RecordingSleeper sleeper;
  try {
    post_with_retries(transport, {"http://127.0.0.1:9/", {}, "{}"}, RetryRule{.jitter_seed = 1}, sleeper, 3, "bedrock claude");
    FAIL() << "expected LlmError";
  } catch (const LlmError& e) {
    EXPECT_EQ(e.kind(), LlmErrorKind::transport);
    EXPECT_EQ(e.status(), 0);
    EXPECT_EQ(std::string(e.what()), "bedrock claude: no answer after 3 attempts: POST to 127.0.0.1 failed: Timeout was reached");
  }
  EXPECT_EQ(transport.calls, 3);
  EXPECT_EQ(sleeper.waits.size(), 2u);
}

TEST(PostWithRetries, AnAnswerBeatsALaterSilence) {
  ScriptedServer server({{503, {}, "busy"}});
  DroppingTransport transport([](int call) { return call > 1; });
  RecordingSleeper sleeper;
  const HttpResponse response = post_with_retries(transport, {server.url(), {}, "{}"}, RetryRule{.jitter_seed = 1}, sleeper, 2, "openai gpt-4o");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.body, "busy");
  EXPECT_EQ(transport.calls, 2);
}

}  // namespace
}  // namespace attune::llm
