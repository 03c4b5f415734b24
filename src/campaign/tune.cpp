#include "attune/campaign/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <memory>
#include <random>
#include <set>

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/budget.h"
#include "attune/campaign/concurrent_runs.h"
#include "attune/campaign/directory_run.h"
#include "attune/campaign/loss_check.h"
#include "attune/campaign/run_measure.h"
#include "attune/campaign/run_names.h"
#include "attune/campaign/sim_target.h"
#include "attune/campaign/tune_inputs.h"
#include "attune/cluster/backend_registry.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/recipe/run_hardware.h"
#include "attune/cluster/serialized_cluster.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/diagnose/recipe_context.h"
#include "attune/ledger/ledger.h"
#include "attune/policy/admission.h"
#include "attune/policy/candidates.h"
#include "attune/policy/lessons.h"
#include "attune/policy/policy.h"
#include "attune/report/write_reports.h"
#include "attune/sim/recipe_levers.h"
#include "attune/sim/scenario_report.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/file_lock.h"
#include "attune/util/json_input.h"
#include "attune/util/unified_diff.h"
#include "attune/util/statistics.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;
using policy::Observation;
using policy::TrialOutcome;

constexpr int kBaselineRuns = 2;
constexpr int kSettledRuns = 8;         // most runs of the incumbent, or of a rejection measured again, before an end
constexpr int kMaxIdleProposals = 40;   // proposals in a row that launch nothing before giving up
constexpr double kCostMargin = 1.05;    // a run's expected cost is this much over the average so far

using json_field::optional_json;
using json_field::optional_number;

struct Trial {
  int n = 0;
  int parent = 0;
  policy::Proposal proposal;
  std::optional<gate::ApprovedRecipe> approved;
  std::string dir;
  Arm arm;
  std::vector<LossCurve> losses;
  std::vector<double> step_times;
  std::optional<double> peak_reserved_gib;
  std::optional<diagnose::Diagnosis> last_diagnosis;
  std::vector<std::string> described;   // the file changes of its proposal
  Observation obs;
  int runs = 0;
};

// A run the campaign is about to make, or one the journal recalls.
struct PlannedRun {
  int trial = 0, run = 0;
  std::string purpose;
  int steps_factor = 1;
  double cost = 0;                     // its expected cost, held against the budget while in flight
  std::optional<RunMeasure> recalled;  // it finished before: its measurement from the journal
  nlohmann::json recalled_record;      // and the journal's record of it
  ConcurrentRun job;                   // otherwise: what to run, and how it ended
};

// The campaign's state while its loop runs.
class Campaign {
 public:
  Campaign(const TuneRequest& q, const TuneHooks& hooks) : q_(q), hooks_(hooks) {}
  TuneResult run();

 private:
  void open_directory();
  void load_inputs();
  void discard_new_directory();
  void write_reports();
  void note(const std::string& text);
  void write_file(const std::string& path, const std::string& text) const { write_file_atomic(path, text, q_.durable); }
  bool interrupted() const { return stopped_ || (hooks_.interrupted && hooks_.interrupted()); }
  void progress(const std::string& doing, double elapsed_s = 0);
  double expected_run_cost(int steps_factor) const;
  std::optional<PlannedRun> plan_run(Trial& t, const std::string& purpose, int steps_factor, double in_flight);
  void execute(std::vector<PlannedRun>& runs);
  std::optional<RunMeasure> finish_run(PlannedRun& p);
  std::optional<RunMeasure> measure(Trial& t, const std::string& purpose, int steps_factor);
  void absorb(Trial& t, const RunMeasure& m);
  bool baseline();
  std::optional<Trial> propose_trial(int n);
  std::vector<std::string> trial_logs(int trial) const;
  nlohmann::json trial_profile(int trial) const;
  void pass_on_policy_notes(int trial);
  bool round(int first, int count);
  void judge_candidate(Trial& c);
  bool remeasure_incumbent();
  bool rescreen();
  bool settle_incumbent();
  bool verify();
  void search();
  void finish();
  void record_trial(const Trial& t);
  double noise_cv() const;
  double min_gain_now() const;
  // Who the incumbent is: what the journal's records say (ledger_state.h).
  int incumbent_n() const { return journal_->state().incumbent; }
  Trial& incumbent() { return trials_.at(static_cast<std::size_t>(incumbent_n())); }
  const Trial& incumbent() const { return trials_.at(static_cast<std::size_t>(incumbent_n())); }
  std::vector<Observation> observations() const;

  TuneRequest q_;
  const TuneHooks& hooks_;
  TuneResult result_;
  std::optional<FileLock> lock_;
  bool made_directory_ = false;  // this tune created the campaign directory (not --resume, not an existing --out)
  std::unique_ptr<ledger::Ledger> journal_;
  std::shared_ptr<spdlog::logger> log_;
  std::optional<LaunchTarget> target_;
  cluster::ClusterDefinition def_;
  std::unique_ptr<cluster::Cluster> cluster_;
  std::unique_ptr<gate::CorrectnessGate> gate_;
  std::unique_ptr<policy::Policy> policy_;
  std::vector<policy::Lesson> lessons_;
  std::unique_ptr<Budget> budget_;
  AcceptanceRule rule_;
  std::uint64_t seed_ = 1;
  std::vector<Trial> trials_;   // index = trial number
  int since_best_ = 0;
  bool stopped_ = false;
  bool policy_done_ = false;    // the policy's last answer was that nothing is worth trying
  double attune_seconds_ = 0;
  std::chrono::steady_clock::time_point work_start_;
  double run_seconds_ = 0;      // wall time spent inside runs (not attune's own work)
};

void Campaign::note(const std::string& text) {
  if (log_) log_->info(text);
  if (hooks_.on_note) hooks_.on_note(text);
}

