#include "attune/campaign/bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "attune/campaign/run_names.h"
#include "attune/campaign/sim_target.h"
#include "attune/campaign/tune.h"
#include "attune/gate/correctness_gate.h"
#include "attune/ledger/ledger.h"
#include "attune/sim/scenario.h"
#include "attune/sim/scenario_report.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/statistics.h"
#include "attune/util/text.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultPolicies[] = {"rules", "random", "grid", "planner", "optuna", "xgb"};
constexpr double kReach = 0.95;          // "GPU-hours to reach 95% of its own best"
constexpr double kRegretThreshold = 0.05;

bool registered(const std::string& name) {
  const auto& names = policy::policy_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Runs task(0..n-1) on `jobs` threads. The first exception raises `stop`
// (the tasks still running see it and end early) and is rethrown once every
// thread has joined.
void run_parallel(int n, int jobs, std::atomic<bool>& stop, const std::function<void(int)>& task) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (int i = next++; i < n && !stop; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::min(jobs, n); ++k) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

// The scenario's true optimum and the true throughput of its recipe as
// written (as score_tuned scores them), and the prior's recorded regret.
BenchScenario bench_scenario(const std::string& dir) {
  const sim::Scenario s = sim::read_scenario(dir);
  BenchScenario out;
  out.name = fs::path(dir).filename().string();
  out.dir = dir;
  if (!s.harness.empty()) out.prior_regret = sim::read_harness(s.harness).prior_regret;
  const gate::CorrectnessGate gate{gate::GateOptions{}};
  const sim::TunedScore score = sim::score_tuned(dir, load_launch_target(dir, {}).recipe, gate);
  out.optimum_tokens_per_s_per_gpu = score.optimum;
  out.baseline_tokens_per_s_per_gpu =
      score.failure.empty() && score.refused.empty() ? score.tuned * (1 - score.oom_risk) : 0;
  return out;
}

// The GPU-hours spent when the curve first reached `share` of `final`.
double gpuh_to_reach(const std::vector<std::pair<double, double>>& curve, double final, double share) {
  for (const auto& [gpuh, value] : curve) {
    if (final > 0 && value >= share * final) return gpuh;
  }
  return curve.empty() ? 0 : curve.back().first;
}

struct CampaignSpec {
  std::string policy;
  const BenchScenario* scenario = nullptr;
  int seed = 0;
};

}  // namespace

sim::TunedScore score_campaign(const TuneResult& r, const BenchScenario& scenario, const gate::GateOptions& gate) {
  if (!r.tuned) return {};
  const gate::CorrectnessGate g(gate);
  return scenario.optimum_tokens_per_s_per_gpu > 0
             ? sim::score_tuned(scenario.dir, *r.tuned, g, scenario.optimum_tokens_per_s_per_gpu)
             : sim::score_tuned(scenario.dir, *r.tuned, g);
}

