#include "attune/policy/bridge_policy.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "attune/sim/recipe_levers.h"
#include "attune/util/child_process.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

// The source tree's tools/ folder, compiled in; $ATTUNE_TOOLS_DIR overrides it.
#ifndef ATTUNE_TOOLS_DIR
#define ATTUNE_TOOLS_DIR ""
#endif

namespace attune::policy {

namespace {

// Debian's interpreter, where python3-optuna and python3-xgboost install
// themselves; another python3 on PATH (a pyenv, a venv) usually lacks them.
std::string default_python() {
  std::error_code ec;
  return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}

namespace fs = std::filesystem;
using Values = std::map<std::string, std::string>;  // dimension -> value

constexpr const char* kScript = "tuner_bridge.py";
constexpr int kCompletionPasses = 3;  // a move can open another (PP before its virtual stages)
constexpr std::size_t kToldBackShown = 8;  // told-back asks listed in explain()

std::string from_env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// A 32-bit seed (numpy's limit) from the campaign seed and the trial number,
// so each proposal samples afresh and a resumed campaign samples the same.
std::uint64_t sampler_seed(std::uint64_t seed, int trial) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(trial);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & 0xFFFFFFFFull;
}

Values values_of(const sim::Workload& w) {
  Values out;
  for (auto& [name, value] : sim::dimension_values(w)) out.emplace(std::move(name), std::move(value));
  return out;
}

// A setting_key ("tp=4;pp=2;") taken apart.
Values parse_setting(const std::string& key) {
  Values out;
  for (const std::string& part : split(key, ';')) {
    const auto eq = part.find('=');
    if (eq != std::string::npos) out[part.substr(0, eq)] = part.substr(eq + 1);
  }
  return out;
}

// What a trial was set to, when the history knows.
std::optional<Values> setting_of(const Observation& o) {
  if (o.workload) return values_of(*o.workload);
  if (!o.proposal.setting.empty()) return parse_setting(o.proposal.setting);
  return std::nullopt;
}

// What the study is told of a trial: its throughput (complete), or pruned for
// a run that failed and a setting that cannot run. nullopt: nothing to tell
// (in flight, a repeat of another trial, nothing measured).
struct Told {
  std::optional<double> value;  // nullopt: pruned
};
std::optional<Told> told_of(const Observation& o) {
  switch (o.outcome) {
    case TrialOutcome::Baseline:
    case TrialOutcome::Accepted:
    case TrialOutcome::Rejected:
    case TrialOutcome::Demoted:
      if (o.tokens_per_s_per_gpu) return Told{*o.tokens_per_s_per_gpu};
      return std::nullopt;
    case TrialOutcome::Failed:
    case TrialOutcome::Refused:
    case TrialOutcome::Unrunnable:
      return Told{std::nullopt};
    case TrialOutcome::Duplicate:
    case TrialOutcome::Pending:
      return std::nullopt;
  }
  return std::nullopt;
}

nlohmann::json tell_json(const Told& t) {
  if (t.value) return {{"state", "complete"}, {"value", *t.value}};
  return {{"state", "pruned"}};
}

void add_choice(std::vector<BridgeDimension>& dims, const std::string& name, const std::string& value) {
  auto d = std::find_if(dims.begin(), dims.end(), [&](const BridgeDimension& x) { return x.name == name; });
  if (d == dims.end()) return;
  if (std::find(d->choices.begin(), d->choices.end(), value) == d->choices.end()) d->choices.push_back(value);
}

// Every dimension with the values the space gives it and those the history
// holds (a completed setting can reach a value the moves from the base do
// not); those with a single value are left out.
std::vector<BridgeDimension> study_dimensions(const CandidateSpace& space, const std::vector<BridgeDimension>& found,
                                              const std::vector<Observation>& history) {
  std::vector<BridgeDimension> dims;
  for (const auto& [name, value] : sim::dimension_values(space.base())) dims.push_back({name, {value}});
  for (const BridgeDimension& d : found) {
    for (const std::string& v : d.choices) add_choice(dims, d.name, v);
  }
  for (const Observation& o : history) {
    if (!told_of(o)) continue;
    if (const auto s = setting_of(o)) {
      for (const auto& [name, value] : *s) add_choice(dims, name, value);
    }
  }
  std::erase_if(dims, [](const BridgeDimension& d) { return d.choices.size() < 2; });
  return dims;
}

// The study's parameters of a setting; nullopt when it lacks one of them.
std::optional<nlohmann::json> params_of(const Values& setting, const std::vector<BridgeDimension>& dims) {
  nlohmann::json params = nlohmann::json::object();
  for (const BridgeDimension& d : dims) {
    const auto it = setting.find(d.name);
    if (it == setting.end()) return std::nullopt;
    params[d.name] = it->second;
  }
  return params;
}

// The legal setting nearest the asked values: from the base, each dimension
// moved to its asked value by a one-lever move where one exists; a value no
// move reaches (a virtual stage without a pipeline, a micro batch that
// follows the layout) stays as the moves left it.
sim::Workload complete_setting(const CandidateSpace& space, const Values& asked) {
  sim::Workload w = space.base();
  for (int pass = 0; pass < kCompletionPasses; ++pass) {
    bool moved = false;
    for (const auto& [name, want] : asked) {
      if (values_of(w).at(name) == want) continue;
      for (sim::Workload& m : space.one_lever_moves(w)) {
        if (values_of(m).at(name) == want) {
          w = std::move(m);
          moved = true;
          break;
        }
      }
    }
    if (!moved) break;
  }
  return w;
}

// What the history says of a setting already tried: the study's verdict on it.
Told verdict_of_tried(const std::vector<Observation>& history, const std::string& key) {
  for (const Observation& o : history) {
    if ((o.workload && setting_key(*o.workload) == key) || o.proposal.setting == key) {
      if (const auto t = told_of(o)) return *t;
    }
  }
  return Told{std::nullopt};  // in flight or known not to run: worst, as Optuna's constant liar counts a running trial
}

std::string last_line(const std::string& text) {
  const auto lines = split_lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!trim(*it).empty()) return std::string(trim(*it));
  }
  return "";
}