void Campaign::progress(const std::string& doing, double elapsed_s) {
  if (!hooks_.on_progress) return;
  TuneProgress p;
  p.trial = static_cast<int>(trials_.size()) - 1;
  p.doing = doing;
  p.run_elapsed_s = elapsed_s;
  p.best_tokens_per_s_per_gpu = incumbent_n() < static_cast<int>(trials_.size()) && !incumbent().arm.run_means.empty()
                                    ? median(incumbent().arm.run_means)
                                    : 0;
  const double base = trials_.empty() || trials_[0].arm.run_means.empty() ? 0 : median(trials_[0].arm.run_means);
  p.gain = base > 0 ? p.best_tokens_per_s_per_gpu / base - 1 : 0;
  p.spent_gpu_hours = budget_ ? budget_->spent() : 0;
  p.budget_gpu_hours = budget_ ? budget_->total() : 0;
  hooks_.on_progress(p);
}

void Campaign::open_directory() {
  const bool resume = !q_.resume_dir.empty();
  result_.dir = resume ? q_.resume_dir : (q_.out_dir.empty() ? stamped_dir("campaigns", q_.file) : q_.out_dir);
  const fs::path dir(result_.dir);
  if (resume && !fs::exists(dir / "journal.jsonl"))
    throw InputError({result_.dir, 0, 0}, "--resume", "no campaign here (no journal.jsonl)");
  if (!resume && fs::exists(dir / "journal.jsonl"))
    throw InputError({result_.dir, 0, 0}, "--out",
                     "this directory holds a campaign already; carry it on with --resume " + result_.dir +
                         " or choose another --out");
  made_directory_ = !resume && !fs::exists(dir);
  fs::create_directories(dir);
  long holder = 0;
  lock_ = FileLock::try_lock((dir / ".lock").string(), &holder);
  if (!lock_)
    throw InputError({result_.dir, 0, 0}, resume ? "--resume" : "--out",
                     fmt::format("another attune tune (pid {}) is working in this directory", holder));
  journal_ = std::make_unique<ledger::Ledger>((dir / "journal.jsonl").string(), q_.durable);
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>((dir / "campaign.log").string());
  log_ = std::make_shared<spdlog::logger>("campaign", sink);
  log_->set_pattern("%Y-%m-%dT%H:%M:%S.%e %v");
  log_->flush_on(spdlog::level::info);
}

void Campaign::load_inputs() {
  const auto& events = journal_->events();
  if (!events.empty()) {
    // A resumed campaign runs with the inputs it started with.
    if (ledger::kind_of(events.front()) != ledger::EventKind::Campaign)
      throw InputError({journal_->path(), 1, 0}, "event", "the journal does not start with the campaign's inputs");
    const std::string resume = q_.resume_dir;
    try {
      read_tune_inputs(events.front().at("inputs"), q_);
    } catch (const nlohmann::json::exception& e) {
      throw InputError({journal_->path(), 1, 0}, "inputs", std::string("not a campaign's inputs: ") + e.what());
    }
    q_.resume_dir = resume;
  }
  if (q_.parallel < 1) throw InputError({}, "--parallel", fmt::format("expected 1 or more candidates in flight, got {}", q_.parallel));
  target_ = load_launch_target(q_.file, q_.options);
  if (!q_.budget_gpu_hours) {
    if (!target_->scenario || target_->scenario->harness.empty())
      throw InputError({}, "--budget", "say how many GPU-hours the campaign may spend (e.g. --budget 200gpuh)");
    q_.budget_gpu_hours = sim::read_harness(target_->scenario->harness).budget_gpu_hours;
  }
  if (!q_.seed) q_.seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  seed_ = *q_.seed;
  budget_ = std::make_unique<Budget>(*q_.budget_gpu_hours);
  const bool default_location = q_.clusters_file.empty();
  const auto defs = cluster::load_cluster_definitions(
      default_location ? cluster::default_clusters_path() : q_.clusters_file, default_location);
  def_ = cluster::find_cluster(defs, q_.cluster);
  cluster_ = std::make_unique<cluster::SerializedCluster>(cluster::make_cluster(def_, {target_->truth_file, seed_}));
  gate_ = std::make_unique<gate::CorrectnessGate>(q_.gate);
  if (q_.policy_settings.llm && !policy::policy_asks_llm(q_.policy))
    throw InputError({}, "--llm", "the model is only asked with --policy llm or --policy hybrid");
  policy_ = policy::make_policy(q_.policy, q_.policy_settings);
  if (q_.use_lessons) lessons_ = policy::read_lessons(q_.lessons_file.empty() ? policy::default_lessons_path() : q_.lessons_file);
  if (events.empty()) {
    journal_->record(ledger::CampaignStarted{tune_inputs_json(q_, seed_, *q_.budget_gpu_hours)});
    write_file((fs::path(result_.dir) / "campaign.json").string(),
                      tune_inputs_json(q_, seed_, *q_.budget_gpu_hours).dump(2) + "\n");
  }
  result_.policy = q_.policy;
  result_.cluster = def_.name;
  result_.budget_gpu_hours = budget_->total();
  note(fmt::format("campaign {} on cluster '{}' with policy {}, budget {:.1f} GPU-hours, seed {}", result_.dir, def_.name,
                   q_.policy, budget_->total(), seed_));
}

// From the runs recorded so far (a resume recalls the same ones in the same
// order, so it plans as the campaign did).
double Campaign::expected_run_cost(int steps_factor) const {
  const ledger::LedgerState& s = journal_->state();
  return s.finished_runs ? kCostMargin * steps_factor * s.gpu_hours_per_steps_factor / s.finished_runs : 0;
}

