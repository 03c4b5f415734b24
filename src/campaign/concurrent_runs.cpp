#include "attune/campaign/concurrent_runs.h"

#include <algorithm>
#include <mutex>
#include <thread>

namespace attune::campaign {

namespace {

std::string joined_labels(const std::vector<ConcurrentRun>& runs) {
  std::string out;
  for (const ConcurrentRun& r : runs) out += (out.empty() ? "" : "; ") + r.label;
  return out;
}

}  // namespace

void run_concurrently(cluster::Cluster& cluster, const cluster::ClusterDefinition& definition,
                      std::vector<ConcurrentRun>& runs, const ConcurrentRunHooks& hooks) {
  Clock& clock = hooks.clock ? *hooks.clock : steady_clock();
  std::mutex mutex;  // the caller's hooks, and the elapsed times they report
  std::vector<double> elapsed(runs.size(), 0);
  const std::string doing = joined_labels(runs);
  auto run_one = [&](std::size_t i) {
    ConcurrentRun& r = runs[i];
    DirectoryRunHooks h;
    h.interrupted = [&] {
      std::lock_guard lock(mutex);
      return hooks.interrupted && hooks.interrupted();
    };
    h.on_progress = [&, i](const cluster::WatchProgress& p, const cluster::RunSpec&) {
      std::lock_guard lock(mutex);
      elapsed[i] = p.elapsed_s;
      if (hooks.on_progress) hooks.on_progress(doing, *std::max_element(elapsed.begin(), elapsed.end()));
    };
    h.on_note = [&](const std::string& s) {
      std::lock_guard lock(mutex);
      if (hooks.on_note) hooks.on_note(s);
    };
    h.clock = &clock;
    const double started = clock.now_s();
    try {
      r.result = run_in_directory(cluster, definition, *r.approved, r.request, h);
    } catch (...) {
      r.error = std::current_exception();
    }
    r.seconds = clock.now_s() - started;
  };
  if (hooks.on_progress) hooks.on_progress(doing, 0);
  if (runs.size() == 1) {
    run_one(0);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) threads.emplace_back(run_one, i);
  for (std::thread& t : threads) t.join();
}

}  // namespace attune::campaign