// The proposal that takes the incumbent to `target`, when the recipe can
// spell it and the edits apply (the recipe's own validity rules hold).
std::optional<Proposal> spelled(const CandidateSpace& space, const recipe::Recipe& incumbent, const sim::Workload& from,
                                const sim::Workload& target, std::string& why) {
  std::optional<Proposal> p = space.proposal_to(incumbent, from, target, why);
  if (p && !apply_proposal(incumbent, *p, why)) p.reset();
  return p;
}

const char* method_flag(BridgeMethod m) { return m == BridgeMethod::Tpe ? "tpe" : "xgb"; }
const char* method_module(BridgeMethod m) { return m == BridgeMethod::Tpe ? "optuna" : "xgboost"; }

// A started bridge and what it said when it became ready.
struct IdleBridge {
  std::unique_ptr<ChildProcess> child;
  nlohmann::json explain;
};

// Bridges whose policy has ended, kept running for the next policy of the
// same interpreter, script and method: importing Optuna takes about a second,
// and a bench starts a hundred campaigns of each bridge policy. Reuse cannot
// change an answer: every propose() rebuilds the study from the history and
// seeds its sampler afresh. Shared by the bench's threads, hence the mutex.
class BridgePool {
 public:
  static BridgePool& instance() {
    static BridgePool pool;
    return pool;
  }
  std::optional<IdleBridge> take(const std::string& key) {
    std::lock_guard lock(mutex_);
    std::vector<IdleBridge>& idle = idle_[key];
    while (!idle.empty()) {
      IdleBridge b = std::move(idle.back());
      idle.pop_back();
      if (b.child->running()) return b;  // one that died since is dropped
    }
    return std::nullopt;
  }
  void give(const std::string& key, IdleBridge b) {
    std::lock_guard lock(mutex_);
    idle_[key].push_back(std::move(b));
  }
  ~BridgePool() {
    for (auto& [key, idle] : idle_) {
      for (IdleBridge& b : idle) b.child->close(2);
    }
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<IdleBridge>> idle_;
};

}  // namespace

std::vector<BridgeDimension> bridge_dimensions(const CandidateSpace& space) {
  std::vector<BridgeDimension> dims;
  for (const auto& [name, value] : sim::dimension_values(space.base())) dims.push_back({name, {value}});
  const auto offer = [&](const sim::Workload& w) {
    for (const auto& [name, value] : sim::dimension_values(w)) add_choice(dims, name, value);
  };
  for (const sim::Workload& m : space.one_lever_moves(space.base())) {
    offer(m);
    for (const sim::Workload& m2 : space.one_lever_moves(m)) offer(m2);
  }
  std::erase_if(dims, [](const BridgeDimension& d) { return d.choices.size() < 2; });
  return dims;
}