std::optional<PlannedRun> Campaign::plan_run(Trial& t, const std::string& purpose, int steps_factor, double in_flight) {
  PlannedRun p;
  p.trial = t.n;
  p.run = t.runs + 1;
  p.purpose = purpose;
  p.steps_factor = steps_factor;
  if (const nlohmann::json* done = journal_->find(ledger::EventKind::RunFinished, t.n, p.run)) {
    p.recalled = measure_from_json(done->at("measurement"), journal_->path());
    p.recalled_record = *done;
    return p;
  }
  if (interrupted()) return std::nullopt;
  const bool launching = journal_->find(ledger::EventKind::RunLaunching, t.n, p.run) != nullptr;
  p.cost = expected_run_cost(steps_factor);
  if (!launching) {
    // Keep one run's worth for verifying a winner; runs in flight hold their worst case.
    const double reserve = incumbent_n() != 0 && purpose != "verify" ? expected_run_cost(1) : 0;
    if (p.cost > 0 && p.cost + reserve + in_flight > budget_->left()) return std::nullopt;
    if (budget_->left() - in_flight <= 0) return std::nullopt;
  }
  DirectoryRunRequest& r = p.job.request;
  r.run_dir = (fs::path(t.dir) / fmt::format("run-{}", p.run)).string();
  r.run_name = fmt::format("attune-{}-{:08x}-t{}r{}", job_safe(recipe_stem(q_.file), 40), static_cast<unsigned>(seed_ & 0xffffffffu), t.n, p.run);
  r.recipe_file = q_.file;
  const int base_steps = target_->recipe.measure().steps > 0 ? target_->recipe.measure().steps : 0;
  r.steps = steps_factor > 1 ? steps_factor * (base_steps > 0 ? base_steps : 50) : base_steps;
  r.budget_gpu_hours = budget_->left() - in_flight;
  r.truth_file = target_->truth_file;
  r.seed = cluster::launch_seed(seed_, t.n * 1000L + p.run);
  r.hang_factor = q_.hang_factor;
  r.startup_allowance_s = q_.startup_allowance_s;
  r.durable = q_.durable;
  journal_->record(ledger::RunLaunching{t.n, p.run, purpose, r.run_dir, steps_factor});
  p.job.approved = &*t.approved;
  p.job.label = t.n == 0 ? fmt::format("baseline run {}", p.run) : fmt::format("trial {} ({}) {}", t.n, t.proposal.label(), purpose);
  return p;
}

void Campaign::execute(std::vector<PlannedRun>& runs) {
  std::vector<ConcurrentRun> jobs;
  for (const PlannedRun& p : runs) {
    if (!p.recalled) jobs.push_back(p.job);
  }
  if (jobs.empty()) return;
  ConcurrentRunHooks hooks;
  hooks.interrupted = [this] { return interrupted(); };
  hooks.on_progress = [this](const std::string& doing, double elapsed_s) { progress(doing, elapsed_s); };
  hooks.on_note = [this](const std::string& s) { note(s); };
  const auto started = std::chrono::steady_clock::now();
  run_concurrently(*cluster_, def_, jobs, hooks);
  run_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::size_t k = 0;
  for (PlannedRun& p : runs) {
    if (!p.recalled) p.job = std::move(jobs[k++]);
  }
}

std::optional<RunMeasure> Campaign::finish_run(PlannedRun& p) {
  Trial& t = trials_.at(static_cast<std::size_t>(p.trial));
  if (p.recalled) {
    journal_->record(p.recalled_record);
    budget_->charge(p.recalled->gpu_hours);
    ++result_.launches;
    if (!p.recalled->ok) ++result_.failed_launches;
    absorb(t, *p.recalled);
    return p.recalled;
  }
  if (p.job.error) {
    try {
      std::rethrow_exception(p.job.error);
    } catch (const cluster::ClusterError& e) {
      throw InputError({}, "--cluster", fmt::format("run {} of trial {}: {}; run attune tune --resume {} to carry on", p.run,
                                                    t.n, e.what(), result_.dir));
    }
  }
  const DirectoryRunResult& done = p.job.result;
  RunMeasure m = measure_of(done, rule_);
  if (done.diagnosis) {
    write_file((fs::path(p.job.request.run_dir) / "diagnosis.json").string(), diagnose::to_json(*done.diagnosis).dump(2) + "\n");
    t.last_diagnosis = done.diagnosis;
  }
  if (m.interrupted) {
    budget_->charge(m.gpu_hours);
    stopped_ = true;
    return std::nullopt;  // not journalled as finished: a resume measures it again
  }
  journal_->record(ledger::RunFinished{t.n, p.run, p.purpose, p.steps_factor, cluster::run_status_json(done.status),
                                        m.gpu_hours, to_json(m)});
  log_->info("trial {} run {} ({}): {} {:.1f} tokens/s/GPU, {:.3f} GPU-hours {}", t.n, p.run, p.purpose, m.state, m.tokens,
             m.gpu_hours, m.failure);
  budget_->charge(m.gpu_hours);
  ++result_.launches;
  if (!m.ok) ++result_.failed_launches;
  absorb(t, m);
  return m;
}

// The 95% interval of the mean throughput over every block of a trial's runs.
static void set_interval(const std::vector<double>& blocks, Observation& o) {
  if (blocks.size() < 2) return;
  const double n = static_cast<double>(blocks.size());
  double mean = 0, var = 0;
  for (double b : blocks) mean += b / n;
  for (double b : blocks) var += (b - mean) * (b - mean) / (n - 1);
  const double half = 1.96 * std::sqrt(var / n);
  o.tokens_ci95_low = mean - half;
  o.tokens_ci95_high = mean + half;
}

