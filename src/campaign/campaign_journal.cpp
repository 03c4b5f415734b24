#include "attune/campaign/campaign_journal.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

namespace attune::campaign {

namespace {

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

CampaignJournal::CampaignJournal(std::string path, bool durable)
    : file_(std::move(path), durable), events_(file_.read()) {}

void CampaignJournal::record(nlohmann::json event) {
  event["at"] = now_iso();
  file_.append(event);
  events_.push_back(std::move(event));
  static const long kill_after = [] {
    const char* v = std::getenv("ATTUNE_TEST_KILL_AFTER_EVENTS");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  static std::atomic<long> recorded{0};  // campaigns of a bench record from several threads
  if (kill_after > 0 && ++recorded == kill_after) std::raise(SIGKILL);
}

const nlohmann::json* CampaignJournal::find(const std::string& event, int trial, int run) const {
  for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
    if (it->value("event", "") != event || it->value("trial", -1) != trial) continue;
    if (run >= 0 && it->value("run", -1) != run) continue;
    return &*it;
  }
  return nullptr;
}

}  // namespace attune::campaign