namespace {

BenchCampaign run_campaign(const BenchRequest& q, const CampaignSpec& c, const std::string& out_dir,
                           const std::function<bool()>& interrupted) {
  BenchCampaign b;
  b.policy = c.policy;
  b.scenario = c.scenario->name;
  b.seed = c.seed;
  b.dir = (fs::path(out_dir) / "campaigns" / c.policy / c.scenario->name / fmt::format("seed-{}", c.seed)).string();
  TuneRequest t;
  t.file = c.scenario->dir;
  t.policy = c.policy;
  if (policy::policy_asks_llm(t.policy)) t.policy_settings = q.policy_settings;
  t.budget_gpu_hours = q.budget_gpu_hours;
  t.seed = static_cast<std::uint64_t>(c.seed);
  t.use_lessons = false;
  t.out_dir = b.dir;
  t.durable = false;  // simulated and never resumed: fsyncs would be most of its time
  TuneHooks hooks;
  hooks.interrupted = interrupted;
  const auto start = std::chrono::steady_clock::now();
  TuneResult r;
  try {
    r = run_tune(t, hooks);
  } catch (const InputError& e) {
    throw InputError(e.where(), e.key(),
                     fmt::format("{} on {} (seed {}): {}", c.policy, c.scenario->name, c.seed, e.message()));
  }
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const sim::TunedScore score = score_campaign(r, *c.scenario, t.gate);
  const double optimum = score.optimum;
  // Expected throughput: a recipe that OOMs in a share of long runs loses that share.
  const double tuned = score.tuned * (1 - score.oom_risk);
  b.ratio_to_optimum = score.score;
  if (c.scenario->true_gain()) b.gain = tuned / c.scenario->baseline_tokens_per_s_per_gpu;
  else b.gain = r.baseline_tokens_per_s_per_gpu > 0 ? r.best_tokens_per_s_per_gpu / r.baseline_tokens_per_s_per_gpu : 0;
  b.gpu_hours = r.gpu_hours;
  b.budget_gpu_hours = r.budget_gpu_hours;
  b.trials = r.trials;
  b.launches = r.launches;
  b.failed_launches = r.failed_launches;
  b.refused = r.refused;
  b.stop_reason = r.stop_reason;
  b.curve = incumbent_curve(b.dir);
  // The campaign ends with its summary's figures (a close call settled after the last trial event).
  b.curve.emplace_back(r.gpu_hours, r.best_tokens_per_s_per_gpu);
  for (auto& point : b.curve) point.second = optimum > 0 ? point.second / optimum : 0;
  b.gpuh_to_95pct = gpuh_to_reach(b.curve, b.curve.back().second, kReach);
  return b;
}

// Removes every campaign's trials/ once the bench has ended (or failed):
// removing them as each campaign ends made the next campaigns' file creation
// the bench's largest cost (a file system without a journal skips recently
// freed inodes one by one when it allocates).
class TrialsCleanup {
 public:
  TrialsCleanup(const std::string& out_dir, bool keep) : dir_(fs::path(out_dir) / "campaigns"), keep_(keep) {}
  TrialsCleanup(const TrialsCleanup&) = delete;
  TrialsCleanup& operator=(const TrialsCleanup&) = delete;
  ~TrialsCleanup() { remove(); }

  void remove() {
    if (keep_ || done_) return;
    done_ = true;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() == 2 && it->is_directory(ec)) {  // campaigns/<policy>/<scenario>/seed-N
        fs::remove_all(it->path() / "trials", ec);
        it.disable_recursion_pending();
      }
    }
  }

 private:
  fs::path dir_;
  bool keep_;
  bool done_ = false;
};

std::optional<double> common_budget(const BenchRequest& q, const std::vector<BenchCampaign>& campaigns) {
  if (q.budget_gpu_hours) return q.budget_gpu_hours;
  std::set<double> budgets;
  for (const BenchCampaign& c : campaigns) budgets.insert(c.budget_gpu_hours);
  if (budgets.size() == 1) return *budgets.begin();
  return std::nullopt;
}

std::vector<const BenchCampaign*> campaigns_of(const BenchResult& r, const std::string& policy, const std::string& scenario) {
  std::vector<const BenchCampaign*> out;
  for (const BenchCampaign& c : r.campaigns) {
    if (c.policy == policy && c.scenario == scenario) out.push_back(&c);
  }
  return out;
}

template <typename F>
std::vector<double> values(const std::vector<const BenchCampaign*>& cs, F field) {
  std::vector<double> out;
  for (const BenchCampaign* c : cs) out.push_back(static_cast<double>(field(*c)));
  return out;
}

// Each scenario's median over seeds of `field`, for the scenarios the policy ran.
template <typename F>
std::vector<double> scenario_medians(const BenchResult& r, const std::string& policy, F field,
                                     const std::function<bool(const BenchScenario&)>& keep = nullptr) {
  std::vector<double> out;
  for (const BenchScenario& s : r.scenarios) {
    if (keep && !keep(s)) continue;
    const auto cs = campaigns_of(r, policy, s.name);
    if (!cs.empty()) out.push_back(median(values(cs, field)));
  }
  return out;
}

bool ran(const BenchResult& r, const std::string& policy) {
  return std::find(r.policies.begin(), r.policies.end(), policy) != r.policies.end();
}

// Rules' median improvement (gain - 1) against `factor` times another policy's.
BenchTarget gain_target(const BenchResult& r, const std::string& other, double factor) {
  BenchTarget t;
  t.target = fmt::format("rules median gain over the starting recipe >= {}x {}'s (improvement, gain - 1)", factor, other);
  if (!ran(r, "rules") || !ran(r, other)) {
    t.measured = fmt::format("not measured ({} not run)", ran(r, "rules") ? other : "rules");
    return t;
  }
  const double a = summarize(r, "rules").median_gain - 1, b = summarize(r, other).median_gain - 1;
  t.measured = fmt::format("rules {:+.1f}%, {} {:+.1f}%{}", 100 * a, other, 100 * b,
                           b > 0 ? fmt::format(" ({:.2f}x)", a / b) : "");
  t.met = a >= factor * b;
  return t;
}