std::optional<RunMeasure> Campaign::measure(Trial& t, const std::string& purpose, int steps_factor) {
  std::optional<PlannedRun> p = plan_run(t, purpose, steps_factor, 0);
  if (!p) return std::nullopt;
  std::vector<PlannedRun> one;
  one.push_back(std::move(*p));
  execute(one);
  return finish_run(one.front());
}

void Campaign::absorb(Trial& t, const RunMeasure& m) {
  ++t.runs;
  ++t.obs.runs;
  t.obs.gpu_hours += m.gpu_hours;
  if (!m.ok) {
    t.obs.failure = m.failure;
    t.obs.reason = m.evidence;
    return;
  }
  t.arm.run_means.push_back(m.tokens);
  t.arm.blocks.insert(t.arm.blocks.end(), m.blocks.begin(), m.blocks.end());
  t.losses.push_back(m.loss);
  if (m.step_time_s > 0) t.step_times.push_back(m.step_time_s);
  if (m.peak_reserved_gib) t.peak_reserved_gib = std::max(t.peak_reserved_gib.value_or(0), *m.peak_reserved_gib);
  t.obs.tokens_per_s_per_gpu = median(t.arm.run_means);
  set_interval(t.arm.blocks, t.obs);
  if (!t.step_times.empty()) t.obs.step_time_s = median(t.step_times);
  t.obs.peak_memory_gib = t.peak_reserved_gib;
  if (!m.loss.empty() && !t.last_diagnosis) {
    // Recalled from the journal: what the policy reads of the incumbent's last run.
    diagnose::Diagnosis d;
    d.peak_reserved_gib = m.peak_reserved_gib;
    d.headroom_gib = m.headroom_gib;
    t.last_diagnosis = d;
  }
}

std::vector<Observation> Campaign::observations() const {
  std::vector<Observation> out;
  for (const Trial& t : trials_) out.push_back(t.obs);
  return out;
}

double Campaign::noise_cv() const {
  std::vector<const Arm*> arms;
  for (const Trial& t : trials_) arms.push_back(&t.arm);
  return run_to_run_cv(arms);
}

double Campaign::min_gain_now() const { return min_gain(rule_, noise_cv(), 2, incumbent().arm.run_means.size()); }

void Campaign::record_trial(const Trial& t) {
  journal_->record(ledger::TrialDecided{t.n, policy::to_string(t.obs.outcome), t.obs.reason, t.obs.failure, t.obs.runs,
                                         t.obs.tokens_per_s_per_gpu, t.obs.gpu_hours});
  TrialRecord rec;
  rec.trial = t.n;
  rec.parent = t.parent;
  rec.label = t.n == 0 ? "baseline" : t.proposal.label();
  rec.rule = t.proposal.rule;
  rec.stage = t.proposal.stage;
  rec.why = t.proposal.why;
  rec.outcome = policy::to_string(t.obs.outcome);
  rec.reason = t.obs.reason;
  rec.tokens_per_s_per_gpu = t.obs.tokens_per_s_per_gpu;
  rec.predicted_gain = t.proposal.predicted_gain;
  rec.gpu_hours = t.obs.gpu_hours;
  rec.runs = t.obs.runs;
  result_.history.push_back(rec);
  log_->info("trial {} {}: {} {}", t.n, rec.label, rec.outcome, rec.reason);
  if (hooks_.on_trial) hooks_.on_trial(rec);
}

bool Campaign::baseline() {
  Trial t;
  t.n = 0;
  t.dir = (fs::path(result_.dir) / "trials" / "0000-baseline").string();
  try {
    // As it runs on its hardware: a count the file states otherwise is set to the run's.
    t.approved = gate_->approve(target_->recipe, recipe::with_run_hardware(target_->recipe));
  } catch (const gate::GateRefusal& e) {
    throw InputError({q_.file, 0, 0}, "RECIPE", std::string("the correctness gate refuses it: ") + e.what());
  }
  t.obs.trial = 0;
  t.obs.outcome = TrialOutcome::Baseline;
  t.obs.recipe_identity = recipe::settings_identity(t.approved->recipe());
  try {
    t.obs.workload = sim::workload_from_recipe(target_->recipe);
  } catch (const InputError&) {
  }
  trials_.push_back(std::move(t));
  for (int k = 0; k < kBaselineRuns; ++k) {
    const auto m = measure(trials_[0], "baseline", 1);
    if (!m) return false;
    if (!m->ok) break;  // a failing baseline: the policy fixes it first
  }
  if (trials_[0].arm.run_means.empty()) note("the baseline failed: " + trials_[0].obs.failure + " " + trials_[0].obs.reason);
  record_trial(trials_[0]);
  return true;
}

// Re-measures the incumbent (a close call), and takes it back when the
// measurements no longer say it beats the trial it replaced. False when no
// run could be made.
bool Campaign::remeasure_incumbent() {
  Trial& inc = incumbent();
  const auto m = measure(inc, "remeasure", 1);
  if (!m) return false;
  if (incumbent_n() == 0 || !m->ok) return true;
  Trial& parent = trials_.at(static_cast<std::size_t>(inc.parent));
  // Kept while it is still a close call or better: what takes it back is
  // evidence that it is not faster (a gain below half the threshold), not a
  // failure to prove again by a margin what it already proved once.
  const AcceptanceVerdict v = judge(inc.arm, parent.arm, noise_cv(), 0, rule_);
  if (v.decision != Decision::Reject) return true;
  journal_->record(ledger::Demoted{inc.n, parent.n, to_json(v)});
  note(fmt::format("trial {} re-measured: {}; back to trial {}", inc.n, v.why, parent.n));
  inc.obs.outcome = TrialOutcome::Demoted;
  inc.obs.reason = v.why;
  for (TrialRecord& r : result_.history) {
    if (r.trial == inc.n) r.outcome = "demoted", r.reason = v.why;
  }
  return true;  // the demotion's record took the incumbent back
}

