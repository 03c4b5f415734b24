// ScriptedServer: a real HTTP server on 127.0.0.1 (cpp-httplib) that answers
// each POST with the next scripted response, byte for byte as the provider
// would send it, and records every request (path, headers, body) so a test
// can assert on what the client sent. When the script runs out it answers
// 500 with a body saying so, which fails the test that did not expect it.
#pragma once

#include <strings.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

namespace attune::llm::testing {

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type = "application/json";
  int delay_ms = 0;                    // wait before answering (timeouts)
};

struct RecordedRequest {
  std::string method;
  std::string path;                    // as sent, percent-encoding kept
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    return "";
  }
};

class ScriptedServer {
 public:
  explicit ScriptedServer(std::vector<ScriptedResponse> script = {}) : script_(std::move(script)) {
    server_.Post(R"(.*)", [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void push(ScriptedResponse response) {
    std::lock_guard<std::mutex> lock(mutex_);
    script_.push_back(std::move(response));
  }
  std::vector<RecordedRequest> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    ScriptedResponse next;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      RecordedRequest r{req.method, req.target, {}, req.body};
      for (const auto& [k, v] : req.headers) r.headers.emplace_back(k, v);
      requests_.push_back(std::move(r));
      if (served_ < script_.size()) {
        next = script_[served_++];
      } else {
        next = {500, {}, R"({"error":{"message":"scripted server: no response left"}})"};
      }
    }
    if (next.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(next.delay_ms));
    res.status = next.status;
    for (const auto& [k, v] : next.headers) res.set_header(k, v);
    res.set_content(next.body, next.content_type);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::vector<ScriptedResponse> script_;
  std::size_t served_ = 0;
  std::vector<RecordedRequest> requests_;
};

}  // namespace attune::llm::testing