nlohmann::json seed_figures(const std::vector<const BenchCampaign*>& cs, double (*pick)(const std::vector<double>&)) {
  auto f = [&](auto field) { return pick(values(cs, field)); };
  return {{"ratio_to_optimum", f([](const BenchCampaign& c) { return c.ratio_to_optimum; })},
          {"gain", f([](const BenchCampaign& c) { return c.gain; })},
          {"gpuh_to_95pct", f([](const BenchCampaign& c) { return c.gpuh_to_95pct; })},
          {"failed_launches", f([](const BenchCampaign& c) { return c.failed_launches; })},
          {"gate_refusals", f([](const BenchCampaign& c) { return c.refused; })}};
}

double lowest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double highest(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double median_of(const std::vector<double>& v) { return median(v); }

// Per seed: [[GPU-hours, best so far / true optimum], ...].
nlohmann::json curves(const std::vector<const BenchCampaign*>& cs) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchCampaign* c : cs) out.push_back(c->curve);
  return out;
}

nlohmann::json scenario_json(const BenchScenario& s, const std::vector<const BenchCampaign*>& cs) {
  return {{"name", s.name},
          {"budget_gpuh", cs.empty() ? 0 : cs.front()->budget_gpu_hours},
          {"gain_basis", s.true_gain() ? "true" : "measured"},
          {"seeds", values(cs, [](const BenchCampaign& c) { return c.seed; })},
          {"ratio_to_optimum", values(cs, [](const BenchCampaign& c) { return c.ratio_to_optimum; })},
          {"gain", values(cs, [](const BenchCampaign& c) { return c.gain; })},
          {"gpuh_to_95pct", values(cs, [](const BenchCampaign& c) { return c.gpuh_to_95pct; })},
          {"failed_launches", values(cs, [](const BenchCampaign& c) { return c.failed_launches; })},
          {"launches", values(cs, [](const BenchCampaign& c) { return c.launches; })},
          {"gate_refusals", values(cs, [](const BenchCampaign& c) { return c.refused; })},
          {"gpu_hours", values(cs, [](const BenchCampaign& c) { return c.gpu_hours; })},
          {"trials", values(cs, [](const BenchCampaign& c) { return c.trials; })},
          {"seconds", values(cs, [](const BenchCampaign& c) { return c.seconds; })},
          {"curves", curves(cs)},
          {"median", seed_figures(cs, median_of)},
          {"min", seed_figures(cs, lowest)},
          {"max", seed_figures(cs, highest)}};
}

std::string range_text(const std::vector<double>& v, const char* format) {
  if (v.empty()) return "-";
  const std::string med = fmt::format(fmt::runtime(format), median(v));
  if (v.size() == 1) return med;
  return med + fmt::format(" ({}-{})", fmt::format(fmt::runtime(format), lowest(v)), fmt::format(fmt::runtime(format), highest(v)));
}

// One row per scenario, one column per policy: `field`'s median over seeds (min-max).
template <typename F>
std::string scenario_table(const BenchResult& r, const std::string& title, F field, const char* format) {
  std::string out = "## " + title + "\n\n| scenario | prior regret |";
  std::string rule = "|---|---|";
  for (const std::string& p : r.policies) out += " " + p + " |", rule += "---|";
  out += "\n" + rule + "\n";
  for (const BenchScenario& s : r.scenarios) {
    out += "| " + s.name + " | " + (s.prior_regret ? fmt::format("{:.1f}%", 100 * *s.prior_regret) : "-") + " |";
    for (const std::string& p : r.policies) out += " " + range_text(values(campaigns_of(r, p, s.name), field), format) + " |";
    out += "\n";
  }
  return out + "\n";
}

}  // namespace

