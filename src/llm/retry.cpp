#include "attune/llm/retry.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string_view>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "attune/llm/llm_client.h"

namespace attune::llm {

namespace {

using nlohmann::json;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool mentions(std::string_view text, std::initializer_list<std::string_view> words) {
  const std::string haystack = lower(text);
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return haystack.find(w) != std::string::npos; });
}

// The server's own verdict (OpenAI, Anthropic) overrides ours.
std::optional<bool> server_says_retry(const HttpResponse& response) {
  const std::string value = lower(response.header("x-should-retry"));
  if (value == "true") return true;
  if (value == "false") return false;
  return std::nullopt;
}

bool transient_status(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

// The string at `path` through nested objects; "" when a step is missing or
// the value is not a string (vLLM sends `code` as a number).
std::string text_at(const json& body, std::initializer_list<const char*> path) {
  const json* at = &body;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    const auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : "";
}

// OpenAI's billing quota shares 429 with its rate limits.
bool openai_quota(const json& body) {
  return text_at(body, {"error", "code"}) == "insufficient_quota" || text_at(body, {"error", "type"}) == "insufficient_quota";
}

// Anthropic's spend cap lasts until the next month or a tier change. Its 429
// names it in error.details; without that, the message says so and, unlike
// a rate limit, there is no retry-after. Only Anthropic-shaped bodies
// (`"type":"error"`) are read this way: OpenAI's rate-limit messages link to
// the billing page.
bool anthropic_spend_cap(const json& body, const HttpResponse& response) {
  if (text_at(body, {"type"}) != "error") return false;
  if (text_at(body, {"error", "details", "error_code"}) == "enforced_spend_limit_reached") return true;
  if (text_at(body, {"error", "type"}) == "billing_error") return true;
  return response.header("retry-after").empty() &&
         mentions(text_at(body, {"error", "message"}), {"spend", "credit", "billing", "usage limit"});
}

// AWS names an error "Name:uri" in the header or "namespace#Name" in the body.
std::string aws_error_name(const std::string& code) {
  const std::string name = code.substr(0, code.find(':'));
  const auto hash = name.find('#');
  return hash == std::string::npos ? name : name.substr(hash + 1);
}

// Bedrock names the error in x-amzn-ErrorType, else the body's `code` or
// `__type`; with no name at all only the message is left to go on.
bool bedrock_service_quota(const json& body, const HttpResponse& response) {
  std::string name = response.header("x-amzn-ErrorType");
  for (const char* key : {"code", "__type"})
    if (name.empty()) name = text_at(body, {key});
  if (!name.empty()) return aws_error_name(name) == "ServiceQuotaExceededException";
  return mentions(text_at(body, {"message"}) + text_at(body, {"Message"}), {"service quota"});
}

// A limit that waiting does not lift, on a status that otherwise would be.
bool quota_exhausted(const HttpResponse& response) {
  const json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);  // discarded when not JSON
  return openai_quota(body) || anthropic_spend_cap(body, response) || bedrock_service_quota(body, response);
}