BridgePolicy::BridgePolicy(BridgeMethod method, BridgeSettings settings, std::string flag)
    : method_(method), settings_(std::move(settings)), flag_(std::move(flag)) {
  start();
}

BridgePolicy::~BridgePolicy() {
  if (child_ && child_->running()) BridgePool::instance().give(pool_key_, {std::move(child_), explain_});
}

std::string BridgePolicy::name() const { return method_ == BridgeMethod::Tpe ? "optuna" : "xgb"; }

void BridgePolicy::fail(const std::string& what) {
  std::string message = fmt::format("{}: {}", name(), what);
  if (child_) {
    child_->close(0.5);
    const std::string said = last_line(child_->stderr_tail());
    if (!said.empty()) message += fmt::format(" (the bridge said: {})", said);
    child_.reset();
  }
  throw InputError({}, flag_, message);
}

void BridgePolicy::start() {
  const std::string python = !settings_.python.empty() ? settings_.python : from_env("ATTUNE_PYTHON", default_python());
  const std::string dir = !settings_.tools_dir.empty() ? settings_.tools_dir : from_env("ATTUNE_TOOLS_DIR", ATTUNE_TOOLS_DIR);
  if (dir.empty()) fail(fmt::format("where {} is is not known: set ATTUNE_TOOLS_DIR to the tools/ folder of attune's source", kScript));
  const std::string script = (fs::path(dir) / kScript).string();
  pool_key_ = python + "\n" + script + "\n" + method_flag(method_);
  if (std::optional<IdleBridge> idle = BridgePool::instance().take(pool_key_)) {
    child_ = std::move(idle->child);
    explain_ = {{"method", idle->explain.at("method")}, {"versions", idle->explain.at("versions")}};
    return;
  }
  std::error_code ec;
  if (!fs::is_regular_file(script, ec))
    fail(fmt::format("the tuner bridge {} is not there (set ATTUNE_TOOLS_DIR to the folder that holds {})", script, kScript));
  ChildOptions options;
  options.env["PYTHONDONTWRITEBYTECODE"] = "1";  // nothing written into the tools folder
  // One thread that sleeps when idle: the bridge answers one small question at
  // a time, and OpenMP's spinning workers (XGBoost's) would take the cores
  // the campaigns run on.
  options.env["OMP_NUM_THREADS"] = "1";
  options.env["OMP_WAIT_POLICY"] = "PASSIVE";
  child_ = std::make_unique<ChildProcess>(std::vector<std::string>{python, script, "--method", method_flag(method_)}, options);
  if (!child_->running() && child_->exit_code() >= 126)
    fail(fmt::format("cannot run the Python interpreter: {} (install python3, or set ATTUNE_PYTHON to one)", child_->error()));
  const std::optional<std::string> line = child_->read_line(settings_.answer_timeout_s);
  if (!line) fail(fmt::format("the tuner bridge did not start: {}", child_->error()));
  nlohmann::json ready;
  try {
    ready = nlohmann::json::parse(*line);
  } catch (const nlohmann::json::exception&) {
    fail(fmt::format("the tuner bridge said '{}' instead of being ready", *line));
  }
  if (!ready.value("ready", false)) {
    const std::string missing = ready.value("missing_module", std::string(method_module(method_)));
    fail(fmt::format("{} has no Python module '{}' ({}): install Debian's python3-{} (apt-get install python3-{}), "
                     "or set ATTUNE_PYTHON to an interpreter that has it",
                     python, missing, ready.value("error", std::string("import failed")), method_module(method_),
                     method_module(method_)));
  }
  explain_ = {{"method", method_flag(method_)}, {"versions", ready.value("versions", nlohmann::json::object())}};
}