std::vector<std::pair<double, double>> incumbent_curve(const std::string& campaign_dir) {
  const ledger::Ledger journal((std::filesystem::path(campaign_dir) / "journal.jsonl").string());
  ledger::LedgerState state;
  std::vector<std::pair<double, double>> out;
  for (const nlohmann::json& e : journal.events()) {
    const bool changed = ledger::apply(state, e);
    const ledger::EventKind kind = ledger::kind_of(e);
    const bool decided = (kind == ledger::EventKind::Trial || kind == ledger::EventKind::Rescreened) &&
                         ledger::identity_of(e).trial == state.incumbent;
    const ledger::TrialState* inc = state.trial(state.incumbent);
    if ((changed || decided) && inc && inc->decided_tokens_per_s_per_gpu)
      out.emplace_back(state.spent_gpu_hours, *inc->decided_tokens_per_s_per_gpu);
  }
  return out;
}


std::vector<std::string> default_bench_policies(const policy::PolicySettings& settings) {
  std::vector<std::string> out;
  for (const char* name : kDefaultPolicies) {
    if (registered(name)) out.push_back(name);
  }
  if (settings.llm) {
    for (const char* name : {"hybrid", "llm"}) {
      if (registered(name)) out.push_back(name);
    }
  }
  return out;
}

std::vector<std::string> parse_bench_policies(const std::string& list, const policy::PolicySettings& settings) {
  std::vector<std::string> out;
  for (const std::string& part : split(list, ',')) {
    const std::string name(trim(part));
    if (name.empty()) throw InputError({}, "--policies", fmt::format("an empty name in '{}'", list));
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw InputError({}, "--policies", fmt::format("'{}' is named twice", name));
    policy::make_policy(name, settings, "--policies");  // an unknown name, or an LLM policy without --llm
    out.push_back(name);
  }
  if (out.empty()) throw InputError({}, "--policies", "name at least one policy");
  return out;
}

