// HttpTransport: one HTTP POST and the answer to it, as the LLM clients need
// it. CurlTransport is the real one (libcurl: connect and total timeouts, TLS
// verification on, proxy from the environment); tests swap in nothing else,
// they point CurlTransport at a local server. A transport reports what the
// server said, whatever the status; only a request that got no answer at all
// (refused, timed out, TLS failure) throws TransportError.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attune::llm {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string url;
  HttpHeaders headers;                 // sent as given, in order
  std::string body;
  long connect_timeout_ms = 10'000;
  long total_timeout_ms = 600'000;     // model calls can take minutes
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;                 // names as the server sent them
  std::string body;

  // The first header named `name`, compared without case; "" when absent.
  std::string header(std::string_view name) const;
};

class TransportError : public std::runtime_error {
 public:
  TransportError(std::string message, bool timed_out)
      : std::runtime_error(std::move(message)), timed_out_(timed_out) {}
  bool timed_out() const { return timed_out_; }

 private:
  bool timed_out_;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpResponse post(const HttpRequest& request) = 0;
};

class CurlTransport : public HttpTransport {
 public:
  HttpResponse post(const HttpRequest& request) override;
};

}  // namespace attune::llm