nlohmann::json BridgePolicy::request(const nlohmann::json& message) {
  const std::string op = message.at("op");
  if (!child_->write_line(message.dump(), settings_.answer_timeout_s))
    fail(fmt::format("the tuner bridge {} ('{}')", child_->error(), op));
  const std::optional<std::string> line = child_->read_line(settings_.answer_timeout_s);
  if (!line) fail(fmt::format("the tuner bridge {} (answering '{}')", child_->error(), op));
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(*line);
  } catch (const nlohmann::json::exception&) {
    fail(fmt::format("the tuner bridge answered '{}' with '{}', not JSON", op, *line));
  }
  if (!answer.is_object()) fail(fmt::format("the tuner bridge answered '{}' with '{}', not an object", op, *line));
  if (!answer.value("ok", false) && !answer.value("exhausted", false))
    fail(fmt::format("the tuner bridge refused '{}': {}", op, answer.value("error", std::string("no reason given"))));
  return answer;
}

PolicyAnswer BridgePolicy::propose(const PolicyContext& c) {
  if (!space_) {
    space_ = std::make_unique<CandidateSpace>(c.original, c.gate);
    dimensions_ = bridge_dimensions(*space_);
  }
  if (!child_ || !child_->running()) start();  // it died since: the study is rebuilt from the history anyway
  const std::vector<BridgeDimension> dims = study_dimensions(*space_, dimensions_, c.history);
  if (dims.empty()) return {std::nullopt, "the recipe can spell no setting but its own"};

  nlohmann::json space = nlohmann::json::array(), trials = nlohmann::json::array();
  for (const BridgeDimension& d : dims) space.push_back({{"name", d.name}, {"choices", d.choices}});
  int complete = 0, pruned = 0;
  for (const Observation& o : c.history) {
    const auto t = told_of(o);
    const auto s = setting_of(o);
    const auto params = s ? params_of(*s, dims) : std::nullopt;
    if (!t || !params) continue;
    nlohmann::json trial = tell_json(*t);
    trial["params"] = *params;
    trials.push_back(std::move(trial));
    ++(t->value ? complete : pruned);
  }
  const std::uint64_t seed = sampler_seed(c.seed, c.trial);
  request({{"op", "study"}, {"seed", seed}, {"space", space}, {"trials", trials}});
  explain_["sampler_seed"] = seed;
  explain_["told"] = {{"complete", complete}, {"pruned", pruned}};

  const sim::Workload inc = sim::workload_from_recipe(c.incumbent);
  std::map<std::string, Told> unspellable;  // this proposal's rejected settings, by setting_key
  nlohmann::json told_back = nlohmann::json::array();
  for (int ask = 1; ask <= settings_.max_asks; ++ask) {
    const nlohmann::json answer = request({{"op", "ask"}});
    if (answer.value("exhausted", false)) {
      explain_["asks"] = ask;
      explain_["told_back"] = told_back;
      return {std::nullopt, fmt::format("{}: {}", name(), answer.value("error", std::string("no setting left")))};
    }
    Values asked;
    for (const auto& [k, v] : answer.at("params").items()) asked[k] = v.get<std::string>();
    const sim::Workload target = complete_setting(*space_, asked);
    const std::string key = setting_key(target);
    std::optional<Told> back;
    std::string why;
    if (const auto it = unspellable.find(key); it != unspellable.end()) {
      back = it->second;
      why = "cannot be spelled";
    } else if (tried(c.history, target)) {
      back = verdict_of_tried(c.history, key);
      why = "already tried";
    } else if (std::optional<Proposal> p = spelled(*space_, c.incumbent, inc, target, why)) {
      p->rule = name();
      p->stage = "search";
      p->why = fmt::format("{} ask {} from {} trials told ({} measured, {} failed or refused)",
                           method_ == BridgeMethod::Tpe ? "Optuna TPE's" : "the XGBoost cost model's", ask,
                           complete + pruned, complete, pruned);
      explain_["asks"] = ask;
      explain_["told_back"] = told_back;
      explain_["asked"] = answer.at("params");
      return {std::move(*p), ""};
    } else {
      back = unspellable[key] = Told{std::nullopt};
    }
    nlohmann::json tell = tell_json(*back);
    tell["op"] = "tell";
    tell["id"] = answer.at("id");
    request(tell);
    if (told_back.size() < kToldBackShown) told_back.push_back({{"setting", key}, {"why", why}});
  }
  explain_["asks"] = settings_.max_asks;
  explain_["told_back"] = told_back;
  return {std::nullopt, fmt::format("{}: {} asks in a row gave settings already tried or that the recipe cannot spell",
                                    name(), settings_.max_asks)};
}

}  // namespace attune::policy