// When the policy has nothing left: the candidate of the incumbent it was
// proposed from whose one screening run came closest to the noise threshold
// without reaching half of it (a gain above zero, where one noisy run may
// well have hidden a real one) is measured again and judged on two runs.
// Rejections at screening are provisional when the budget would otherwise
// go unused. True when one was measured again.
bool Campaign::rescreen() {
  Trial* pick = nullptr;
  double best = 0;
  const double inc = median(incumbent().arm.run_means);
  for (Trial& t : trials_) {
    if (t.n == 0 || t.obs.outcome != TrialOutcome::Rejected || t.runs >= kSettledRuns || t.parent != incumbent_n() ||
        t.arm.run_means.empty())
      continue;
    const double gain = inc > 0 ? median(t.arm.run_means) / inc - 1 : 0;
    if (gain > best) pick = &t, best = gain;
  }
  if (!pick) return false;
  const std::string stop_reason = result_.stop_reason;
  const auto m = measure(*pick, "rescreen", 1);
  if (!m) {
    result_.stop_reason = stopped_ ? "interrupted" : stop_reason;
    return false;
  }
  if (!m->ok) pick->obs.outcome = TrialOutcome::Failed;
  else judge_candidate(*pick);
  journal_->record(ledger::Rescreened{pick->n, policy::to_string(pick->obs.outcome), pick->obs.reason});
  for (TrialRecord& r : result_.history) {
    if (r.trial != pick->n) continue;
    r.outcome = policy::to_string(pick->obs.outcome);
    r.reason = pick->obs.reason;
    r.tokens_per_s_per_gpu = pick->obs.tokens_per_s_per_gpu;
    r.gpu_hours = pick->obs.gpu_hours;
    r.runs = pick->obs.runs;
  }
  note(fmt::format("trial {} measured again: {}", pick->n, pick->obs.reason));
  if (pick->obs.outcome == TrialOutcome::Accepted) since_best_ = 0;
  return !stopped_;
}

// When nothing is left to try or measure again: the incumbent measured once
// more, up to kSettledRuns (a lucky first measurement otherwise hides every
// later candidate, and a re-measurement can demote it). True when it was.
bool Campaign::settle_incumbent() {
  if (incumbent().runs >= kSettledRuns) return false;
  const std::string stop_reason = result_.stop_reason;
  if (!remeasure_incumbent()) {
    result_.stop_reason = stopped_ ? "interrupted" : stop_reason;
    return false;
  }
  return !stopped_;
}

void Campaign::judge_candidate(Trial& c) {
  int remeasures = 0;
  for (;;) {
    const Trial& inc = incumbent();
    const AcceptanceVerdict v = judge(c.arm, inc.arm, noise_cv(), remeasures, rule_);
    journal_->record(ledger::VerdictGiven{c.n, inc.n, c.runs, to_json(v)});
    if (v.decision == Decision::Accept) {
      c.obs.outcome = TrialOutcome::Accepted;
      c.obs.reason = v.why;
      c.parent = inc.n;  // the verdict's record made it the incumbent
      c.obs.parent = inc.n;
      return;
    }
    if (v.decision == Decision::Reject) {
      c.obs.outcome = TrialOutcome::Rejected;
      c.obs.reason = v.why;
      return;
    }
    if (v.decision == Decision::Remeasure) {
      ++remeasures;
      const int before = incumbent_n();
      if (!remeasure_incumbent()) break;
      if (incumbent_n() != before) continue;  // the incumbent was taken back: judge against its parent
    }
    const auto m = measure(c, v.decision == Decision::Confirm ? "confirm" : "remeasure", v.decision == Decision::Confirm ? 2 : 1);
    if (!m) break;
    if (!m->ok) {
      c.obs.outcome = TrialOutcome::Failed;
      return;
    }
  }
  c.obs.outcome = TrialOutcome::Rejected;
  c.obs.reason = "not confirmed: the budget or an interruption ended the measurements";
}

// A trial's run logs, oldest run first (for the LLM's read_log).
std::vector<std::string> Campaign::trial_logs(int trial) const {
  std::vector<std::string> out;
  if (trial < 0 || trial >= static_cast<int>(trials_.size())) return out;
  const Trial& t = trials_[static_cast<std::size_t>(trial)];
  for (int run = 1; run <= t.runs; ++run) {
    const fs::path log = fs::path(t.dir) / fmt::format("run-{}", run) / "run.log";
    std::error_code ec;
    if (fs::is_regular_file(log, ec)) out.push_back(log.string());
  }
  return out;
}

nlohmann::json Campaign::trial_profile(int trial) const {
  if (trial < 0 || trial >= static_cast<int>(trials_.size())) return nullptr;
  const Trial& t = trials_[static_cast<std::size_t>(trial)];
  if (!t.last_diagnosis || !t.last_diagnosis->profile) return nullptr;
  return diagnose::to_json(*t.last_diagnosis).value("profile", nlohmann::json());
}

// What the policy has to say goes to the user and the journal, and into the summary.
void Campaign::pass_on_policy_notes(int trial) {
  for (const std::string& text : policy_->take_notes()) {
    note(text);
    journal_->record(ledger::PolicyNote{trial, text});
    result_.policy_notes.push_back(text);
  }
}

