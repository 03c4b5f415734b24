#include "attune/campaign/trial_runs.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "attune/campaign/run_names.h"
#include "attune/cluster/backend_registry.h"
#include "attune/util/error.h"

namespace attune::campaign {

namespace fs = std::filesystem;

namespace {

constexpr double kCostMargin = 1.05;  // a run's expected cost is this much over the average so far

}  // namespace

double TrialRuns::expected_cost(int steps_factor) const {
  const ledger::LedgerState& s = parts_.journal->state();
  return s.finished_runs ? kCostMargin * steps_factor * s.gpu_hours_per_steps_factor / s.finished_runs : 0;
}

std::optional<PlannedRun> TrialRuns::plan(Trial& t, const std::string& purpose, int steps_factor, double in_flight) {
  ledger::Ledger& journal = *parts_.journal;
  Budget& budget = *parts_.budget;
  PlannedRun p;
  p.trial = t.n;
  p.run = t.runs + 1;
  p.purpose = purpose;
  p.steps_factor = steps_factor;
  if (const nlohmann::json* done = journal.find(ledger::EventKind::RunFinished, t.n, p.run)) {
    p.recalled = measure_from_json(ledger::run_finished(*done).measurement, journal.path());
    p.recalled_record = *done;
    return p;
  }
  if (interrupted()) return std::nullopt;
  const bool launching = journal.find(ledger::EventKind::RunLaunching, t.n, p.run) != nullptr;
  p.cost = expected_cost(steps_factor);
  if (!launching) {
    // Keep one run's worth for verifying a winner; runs in flight hold their worst case.
    const double reserve = parts_.incumbent_n() != 0 && purpose != "verify" ? expected_cost(1) : 0;
    if (p.cost > 0 && p.cost + reserve + in_flight > budget.left()) return std::nullopt;
    if (budget.left() - in_flight <= 0) return std::nullopt;
  }
  const TuneRequest& q = parts_.q;
  DirectoryRunRequest& r = p.job.request;
  r.run_dir = (fs::path(t.dir) / fmt::format("run-{}", p.run)).string();
  r.run_name = fmt::format("attune-{}-{:08x}-t{}r{}", job_safe(recipe_stem(q.file), 40),
                           static_cast<unsigned>(parts_.seed & 0xffffffffu), t.n, p.run);
  r.recipe_file = q.file;
  const int base_steps = std::max(0, parts_.target->recipe.measure().steps);
  r.steps = steps_factor > 1 ? steps_factor * (base_steps > 0 ? base_steps : 50) : base_steps;
  r.budget_gpu_hours = budget.left() - in_flight;
  r.truth_file = parts_.target->truth_file;
  r.seed = cluster::launch_seed(parts_.seed, t.n * 1000L + p.run);
  r.hang_factor = q.hang_factor;
  r.startup_allowance_s = q.startup_allowance_s;
  r.durable = q.durable;
  journal.record(ledger::RunLaunching{t.n, p.run, purpose, r.run_dir, steps_factor});
  p.job.approved = &*t.approved;
  p.job.label = t.n == 0 ? fmt::format("baseline run {}", p.run) : fmt::format("trial {} ({}) {}", t.n, t.proposal.label(), purpose);
  return p;
}

void TrialRuns::execute(std::vector<PlannedRun>& runs) {
  std::vector<ConcurrentRun> jobs;
  for (const PlannedRun& p : runs) {
    if (!p.recalled) jobs.push_back(p.job);
  }
  if (jobs.empty()) return;
  ConcurrentRunHooks hooks;
  hooks.interrupted = [this] { return interrupted(); };
  hooks.on_progress = hooks_.on_progress;
  hooks.on_note = hooks_.on_note;
  hooks.clock = parts_.clock;
  const double started = parts_.clock->now_s();
  run_concurrently(*parts_.cluster, parts_.def, jobs, hooks);
  run_seconds_ += parts_.clock->now_s() - started;
  std::size_t k = 0;
  for (PlannedRun& p : runs) {
    if (!p.recalled) p.job = std::move(jobs[k++]);
  }
}

void TrialRuns::count(const RunMeasure& m) {
  parts_.budget->charge(m.gpu_hours);
  ++launches_;
  if (!m.ok) ++failed_launches_;
}

std::optional<RunMeasure> TrialRuns::finish(Trial& t, PlannedRun& p) {
  if (p.recalled) {
    parts_.journal->record(p.recalled_record);
    count(*p.recalled);
    absorb(t, *p.recalled);
    return p.recalled;
  }
  if (p.job.error) {
    try {
      std::rethrow_exception(p.job.error);
    } catch (const cluster::ClusterError& e) {
      throw InputError({}, "--cluster", fmt::format("run {} of trial {}: {}; run attune tune --resume {} to carry on", p.run,
                                                    t.n, e.what(), parts_.dir));
    }
  }
  const DirectoryRunResult& done = p.job.result;
  RunMeasure m = measure_of(done, rule_);
  if (done.diagnosis) {
    parts_.write_file((fs::path(p.job.request.run_dir) / "diagnosis.json").string(),
                      diagnose::to_json(*done.diagnosis).dump(2) + "\n");
    t.last_diagnosis = done.diagnosis;
  }
  if (m.interrupted) {
    parts_.budget->charge(m.gpu_hours);
    stopped_ = true;
    return std::nullopt;  // not journalled as finished: a resume measures it again
  }
  parts_.journal->record(ledger::RunFinished{t.n, p.run, p.purpose, p.steps_factor, cluster::run_status_json(done.status),
                                             m.gpu_hours, to_json(m)});
  parts_.log->info("trial {} run {} ({}): {} {:.1f} tokens/s/GPU, {:.3f} GPU-hours {}", t.n, p.run, p.purpose, m.state,
                   m.tokens, m.gpu_hours, m.failure);
  count(m);
  absorb(t, m);
  return m;
}

std::optional<RunMeasure> TrialRuns::measure(Trial& t, const std::string& purpose, int steps_factor) {
  std::optional<PlannedRun> p = plan(t, purpose, steps_factor, 0);
  if (!p) return std::nullopt;
  std::vector<PlannedRun> one;
  one.push_back(std::move(*p));
  execute(one);
  return finish(t, one.front());
}

}  // namespace attune::campaign
