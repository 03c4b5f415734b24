#include "attune/llm/wire_util.h"

#include <utility>

#include "attune/util/text.h"

namespace attune::llm::wire {

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string url_host(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  const auto at = url.rfind('@');  // user:password@host
  if (at != std::string_view::npos) url.remove_prefix(at + 1);
  return to_lower(url.substr(0, url.find(':')));
}

std::optional<std::string> nonempty(const Environment& environment, const std::string& name) {
  auto value = environment.get(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json none;
  if (!object.is_object()) return none;
  const auto it = object.find(key);
  return it != object.end() ? *it : none;
}

std::string string_at(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = member(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

long integer_at(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = member(object, key);
  return value.is_number_integer() ? value.get<long>() : 0;
}

std::string excerpt(std::string_view body, std::size_t max_chars) {
  if (body.empty()) return "(empty body)";
  std::string out;
  for (const char c : body.substr(0, max_chars)) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  if (body.size() <= max_chars) return out;
  // Cut on a character boundary: drop the last UTF-8 sequence, which may be incomplete.
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
  return out + "...";
}

ProviderError parse_provider_error(std::string_view body) {
  ProviderError out;
  const auto json = nlohmann::json::parse(body, nullptr, false);
  if (!json.is_object()) return out;
  const auto nested = json.find("error");
  if (nested != json.end() && nested->is_string()) {
    out.message = nested->get<std::string>();
    return out;
  }
  // The nested form's fields are under "error"; the flat form's at the top.
  out.error = nested != json.end() && nested->is_object() ? *nested : json;
  out.message = string_at(out.error, "message");
  out.type = string_at(out.error, "type");
  out.code = string_at(out.error, "code");
  return out;
}

LlmErrorKind kind_for(const HttpResponse& response, const RetryRule& rule) {
  const int status = response.status;
  if (status == 401 || status == 403) return LlmErrorKind::auth;
  if (status == 402) return LlmErrorKind::quota;
  if (status == 429) return rule.transient(response) ? LlmErrorKind::rate_limited : LlmErrorKind::quota;
  // 408 and 409 are transient like 5xx: the server's trouble, left after the retries.
  if (status == 408 || status == 409) return LlmErrorKind::server;
  if (status >= 400 && status < 500) return LlmErrorKind::bad_request;
  return LlmErrorKind::server;
}

void ErrorScope::fail(LlmErrorKind kind, const std::string& text, int status) const {
  throw LlmError(kind, redact(who_ + ": " + text), status);
}

void ErrorScope::fail_http(LlmErrorKind kind, const HttpResponse& response, const std::string& word,
                           const std::string& message) const {
  std::string text = "HTTP " + std::to_string(response.status);
  if (!word.empty()) text += " " + word;
  text += ": " + (message.empty() ? excerpt_of(response) : message);
  fail(kind, text, response.status);
}

void ErrorScope::fail_format(const HttpResponse& response, const std::string& expected) const {
  fail(LlmErrorKind::server,
       "HTTP " + std::to_string(response.status) + " answer is not " + expected + ": " + excerpt_of(response),
       response.status);
}

// Blanked before it is cut: a cut could leave part of the secret that no
// longer matches it whole.
std::string ErrorScope::excerpt_of(const HttpResponse& response) const { return excerpt(redact(response.body)); }

std::string ErrorScope::redact(std::string text) const {
  if (secret_.empty()) return text;
  static const std::string blank = "[redacted]";
  for (auto at = text.find(secret_); at != std::string::npos; at = text.find(secret_, at + blank.size()))
    text.replace(at, secret_.size(), blank);
  return text;
}

JsonEndpoint::JsonEndpoint(const LlmSettings& settings, std::string url, ErrorScope scope, ErrorWord word,
                           HttpTransport& transport, Sleeper& sleeper)
    : url_(std::move(url)),
      connect_timeout_ms_(settings.connect_timeout_ms),
      total_timeout_ms_(settings.total_timeout_ms),
      max_attempts_(settings.max_attempts),
      scope_(std::move(scope)),
      word_(word),
      transport_(transport),
      sleeper_(sleeper) {}

JsonReply JsonEndpoint::post(HttpHeaders headers, const nlohmann::json& body) const {
  HttpRequest request{url_, std::move(headers), "", connect_timeout_ms_, total_timeout_ms_};
  request.headers.emplace_back("Content-Type", "application/json");
  // Prompts quote logs and recipes, which may hold bytes that are not UTF-8:
  // replace them rather than throw halfway through a campaign.
  request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  const RetryRule rule;
  HttpResponse response = post_with_retries(transport_, request, rule, sleeper_, max_attempts_, scope_.who());
  if (response.status < 200 || response.status >= 300) {
    const ProviderError error = parse_provider_error(response.body);
    scope_.fail_http(kind_for(response, rule), response, word_(error), error.message);
  }
  auto reply = nlohmann::json::parse(response.body, nullptr, false);
  if (!reply.is_object()) scope_.fail_format(response, "a JSON object");
  return {std::move(reply), std::move(response)};
}

}  // namespace attune::llm::wire