// Trial n as the policy proposes it (or the journal recalls it), through the
// gate: approved, or decided already (refused, a duplicate, unrunnable).
// nullopt when the policy has nothing to propose (stop_reason says why).
std::optional<Trial> Campaign::propose_trial(int n) {
  Trial c;
  c.n = n;
  c.parent = incumbent_n();
  c.obs.trial = n;
  c.obs.parent = incumbent_n();
  if (const nlohmann::json* p = journal_->find(ledger::EventKind::Proposal, n)) {
    c.proposal = policy::proposal_from_json(p->at("proposal"), journal_->path());
    journal_->record(*p);
  } else {
    const Trial& inc = incumbent();
    const std::vector<Observation> history = observations();
    policy::PolicyContext ctx{target_->recipe, inc.approved->recipe(), incumbent_n(), inc.obs.tokens_per_s_per_gpu.value_or(0),
                              min_gain_now(), history, inc.last_diagnosis ? &*inc.last_diagnosis : nullptr, *gate_,
                              lessons_, seed_, n, budget_->left(), expected_run_cost(1),
                              [this](int trial) { return trial_logs(trial); },
                              [this](int trial) { return trial_profile(trial); }};
    const policy::PolicyAnswer a = policy_->propose(ctx);
    pass_on_policy_notes(n);
    if (!a.proposal) {
      journal_->record(ledger::PolicyStop{n, a.stop_reason, policy_->explain()});
      result_.stop_reason = a.stop_reason;
      policy_done_ = true;
      return std::nullopt;
    }
    policy_done_ = false;
    c.proposal = *a.proposal;
    journal_->record(ledger::ProposalMade{n, incumbent_n(), policy::to_json(c.proposal), policy_->explain()});
  }
  c.obs.proposal = c.proposal;
  c.dir = (fs::path(result_.dir) / "trials" / fmt::format("{:04d}-{}", n, c.proposal.slug())).string();
  policy::Admission a = policy::admit(c.proposal, incumbent().approved->recipe(), target_->recipe, *gate_, observations());
  c.described = std::move(a.described);
  c.obs.recipe_identity = a.identity;
  c.obs.reason = a.why;
  if (a.edited) {
    try {
      c.obs.workload = sim::workload_from_recipe(*a.edited);
    } catch (const InputError&) {
    }
  }
  switch (a.kind) {
    case policy::AdmissionKind::Unrunnable: c.obs.outcome = TrialOutcome::Unrunnable; break;
    case policy::AdmissionKind::NoChange:
    case policy::AdmissionKind::Repeat: c.obs.outcome = TrialOutcome::Duplicate; break;
    case policy::AdmissionKind::Refused:
      c.obs.outcome = TrialOutcome::Refused;
      ++result_.refused;
      break;
    case policy::AdmissionKind::Admitted:
      c.approved = std::move(a.approved);
      c.obs.outcome = TrialOutcome::Pending;
      fs::create_directories(c.dir);
      write_file((fs::path(c.dir) / "proposal.json").string(), policy::to_json(c.proposal).dump(2) + "\n");
      break;
  }
  return c;
}

// One round: up to `count` proposals from the same history, the approved
// ones screened with their runs in flight together (the worst case of each
// held against the budget), then each judged in trial order. A trial whose
// screening could not start or was interrupted is dropped with the ones
// after it (nothing was decided for them: a resume recalls them from the
// journal). False when the campaign stops.
bool Campaign::round(int first, int count) {
  const auto work_start = std::chrono::steady_clock::now();
  const double runs_before = run_seconds_;
  for (int k = 0; k < count; ++k) {
    std::optional<Trial> c = propose_trial(first + k);
    if (!c) break;
    trials_.push_back(std::move(*c));
  }
  const int proposed = static_cast<int>(trials_.size()) - first;
  if (proposed == 0) return false;
  std::vector<PlannedRun> screens;
  double in_flight = 0;
  int undecided = static_cast<int>(trials_.size());  // the first trial nothing could be decided for
  for (int n = first; n < static_cast<int>(trials_.size()); ++n) {
    Trial& t = trials_[static_cast<std::size_t>(n)];
    if (!t.approved) continue;
    std::optional<PlannedRun> p = plan_run(t, "screen", 1, in_flight);
    if (!p) {
      undecided = n;
      break;
    }
    in_flight += p->cost;
    screens.push_back(std::move(*p));
  }
  execute(screens);
  for (PlannedRun& p : screens) {
    if (p.trial >= undecided) break;
    const std::optional<RunMeasure> m = finish_run(p);
    if (!m) undecided = std::min(undecided, p.trial);
  }
  for (int n = first; n < undecided; ++n) {
    Trial& t = trials_[static_cast<std::size_t>(n)];
    if (t.approved && t.runs > 0 && t.obs.outcome == TrialOutcome::Pending) {
      if (!t.obs.failure.empty()) t.obs.outcome = TrialOutcome::Failed;
      else if (!stopped_) judge_candidate(t);
    }
    if (t.obs.outcome == TrialOutcome::Pending) {  // interrupted before its judgement
      undecided = n;
      break;
    }
    const bool launched = t.runs > 0;
    since_best_ = t.obs.outcome == TrialOutcome::Accepted ? 0 : since_best_ + (launched ? 1 : 0);
    record_trial(t);
  }
  const bool dropped = undecided < static_cast<int>(trials_.size());
  trials_.resize(static_cast<std::size_t>(undecided));
  attune_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - work_start).count() -
                     (run_seconds_ - runs_before);
  if (stopped_ || interrupted()) {
    result_.stop_reason = "interrupted";
    return false;
  }
  if (dropped && undecided == first) {
    result_.stop_reason = "the budget cannot pay for another run";
    return false;
  }
  return true;
}

