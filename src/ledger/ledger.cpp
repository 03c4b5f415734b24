#include "attune/ledger/ledger.h"

#include <atomic>
#include <csignal>
#include <cstdlib>

#include "attune/util/utc_time.h"

namespace attune::ledger {

namespace {

void kill_if_testing_after_append() {
  static const long kill_after = [] {
    const char* v = std::getenv("ATTUNE_TEST_KILL_AFTER_EVENTS");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  static std::atomic<long> appended{0};  // campaigns of a bench record from several threads
  if (kill_after > 0 && ++appended == kill_after) std::raise(SIGKILL);
}

}  // namespace

Ledger::Key Ledger::key_of(const nlohmann::json& record) {
  const EventIdentity id = identity_of(record);
  return {static_cast<int>(id.kind), id.trial, id.run};
}

Ledger::Ledger(std::string path, bool durable) : file_(std::move(path), durable), events_(file_.read()) {
  for (std::size_t i = 0; i < events_.size(); ++i) not_recorded_[key_of(events_[i])].push_back(i);
}

const nlohmann::json& Ledger::record(nlohmann::json event) {
  const auto it = not_recorded_.find(key_of(event));
  if (it != not_recorded_.end() && !it->second.empty()) {
    const std::size_t i = it->second.front();
    it->second.pop_front();
    ledger::apply(state_, events_[i]);
    return events_[i];
  }
  event["at"] = utc_now_iso();
  file_.append(event);
  events_.push_back(std::move(event));
  ledger::apply(state_, events_.back());
  kill_if_testing_after_append();
  return events_.back();
}

const nlohmann::json* Ledger::find(EventKind kind, int trial, int run) const {
  for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
    const EventIdentity id = identity_of(*it);
    if (id.kind != kind || id.trial != trial) continue;
    if (run >= 0 && id.run != run) continue;
    return &*it;
  }
  return nullptr;
}

}  // namespace attune::ledger