BenchResult run_bench(const BenchRequest& q, const BenchHooks& hooks) {
  const auto start = std::chrono::steady_clock::now();
  if (q.seeds < 1) throw InputError({}, "--seeds", fmt::format("expected 1 or more seeds, got {}", q.seeds));
  BenchResult r;
  r.policies = q.policies.empty() ? default_bench_policies(q.policy_settings) : q.policies;
  for (const std::string& p : r.policies) policy::make_policy(p, q.policy_settings, "--policies");
  r.seeds = q.seeds;
  r.jobs = q.jobs > 0 ? q.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  r.out_dir = q.out_dir.empty() ? stamped_dir("campaigns", "bench") : q.out_dir;
  if (!fs::is_directory(q.scenarios_dir))
    throw InputError({q.scenarios_dir, 0, 0}, "--scenarios", "not a directory of scenarios");
  const std::vector<std::string> dirs = sim::scenario_dirs(q.scenarios_dir);
  if (dirs.empty()) throw InputError({q.scenarios_dir, 0, 0}, "--scenarios", "no scenario here (no */scenario.yaml)");
  if (fs::exists(fs::path(r.out_dir) / "campaigns"))
    throw InputError({r.out_dir, 0, 0}, "--out", "this directory holds a bench already (campaigns/); choose another --out");

  std::atomic<bool> stop{false};
  const auto interrupted = [&] { return stop || (hooks.interrupted && hooks.interrupted()); };
  r.scenarios.resize(dirs.size());
  run_parallel(static_cast<int>(dirs.size()), r.jobs, stop,
               [&](int i) { r.scenarios[static_cast<std::size_t>(i)] = bench_scenario(dirs[static_cast<std::size_t>(i)]); });

  std::vector<CampaignSpec> specs;
  for (const std::string& p : r.policies) {
    for (const BenchScenario& s : r.scenarios) {
      for (int seed = 1; seed <= q.seeds; ++seed) specs.push_back({p, &s, seed});
    }
  }
  std::vector<std::optional<BenchCampaign>> done(specs.size());
  TrialsCleanup cleanup(r.out_dir, q.keep_runs);
  std::mutex progress_mutex;
  int finished = 0;
  run_parallel(static_cast<int>(specs.size()), r.jobs, stop, [&](int i) {
    if (interrupted()) return;
    BenchCampaign c = run_campaign(q, specs[static_cast<std::size_t>(i)], r.out_dir, interrupted);
    std::lock_guard lock(progress_mutex);
    done[static_cast<std::size_t>(i)] = std::move(c);
    ++finished;
    if (hooks.on_progress)
      hooks.on_progress({finished, static_cast<int>(specs.size()), &*done[static_cast<std::size_t>(i)],
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  });
  // An interrupted campaign's figures are partial: only the ones that ended count.
  r.interrupted = hooks.interrupted && hooks.interrupted();
  for (std::optional<BenchCampaign>& c : done) {
    if (c && !(r.interrupted && c->stop_reason == "interrupted")) r.campaigns.push_back(std::move(*c));
  }
  r.budget_gpu_hours = common_budget(q, r.campaigns);
  cleanup.remove();  // part of the bench's time
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::create_directories(r.out_dir);
  write_file_atomic((fs::path(r.out_dir) / "bench.json").string(), to_json(r).dump(2) + "\n");
  write_file_atomic((fs::path(r.out_dir) / "bench.md").string(), bench_markdown(r));
  write_file_atomic((fs::path(r.out_dir) / "bench.svg").string(), bench_chart_svg(r));
  return r;
}

BenchSummary summarize(const BenchResult& r, const std::string& policy) {
  BenchSummary s;
  s.median_ratio_to_optimum = median(scenario_medians(r, policy, [](const BenchCampaign& c) { return c.ratio_to_optimum; }));
  s.median_gain = median(scenario_medians(r, policy, [](const BenchCampaign& c) { return c.gain; }));
  s.median_gpuh_to_95pct = median(scenario_medians(r, policy, [](const BenchCampaign& c) { return c.gpuh_to_95pct; }));
  s.median_refused = median(scenario_medians(r, policy, [](const BenchCampaign& c) { return c.refused; }));
  for (const BenchCampaign& c : r.campaigns) {
    if (c.policy != policy) continue;
    s.launches += c.launches;
    s.failed_launches += c.failed_launches;
  }
  s.failed_launch_rate = s.launches ? static_cast<double>(s.failed_launches) / s.launches : 0;
  return s;
}

std::vector<BenchTarget> bench_targets(const BenchResult& r) {
  std::vector<BenchTarget> out;
  const bool rules = ran(r, "rules");
  const BenchSummary rs = summarize(r, "rules");
  BenchTarget ratio{"rules median true throughput / true optimum >= 0.97", "not measured (rules not run)", std::nullopt};
  if (rules) ratio.measured = fmt::format("{:.3f}", rs.median_ratio_to_optimum), ratio.met = rs.median_ratio_to_optimum >= 0.97;
  out.push_back(ratio);
  out.push_back(gain_target(r, "random", 2));
  out.push_back(gain_target(r, "optuna", 1.5));
  out.push_back(gain_target(r, "xgb", 1.5));
  BenchTarget planner{"rules beats planner by >= 4 points of the optimum (median) where the prior's regret is >= 5%", "", std::nullopt};
  if (rules && ran(r, "planner")) {
    const auto regret = [](const BenchScenario& s) { return s.prior_regret && *s.prior_regret >= kRegretThreshold; };
    const auto ratio_of = [](const BenchCampaign& c) { return c.ratio_to_optimum; };
    const auto a = scenario_medians(r, "rules", ratio_of, regret), b = scenario_medians(r, "planner", ratio_of, regret);
    std::vector<double> gap;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) gap.push_back(a[i] - b[i]);
    planner.measured = fmt::format("{:+.1f} points on {} scenarios", 100 * median(gap), gap.size());
    if (!gap.empty()) planner.met = median(gap) >= 0.04;
  } else {
    planner.measured = "not measured (rules or planner not run)";
  }
  out.push_back(planner);
  BenchTarget failed{"rules failed launches <= 5% of its launches", "not measured (rules not run)", std::nullopt};
  if (rules) {
    failed.measured = fmt::format("{:.1f}% of {}", 100 * rs.failed_launch_rate, rs.launches);
    failed.met = rs.failed_launch_rate <= 0.05;
  }
  out.push_back(failed);
  BenchTarget wall{"the bench finishes in under 3 minutes on 2 cores (--jobs 2)",
                   fmt::format("{:.0f} s with --jobs {}", r.wall_seconds, r.jobs), std::nullopt};
  if (r.jobs <= 2) wall.met = r.wall_seconds < 180;
  out.push_back(wall);
  return out;
}

nlohmann::json to_json(const BenchResult& r) {
  nlohmann::json policies = nlohmann::json::object();
  for (const std::string& p : r.policies) {
    const BenchSummary s = summarize(r, p);
    nlohmann::json scenarios = nlohmann::json::array();
    for (const BenchScenario& sc : r.scenarios) {
      const auto cs = campaigns_of(r, p, sc.name);
      if (!cs.empty()) scenarios.push_back(scenario_json(sc, cs));
    }
    policies[p] = {{"median_ratio_to_optimum", s.median_ratio_to_optimum},
                   {"median_gain", s.median_gain},
                   {"failed_launch_rate", s.failed_launch_rate},
                   {"median_gpuh_to_95pct", s.median_gpuh_to_95pct},
                   {"median_gate_refusals", s.median_refused},
                   {"launches", s.launches},
                   {"failed_launches", s.failed_launches},
                   {"scenarios", scenarios}};
  }
  nlohmann::json scenarios = nlohmann::json::array();
  for (const BenchScenario& s : r.scenarios) {
    scenarios.push_back({{"name", s.name},
                         {"optimum_tokens_per_s_per_gpu", s.optimum_tokens_per_s_per_gpu},
                         {"baseline_tokens_per_s_per_gpu", s.true_gain() ? nlohmann::json(s.baseline_tokens_per_s_per_gpu) : nlohmann::json()},
                         {"prior_regret", s.prior_regret ? nlohmann::json(*s.prior_regret) : nlohmann::json()}});
  }
  nlohmann::json targets = nlohmann::json::array();
  for (const BenchTarget& t : bench_targets(r))
    targets.push_back({{"target", t.target}, {"measured", t.measured}, {"met", t.met ? nlohmann::json(*t.met) : nlohmann::json()}});
  return {{"budget_gpuh", r.budget_gpu_hours ? nlohmann::json(*r.budget_gpu_hours) : nlohmann::json()},
          {"seeds", r.seeds},
          {"jobs", r.jobs},
          {"wall_seconds", r.wall_seconds},
          {"interrupted", r.interrupted},
          {"out_dir", r.out_dir},
          {"policies", policies},
          {"scenarios", scenarios},
          {"targets", targets}};
}

std::string bench_markdown(const BenchResult& r) {
  std::string out = fmt::format(
      "{} scenarios x {} policies x {} seeds, budget {}, {} campaigns at once, {:.0f} s{}.\n\n", r.scenarios.size(),
      r.policies.size(), r.seeds,
      r.budget_gpu_hours ? fmt::format("{:g} GPU-hours", *r.budget_gpu_hours) : std::string("each scenario's own"), r.jobs,
      r.wall_seconds, r.interrupted ? " (interrupted: only the campaigns that ended)" : "");
  out += "| policy | true / optimum | gain | failed launches | GPU-h to 95% of its best | gate refusals |\n"
         "|---|---|---|---|---|---|\n";
  for (const std::string& p : r.policies) {
    const BenchSummary s = summarize(r, p);
    out += fmt::format("| {} | {:.3f} | {:.2f}x | {:.1f}% ({}/{}) | {:.1f} | {:g} |\n", p, s.median_ratio_to_optimum,
                       s.median_gain, 100 * s.failed_launch_rate, s.failed_launches, s.launches, s.median_gpuh_to_95pct,
                       s.median_refused);
  }
  out += "\nMedians over scenarios of each scenario's median over seeds; failed launches over all launches. "
         "Gain: the final recipe's true throughput over the recipe as written (measured where the truth does not say).\n\n"
         "## Targets\n\n| target | measured | met |\n|---|---|---|\n";
  for (const BenchTarget& t : bench_targets(r))
    out += fmt::format("| {} | {} | {} |\n", t.target, t.measured, t.met ? (*t.met ? "yes" : "**no**") : "-");
  out += "\n";
  out += scenario_table(r, "True throughput / true optimum (median over seeds, min-max)",
                        [](const BenchCampaign& c) { return c.ratio_to_optimum; }, "{:.3f}");
  out += scenario_table(r, "Gain over the starting recipe (median over seeds, min-max)",
                        [](const BenchCampaign& c) { return c.gain; }, "{:.2f}");
  out += scenario_table(r, "GPU-hours to reach 95% of its own best (median over seeds, min-max)",
                        [](const BenchCampaign& c) { return c.gpuh_to_95pct; }, "{:.1f}");
  return out;
}

}  // namespace attune::campaign
