#include "attune/campaign/run_measure.h"

#include "attune/diagnose/diagnosis.h"
#include "attune/util/error.h"
#include "attune/util/json_input.h"

namespace attune::campaign {

using json_field::optional_json;
using json_field::optional_number;

nlohmann::json to_json(const RunMeasure& m) {
  nlohmann::json loss = nlohmann::json::array();
  for (const auto& [s, v] : m.loss) loss.push_back({s, v});
  return {{"ok", m.ok},           {"state", m.state},         {"failure", m.failure},
          {"evidence", m.evidence}, {"tokens_per_s_per_gpu", m.tokens}, {"step_time_s", m.step_time_s},
          {"blocks", m.blocks},   {"peak_reserved_gib", optional_json(m.peak_reserved_gib)},
          {"headroom_gib", optional_json(m.headroom_gib)}, {"loss", loss}, {"gpu_hours", m.gpu_hours},
          {"elapsed_s", m.elapsed_s}, {"interrupted", m.interrupted}};
}

RunMeasure measure_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    RunMeasure m;
    m.ok = j.at("ok").get<bool>();
    m.state = j.value("state", "");
    m.failure = j.value("failure", "");
    m.evidence = j.value("evidence", "");
    m.tokens = j.value("tokens_per_s_per_gpu", 0.0);
    m.step_time_s = j.value("step_time_s", 0.0);
    m.blocks = j.value("blocks", std::vector<double>{});
    m.peak_reserved_gib = optional_number(j, "peak_reserved_gib");
    m.headroom_gib = optional_number(j, "headroom_gib");
    for (const auto& p : j.value("loss", nlohmann::json::array())) m.loss.emplace_back(p.at(0).get<long>(), p.at(1).get<double>());
    m.gpu_hours = j.value("gpu_hours", 0.0);
    m.elapsed_s = j.value("elapsed_s", 0.0);
    m.interrupted = j.value("interrupted", false);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw InputError({where, 0, 0}, "measurement", std::string("not a run measurement: ") + e.what());
  }
}

namespace {

// The failure class the scheduler's (or the watchdog's) own final state
// names; "" for a state that names no cause.
std::string scheduler_class(cluster::RunState s) {
  switch (s) {
    case cluster::RunState::OutOfMemory: return "oom";  // the cgroup OOM killer
    case cluster::RunState::NodeFail: return "node_failure";
    case cluster::RunState::Timeout: return "time_limit";
    case cluster::RunState::Hang: return "hang";
    default: return "";
  }
}

// What a log shows of a run the scheduler ended: the other ranks' NCCL
// errors after a node died, the launcher's report of killed tasks, a
// traceback of the SIGTERM. Not a cause of its own.
bool consequence_class(const std::string& c) {
  return c.empty() || c == "unknown" || c == "nccl_error" || c == "nccl_timeout" || c == "python_error";
}

// A run that did not complete: the scheduler's word for why wins over the
// consequences the log shows, and stands alone when the framework printed
// nothing (then the evidence is the scheduler's reason).
void take_scheduler_word(const cluster::RunStatus& status, RunMeasure& m) {
  const std::string said = scheduler_class(status.state);
  if (!said.empty() && consequence_class(m.failure)) {
    if (m.failure != said) m.evidence = status.reason.empty() ? "the scheduler reports " + m.state : status.reason;
    m.failure = said;
    return;
  }
  if (m.failure.empty()) {
    m.failure = m.state;
    m.evidence = status.reason;
  }
}

}  // namespace

RunMeasure measure_of(const DirectoryRunResult& r, const AcceptanceRule& rule) {
  RunMeasure m;
  m.state = cluster::to_string(r.status.state);
  m.gpu_hours = r.gpu_hours;
  m.elapsed_s = r.status.elapsed_s;
  m.interrupted = r.status.state == cluster::RunState::Cancelled && r.status.reason == "interrupted";
  const diagnose::Diagnosis* d = r.diagnosis ? &*r.diagnosis : nullptr;
  if (d) {
    if (d->tokens_per_s_per_gpu) m.tokens = *d->tokens_per_s_per_gpu;
    if (d->step_time_s) m.step_time_s = *d->step_time_s;
    m.peak_reserved_gib = d->peak_reserved_gib;
    m.headroom_gib = d->headroom_gib;
    m.loss = d->loss;
    m.blocks = block_throughputs(d->steady_step_times_s, m.tokens, rule.blocks_per_run);
    if (d->failure) {
      m.failure = diagnose::to_string(d->failure->kind);
      m.evidence = d->failure->evidence;
    }
  }
  const bool completed = r.status.state == cluster::RunState::Completed;
  if (!completed) take_scheduler_word(r.status, m);
  m.ok = completed && m.failure.empty() && m.tokens > 0;
  if (completed && m.failure.empty() && m.tokens <= 0) {
    m.failure = "unknown";
    m.evidence = "the log gives no throughput";
  }
  return m;
}

}  // namespace attune::campaign