// The whole of `text` as a finite number.
std::optional<double> number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// IMF-fixdate (RFC 7231 section 7.1.1.1): "Sun, 06 Nov 1994 08:49:37 GMT".
std::optional<std::chrono::sys_seconds> http_date(const std::string& text) {
  static constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char weekday[4] = "", month[4] = "";
  int d = 0, y = 0, hh = 0, mm = 0, ss = 0, used = 0;
  if (std::sscanf(text.c_str(), "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", weekday, &d, month, &y, &hh, &mm, &ss,
                  &used) != 7 ||
      used != static_cast<int>(text.size()))
    return std::nullopt;
  const auto m = std::find(months.begin(), months.end(), month);
  if (m == months.end() || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(y), std::chrono::month(static_cast<unsigned>(m - months.begin() + 1)),
                                         std::chrono::day(static_cast<unsigned>(d))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + std::chrono::hours(hh) + std::chrono::minutes(mm) + std::chrono::seconds(ss);
}

// How long the server asked us to wait, in milliseconds (maybe <= 0).
std::optional<double> server_delay_ms(const HttpResponse& response) {
  if (const auto ms = number(response.header("retry-after-ms"))) return *ms;
  const std::string after = response.header("retry-after");
  if (const auto seconds = number(after)) return *seconds * 1000;
  if (const auto when = http_date(after))
    return std::chrono::duration<double, std::milli>(*when - std::chrono::system_clock::now()).count();
  return std::nullopt;
}

// min(base * 2^(attempt-1), max), less up to a quarter at random so that
// clients turned away together do not come back together.
long backoff_ms(const RetryRule& rule, int attempt, std::mt19937_64& random) {
  const int doublings = std::clamp(attempt, 1, 62) - 1;
  const double ceiling = std::min(std::ldexp(static_cast<double>(rule.base_delay_ms), doublings), static_cast<double>(rule.max_delay_ms));
  const double jitter = std::uniform_real_distribution<double>(0.0, 1.0)(random);
  return std::lround(ceiling * (1.0 - 0.25 * jitter));
}

std::uint64_t seed_of(const RetryRule& rule) {
  if (rule.jitter_seed != 0) return rule.jitter_seed;
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

// One attempt: the answer, or why there was none.
struct Outcome {
  std::optional<HttpResponse> answer;
  std::string failure;
};

Outcome post_once(HttpTransport& transport, const HttpRequest& request) {
  try {
    return {transport.post(request), ""};
  } catch (const TransportError& e) {
    return {std::nullopt, e.what()};
  }
}

std::string attempts_text(int n) { return std::to_string(n) + (n == 1 ? " attempt" : " attempts"); }

}  // namespace

void RealSleeper::sleep_ms(long ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

bool RetryRule::transient(const HttpResponse& response) const {
  if (response.status < 400) return false;  // an answer, not an error
  if (const auto says = server_says_retry(response)) return *says;
  if (!transient_status(response.status)) return false;
  return response.status != 429 || !quota_exhausted(response);
}

std::optional<long> RetryRule::delay_ms(int attempt, const HttpResponse* response, std::mt19937_64& random) const {
  if (response != nullptr) {
    const auto says = server_says_retry(*response);
    if (says && !*says) return std::nullopt;
    const auto hint = server_delay_ms(*response);
    if (hint && *hint > max_server_delay_ms) return std::nullopt;
    if (hint && *hint > 0) return static_cast<long>(std::ceil(*hint));
  }
  return backoff_ms(*this, attempt, random);
}

HttpResponse post_with_retries(HttpTransport& transport, const HttpRequest& request, const RetryRule& rule,
                               Sleeper& sleeper, int max_attempts, const std::string& who) {
  std::mt19937_64 random(seed_of(rule));
  const int attempts = std::max(max_attempts, 1);
  std::optional<HttpResponse> answer;  // the latest answer any attempt got
  std::string failure;                 // why the latest attempt without one got none
  for (int attempt = 1;; ++attempt) {
    Outcome outcome = post_once(transport, request);
    if (outcome.answer && !rule.transient(*outcome.answer)) return std::move(*outcome.answer);
    const std::optional<long> wait =
        attempt < attempts ? rule.delay_ms(attempt, outcome.answer ? &*outcome.answer : nullptr, random) : std::nullopt;
    if (outcome.answer) answer = std::move(outcome.answer);
    else failure = std::move(outcome.failure);
    if (!wait) break;
    sleeper.sleep_ms(*wait);
  }
  // Only an answer ends the loop early, so without one every attempt failed.
  if (answer) return std::move(*answer);
  throw LlmError(LlmErrorKind::transport, who + ": no answer after " + attempts_text(attempts) + ": " + failure);
}

}  // namespace attune::llm