// Re-runs the winner and checks its loss. True when the winner failed on
// the re-run and the budget allows searching on: it is then a failed trial
// the policy learns from, and the campaign goes on from its parent.
bool Campaign::verify() {
  while (incumbent_n() != 0) {
    Trial& best = incumbent();
    const Trial& base = trials_[0];
    if (base.losses.size() < 2) {
      result_.verification = "unknown (the baseline has fewer than two loss curves to measure its spread)";
      return false;
    }
    const auto m = measure(best, "verify", 1);  // recalled from the journal when it ran before
    if (!m) {
      result_.verification = "unknown (no budget left to re-run the winner)";
      return false;
    }
    const nlohmann::json* done = journal_->find(ledger::EventKind::Verification, best.n);
    LossCheck check;
    if (done) {
      check.comparable = done->at("loss").value("comparable", false);
      check.suspect = done->at("loss").value("suspect", false);
      check.steps = done->at("loss").value("steps", 0);
      check.why = done->at("loss").value("why", "");
    } else {
      if (!m->ok) {
        check.suspect = true;
        check.comparable = true;
        check.why = "the winner failed when re-run: " + m->failure;
      } else {
        check = compare_loss(m->loss, base.losses[0], base.losses[1]);
      }
    }
    journal_->record(ledger::Verified{best.n, to_json(check)});
    if (!check.comparable) {
      result_.verification = "unknown (" + check.why + ")";
      return false;
    }
    if (!check.suspect) {
      result_.verification = "passed (" + check.why + ")";
      return false;
    }
    note(fmt::format("trial {} is suspect: {}", best.n, check.why));
    best.obs.outcome = TrialOutcome::Demoted;
    best.obs.reason = "suspect: " + check.why;
    const bool failed = check.steps == 0;  // it failed when re-run: no loss to compare
    for (TrialRecord& r : result_.history) {
      if (r.trial == best.n) r.outcome = failed ? "failed_on_rerun" : "suspect", r.reason = check.why;
    }
    // The verification's record took the incumbent back to best.parent.
    if (failed) {
      best.obs.outcome = TrialOutcome::Failed;
      best.obs.failure = m->failure;
      if (budget_->left() > expected_run_cost(3)) {
        result_.verification.clear();
        return true;
      }
    }
  }
  if (result_.verification.empty()) result_.verification = "not needed (the recipe as written stays best)";
  return false;
}

void Campaign::finish() {
  const Trial& base = trials_[0];
  const Trial& best = incumbent();
  result_.baseline_tokens_per_s_per_gpu = base.obs.tokens_per_s_per_gpu.value_or(0);
  result_.best_tokens_per_s_per_gpu = best.obs.tokens_per_s_per_gpu.value_or(0);
  result_.gain = result_.baseline_tokens_per_s_per_gpu > 0
                     ? result_.best_tokens_per_s_per_gpu / result_.baseline_tokens_per_s_per_gpu - 1
                     : 0;
  result_.best_trial = incumbent_n();
  result_.gpu_hours = budget_->spent();
  result_.trials = static_cast<int>(trials_.size()) - 1;
  const recipe::Recipe& tuned = best.approved->recipe();
  // The edits as the recipe spells them, each with its lever when it has one.
  for (const recipe::KeyDifference& k : recipe::diff_recipes(base.approved->recipe(), tuned).keys)
    result_.best_edits.push_back({k.key, k.lever, k.old_value ? k.old_value->str() : "", k.new_value ? k.new_value->str() : ""});
  for (int t = incumbent_n(); t != 0; t = trials_[static_cast<std::size_t>(t)].parent) {
    const auto& d = trials_[static_cast<std::size_t>(t)].described;
    result_.best_changes.insert(result_.best_changes.begin(), d.begin(), d.end());
  }
  // best/: the tuned file under the original's name, and its diff.
  const fs::path best_dir = fs::path(result_.dir) / "best";
  fs::create_directories(best_dir);
  const std::string name = fs::path(target_->recipe.config_path()).filename().string();
  result_.best_recipe = (best_dir / name).string();
  result_.best_diff = (best_dir / (name + ".diff")).string();
  write_file(result_.best_recipe, tuned.document().text());
  write_file(result_.best_diff, unified_diff(target_->recipe.document().text(), tuned.document().text(),
                                                    "a/" + name, "b/" + name));
  // The score a benchmark gives: only now, and only for the sim cluster.
  if (target_->scenario && cluster::run_traits(def_).simulated) {
    const std::string& dir = target_->scenario->dir;
    const sim::TunedScore s = q_.true_optimum_tokens_per_s_per_gpu
                                  ? sim::score_tuned(dir, tuned, *gate_, *q_.true_optimum_tokens_per_s_per_gpu)
                                  : sim::score_tuned(dir, tuned, *gate_);
    result_.true_tokens_per_s_per_gpu = s.tuned;
    result_.true_optimum_tokens_per_s_per_gpu = s.optimum;
    result_.true_oom_risk = s.oom_risk;
    result_.true_score = s.score;
  }
  const int counted = std::max(1, result_.trials);
  result_.attune_seconds_per_trial = attune_seconds_ / counted;
  // Lessons: each measured one-lever move, against the trial it was proposed from.
  // Not from an interrupted campaign: its resume appends them once, whole.
  if (q_.use_lessons && base.obs.workload && !result_.interrupted) {
    const std::vector<policy::Lesson> lessons =
        policy::lessons_from(observations(), recipe::to_string(target_->recipe.framework()), result_.dir);
    if (!journal_->find(ledger::EventKind::Lessons, -1))
      policy::append_lessons(q_.lessons_file.empty() ? policy::default_lessons_path() : q_.lessons_file, lessons);
    journal_->record(ledger::LessonsWritten{lessons.size()});
  }
  result_.policy_usage = policy_->usage();
  const nlohmann::json summary = to_json(result_);
  write_file((fs::path(result_.dir) / "summary.json").string(), summary.dump(2) + "\n");
  journal_->record(ledger::CampaignFinished{summary});
  write_reports();
  note(fmt::format("finished: {}; {:+.1f}% in {:.1f} GPU-hours", result_.stop_reason, 100 * result_.gain, result_.gpu_hours));
}

