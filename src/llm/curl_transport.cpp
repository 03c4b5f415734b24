#include "attune/llm/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <memory>
#include <mutex>
#include <new>

namespace attune::llm {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

const std::string* find_header(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [key, value] : headers)
    if (same_name(key, name)) return &value;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

struct EasyCleanup {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyCleanup>;

struct SlistFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using HeaderList = std::unique_ptr<curl_slist, SlistFree>;

struct CurlUrlCleanup {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};

// curl_global_init is not thread-safe and must run before any handle exists.
void init_curl_once() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (result != CURLE_OK) throw TransportError(std::string("libcurl init failed: ") + curl_easy_strerror(result), false);
}

// "host" or "host:port" for error messages: never the user info, path or
// query, which may carry credentials or a model id the caller did not ask
// to show.
std::string host_of(const std::string& url) {
  std::unique_ptr<CURLU, CurlUrlCleanup> parts(curl_url());
  if (!parts || curl_url_set(parts.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "(malformed URL)";
  std::string out;
  for (CURLUPart part : {CURLUPART_HOST, CURLUPART_PORT}) {
    char* text = nullptr;
    if (curl_url_get(parts.get(), part, &text, 0) != CURLUE_OK) continue;
    out += (out.empty() ? "" : ":") + std::string(text);
    curl_free(text);
  }
  return out;
}

void append(HeaderList& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (grown == nullptr) throw std::bad_alloc();
  (void)list.release();  // `grown` is the same list, extended (or a new one when it was empty)
  list.reset(grown);
}

HeaderList header_list(const HttpHeaders& headers) {
  HeaderList list;
  // libcurl reads "Name:" as "remove this header"; "Name;" is how it sends
  // a header whose value is empty.
  for (const auto& [name, value] : headers) append(list, value.empty() ? name + ";" : name + ": " + value);
  // Without this libcurl sends `Expect: 100-continue` with large POST bodies
  // and waits up to a second for a go-ahead that most API servers never send.
  if (find_header(headers, "Expect") == nullptr) append(list, "Expect:");
  return list;
}

// What the callbacks collect.
struct Collected {
  HttpResponse response;
  std::exception_ptr failure;
};

void add_header_line(HttpHeaders& headers, std::string_view line) {
  // A status line starts a new response (after a 100 Continue, or a proxy's
  // CONNECT answer): only the final response's headers count.
  if (line.starts_with("HTTP/")) {
    headers.clear();
    return;
  }
  if (trim(line).empty()) return;
  if ((line.front() == ' ' || line.front() == '\t') && !headers.empty()) {  // obsolete line folding
    headers.back().second += " " + std::string(trim(line));
    return;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return;
  headers.emplace_back(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
}

// Runs `step` for a callback. An exception must not cross libcurl's C
// frames, so it is kept for after the transfer and the transfer stopped.
template <typename Step>
size_t collect(void* user, size_t bytes, Step step) {
  auto* collected = static_cast<Collected*>(user);
  try {
    step(*collected);
  } catch (...) {
    collected->failure = std::current_exception();
    return 0;
  }
  return bytes;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  return collect(user, size * count, [&](Collected& c) { add_header_line(c.response.headers, {data, size * count}); });
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  return collect(user, size * count, [&](Collected& c) { c.response.body.append(data, size * count); });
}

template <typename Value>
void set(CURL* handle, CURLoption option, Value value) {
  const CURLcode code = curl_easy_setopt(handle, option, value);
  if (code != CURLE_OK) throw TransportError(std::string("libcurl option rejected: ") + curl_easy_strerror(code), false);
}

void set_request(CURL* handle, const HttpRequest& request, curl_slist* headers) {
  set(handle, CURLOPT_URL, request.url.c_str());
  set(handle, CURLOPT_POSTFIELDS, request.body.data());
  set(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  set(handle, CURLOPT_HTTPHEADER, headers);
  set(handle, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
  set(handle, CURLOPT_TIMEOUT_MS, request.total_timeout_ms);
  set(handle, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe with threads
  set(handle, CURLOPT_SSL_VERIFYPEER, 1L);
  set(handle, CURLOPT_SSL_VERIFYHOST, 2L);
  set(handle, CURLOPT_ACCEPT_ENCODING, "");  // every encoding this libcurl decodes
}

void set_collection(CURL* handle, Collected& collected, char* detail) {
  set(handle, CURLOPT_FAILONERROR, 0L);  // an error status still has the provider's message in its body
  set(handle, CURLOPT_HEADERFUNCTION, on_header);
  set(handle, CURLOPT_HEADERDATA, static_cast<void*>(&collected));
  set(handle, CURLOPT_WRITEFUNCTION, on_body);
  set(handle, CURLOPT_WRITEDATA, static_cast<void*>(&collected));
  set(handle, CURLOPT_ERRORBUFFER, detail);
}

[[noreturn]] void throw_no_answer(CURLcode code, const char* detail, const std::string& url) {
  std::string message = "POST to " + host_of(url) + " failed: " + curl_easy_strerror(code);
  if (*detail != '\0') message += std::string(" (") + std::string(trim(detail)) + ")";
  throw TransportError(std::move(message), code == CURLE_OPERATION_TIMEDOUT);
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  const std::string* value = find_header(headers, name);
  return value == nullptr ? "" : *value;
}

HttpResponse CurlTransport::post(const HttpRequest& request) {
  init_curl_once();
  EasyHandle handle(curl_easy_init());
  if (!handle) throw TransportError("libcurl could not create a handle", false);
  const HeaderList headers = header_list(request.headers);
  Collected collected;
  char detail[CURL_ERROR_SIZE] = "";  // libcurl's own account of the failure (host, port, elapsed ms)
  set_request(handle.get(), request, headers.get());
  set_collection(handle.get(), collected, detail);
  const CURLcode code = curl_easy_perform(handle.get());
  if (collected.failure) std::rethrow_exception(collected.failure);
  if (code != CURLE_OK) throw_no_answer(code, detail, request.url);
  long status = 0;
  curl_easy_getinfo(handle.get(), CURLINFO_RESPONSE_CODE, &status);
  collected.response.status = static_cast<int>(status);
  return std::move(collected.response);
}

}  // namespace attune::llm
