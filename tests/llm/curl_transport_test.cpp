#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "attune/llm/http_transport.h"
#include "llm/scripted_server.h"

namespace attune::llm {
namespace {

using testing::ScriptedServer;

// A loopback port that refuses connections: bound, so nobody else takes it
// while the test runs, but never listening.
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      ADD_FAILURE() << "could not bind a loopback socket";
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/messages"; }

 private:
  int fd_;
  int port_ = 0;
};

HttpRequest json_post(const std::string& url, std::string body) {
  return {url, {{"Content-Type", "application/json"}}, std::move(body)};
}

TEST(CurlTransport, SendsBodyAndHeadersAsGiven) {
  ScriptedServer server({{200, {}, "{}"}});
  HttpRequest request{server.url() + "/v1/chat/completions?api-version=1",
                      {{"Content-Type", "application/json"}, {"Authorization", "Bearer sk-test"}},
                      R"({"model":"gpt-4o","messages":[]})"};
  CurlTransport().post(request);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions?api-version=1");
  EXPECT_EQ(requests[0].body, request.body);
  EXPECT_EQ(requests[0].header("Content-Type"), "application/json");  // not libcurl's form encoding
  EXPECT_EQ(requests[0].header("Authorization"), "Bearer sk-test");
  EXPECT_NE(requests[0].header("Accept-Encoding"), "");
}

TEST(CurlTransport, LargeBodyGoesWithoutExpectContinue) {
  ScriptedServer server({{200, {}, "{}"}});
  const std::string body = "\"" + std::string(2 << 20, 'x') + "\"";  // past libcurl's 1 MiB Expect threshold
  const auto start = std::chrono::steady_clock::now();
  CurlTransport().post(json_post(server.url(), body));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].body.size(), body.size());
  EXPECT_EQ(requests[0].header("Expect"), "");
  EXPECT_LT(elapsed, std::chrono::milliseconds(900));  // libcurl's wait for a 100 Continue is one second
}

TEST(CurlTransport, KeepsTheCallersOwnExpectHeader) {
  ScriptedServer server({{200, {}, "{}"}});
  HttpRequest request = json_post(server.url(), "{}");
  request.headers.emplace_back("Expect", "x-attune-test");
  CurlTransport().post(request);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].header("Expect"), "x-attune-test");
}

TEST(CurlTransport, ReturnsStatusHeadersAndBody) {
  ScriptedServer server({{201, {{"x-request-id", "req_123"}, {"Retry-After", "3"}}, R"({"id":"chatcmpl-1"})"}});
  const HttpResponse response = CurlTransport().post(json_post(server.url(), "{}"));
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.body, R"({"id":"chatcmpl-1"})");
  EXPECT_EQ(response.header("X-Request-ID"), "req_123");  // trimmed, looked up without case
  EXPECT_EQ(response.header("retry-after"), "3");
  EXPECT_EQ(response.header("content-type"), "application/json");
  EXPECT_EQ(response.header("x-absent"), "");
}

TEST(CurlTransport, ReturnsAnErrorStatusWithItsBody) {
  const std::string error = R"({"error":{"message":"The server had an error","type":"server_error"}})";
  ScriptedServer server({{500, {}, error}});
  const HttpResponse response = CurlTransport().post(json_post(server.url(), "{}"));
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body, error);
}

TEST(CurlTransport, RefusedConnectionThrowsWithoutTheRequestsSecrets) {
  RefusingPort port;
  HttpRequest request = json_post(port.url(), R"({"secret-body":1})");
  request.headers.emplace_back("x-api-key", "sk-ant-secret");
  try {
    CurlTransport().post(request);
    FAIL() << "expected TransportError";
  } catch (const TransportError& e) {
    const std::string message = e.what();
    EXPECT_FALSE(e.timed_out());
    EXPECT_NE(message.find("127.0.0.1"), std::string::npos) << message;
    EXPECT_NE(message.find(curl_easy_strerror(CURLE_COULDNT_CONNECT)), std::string::npos) << message;
    EXPECT_EQ(message.find("secret"), std::string::npos) << message;
    EXPECT_EQ(message.find("/v1/messages"), std::string::npos) << message;
  }
}

TEST(CurlTransport, TotalTimeoutThrowsTimedOut) {
  ScriptedServer server({{200, {}, "{}", "application/json", /*delay_ms=*/250}});
  HttpRequest request = json_post(server.url(), "{}");
  request.total_timeout_ms = 50;
  try {
    CurlTransport().post(request);
    FAIL() << "expected TransportError";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.timed_out()) << e.what();
  }
}

TEST(CurlTransport, HeaderLookupIgnoresCaseAndTakesTheFirst) {
  HttpResponse response{200, {{"Request-Id", "first"}, {"request-id", "second"}}, ""};
  EXPECT_EQ(response.header("REQUEST-ID"), "first");
  EXPECT_EQ(response.header("request-i"), "");
  EXPECT_EQ(response.header(""), "");
}

}  // namespace
}  // namespace attune::llm