void Campaign::search() {
  since_best_ = 0;
  int idle = 0;
  for (;;) {
    if (interrupted()) {
      result_.stop_reason = "interrupted";
      break;
    }
    const int launched = static_cast<int>(std::count_if(trials_.begin() + 1, trials_.end(), [](const Trial& t) { return t.runs > 0; }));
    if (q_.max_trials > 0 && launched >= q_.max_trials) {
      result_.stop_reason = fmt::format("--max-trials {} reached", q_.max_trials);
      break;
    }
    if (since_best_ >= q_.patience) {
      if (rescreen() || settle_incumbent()) continue;  // before giving up: close calls, then the incumbent, again
      result_.stop_reason = fmt::format("{} trials without a new best (patience)", q_.patience);
      break;
    }
    const int first = static_cast<int>(trials_.size());
    const int count = q_.max_trials > 0 ? std::min(q_.parallel, q_.max_trials - launched) : q_.parallel;
    if (!round(first, count)) {
      if (policy_done_ && (rescreen() || settle_incumbent())) continue;
      break;
    }
    for (std::size_t n = static_cast<std::size_t>(first); n < trials_.size(); ++n) idle = trials_[n].runs > 0 ? 0 : idle + 1;
    if (idle >= kMaxIdleProposals) {
      result_.stop_reason = fmt::format("{} proposals in a row could not run", kMaxIdleProposals);
      break;
    }
  }
}

// report.md and report.html from what the campaign wrote. A report that
// cannot be written is said, and does not undo a finished campaign.
void Campaign::write_reports() {
  try {
    const report::ReportFiles files = report::write_reports(result_.dir);
    result_.report = files.html;
    for (const auto& p : files.problems) note("report: " + p);
  } catch (const InputError& e) {
    note(std::string("the report could not be written: ") + e.what());
  }
}

// A request refused before anything was journalled leaves no campaign
// behind: the directory this tune made goes, or in a directory that was
// there already the files it put there.
void Campaign::discard_new_directory() {
  if (!q_.resume_dir.empty() || !journal_ || !journal_->events().empty()) return;
  const fs::path dir(result_.dir);
  log_.reset();
  journal_.reset();
  lock_.reset();
  std::error_code ec;
  if (made_directory_) {
    fs::remove_all(dir, ec);
    return;
  }
  for (const char* f : {"journal.jsonl", "campaign.log", ".lock"}) fs::remove(dir / f, ec);
}

TuneResult Campaign::run() {
  open_directory();
  try {
    load_inputs();
  } catch (const InputError&) {
    discard_new_directory();
    throw;
  }
  if (!baseline()) {
    result_.stop_reason = stopped_ || interrupted() ? "interrupted" : "the budget cannot pay for the baseline";
    result_.interrupted = result_.stop_reason == "interrupted";
    if (trials_.empty()) return result_;
    trials_.resize(1);
    finish();  // the summary says so, with what was spent
    return result_;
  }
  for (;;) {
    search();
    result_.interrupted = stopped_ || result_.stop_reason == "interrupted";
    if (result_.interrupted || !verify()) break;
    note("the winner failed when re-run; searching on from its parent");
  }
  finish();
  return result_;
}

}  // namespace

TuneResult run_tune(const TuneRequest& request, const TuneHooks& hooks) {
  Campaign c(request, hooks);
  return c.run();
}

nlohmann::json to_json(const TuneResult& r) {
  nlohmann::json edits = nlohmann::json::array();
  for (const BestEdit& e : r.best_edits) edits.push_back({{"key", e.key}, {"lever", e.lever}, {"from", e.from}, {"to", e.to}});
  nlohmann::json history = nlohmann::json::array();
  for (const TrialRecord& t : r.history) {
    history.push_back({{"trial", t.trial}, {"parent", t.parent}, {"label", t.label}, {"rule", t.rule}, {"stage", t.stage},
                       {"why", t.why}, {"outcome", t.outcome}, {"reason", t.reason},
                       {"tokens_per_s_per_gpu", optional_json(t.tokens_per_s_per_gpu)}, {"predicted_gain", optional_json(t.predicted_gain)},
                       {"gpu_hours", t.gpu_hours}, {"runs", t.runs}});
  }
  nlohmann::json best = {{"tokens_per_s_per_gpu", r.best_tokens_per_s_per_gpu}, {"trial", r.best_trial}, {"edits", edits},
                         {"changes", r.best_changes}, {"recipe", r.best_recipe}, {"diff", r.best_diff}};
  if (r.true_tokens_per_s_per_gpu) best["true_tokens_per_s_per_gpu"] = *r.true_tokens_per_s_per_gpu;
  if (r.true_optimum_tokens_per_s_per_gpu) best["true_optimum_tokens_per_s_per_gpu"] = *r.true_optimum_tokens_per_s_per_gpu;
  if (r.true_oom_risk) best["true_oom_risk"] = *r.true_oom_risk;
  if (r.true_score) best["true_score"] = *r.true_score;
  return {{"dir", r.dir},
          {"policy", r.policy},
          {"cluster", r.cluster},
          {"baseline", {{"tokens_per_s_per_gpu", r.baseline_tokens_per_s_per_gpu}}},
          {"best", best},
          {"gain", r.gain},
          {"gpu_hours", r.gpu_hours},
          {"budget_gpu_hours", r.budget_gpu_hours},
          {"trials", r.trials},
          {"launches", r.launches},
          {"failed_launches", r.failed_launches},
          {"refused", r.refused},
          {"stop_reason", r.stop_reason},
          {"verification", r.verification},
          {"interrupted", r.interrupted},
          {"attune_seconds_per_trial", r.attune_seconds_per_trial},
          {"policy_usage", r.policy_usage},
          {"policy_notes", r.policy_notes},
          {"report", r.report},
          {"history", history}};
}

}  // namespace attune::campaign
