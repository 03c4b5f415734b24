#include "attune/cluster/slurm/slurm_state.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace attune::cluster {

namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<long long> to_int(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// The first `n - 1` '|'-separated fields and then the rest of the line as the
// last one (it may hold '|' itself). nullopt if there are fewer than n fields.
std::optional<std::vector<std::string_view>> split_fields(std::string_view line, std::size_t n) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < n) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    fields.push_back(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  fields.push_back(line);
  return fields;
}

// The first word of a state: "CANCELLED by 0" -> "CANCELLED", "CANCELLED+" -> "CANCELLED".
std::string_view state_word(std::string_view state) {
  state = trim(state);
  const auto end = state.find_first_of(" +");
  return state.substr(0, end);
}

struct StateEntry {
  std::string_view name;
  RunState state;
};

// Slurm 22.05's job states (squeue %T / sacct State long names).
constexpr StateEntry kStates[] = {
    {"PENDING", RunState::Pending},
    {"CONFIGURING", RunState::Pending},    // nodes being readied: not yet running
    {"REQUEUED", RunState::Pending},       // back in the queue
    {"REQUEUE_HOLD", RunState::Pending},
    {"REQUEUE_FED", RunState::Pending},
    {"RESV_DEL_HOLD", RunState::Pending},
    {"RUNNING", RunState::Running},
    {"COMPLETING", RunState::Running},     // processes being cleaned up: not final yet
    {"SUSPENDED", RunState::Running},      // holds its nodes
    {"RESIZING", RunState::Running},
    {"STOPPED", RunState::Running},
    {"SIGNALING", RunState::Running},
    {"STAGE_OUT", RunState::Running},
    {"COMPLETED", RunState::Completed},
    {"FAILED", RunState::Failed},
    {"SPECIAL_EXIT", RunState::Failed},
    {"CANCELLED", RunState::Cancelled},
    {"REVOKED", RunState::Cancelled},
    {"TIMEOUT", RunState::Timeout},
    {"DEADLINE", RunState::Timeout},
    {"NODE_FAIL", RunState::NodeFail},
    {"BOOT_FAIL", RunState::NodeFail},
    {"OUT_OF_MEMORY", RunState::OutOfMemory},
    {"PREEMPTED", RunState::Preempted},
};

const StateEntry* find_state(std::string_view state) {
  const std::string_view word = state_word(state);
  for (const auto& e : kStates) {
    if (e.name == word) return &e;
  }
  return nullptr;
}

template <typename Parse>
std::optional<SlurmJobInfo> last_matching(std::string_view out, std::string_view job_id, Parse parse) {
  std::optional<SlurmJobInfo> found;
  for (const std::string_view line : lines_of(out)) {
    if (trim(line).empty()) continue;
    auto info = parse(line);
    if (info && info->job_id == job_id) found = std::move(info);
  }
  return found;
}

}  // namespace

RunState run_state_from_slurm(std::string_view state) {
  const StateEntry* e = find_state(state);
  return e != nullptr ? e->state : RunState::Failed;
}

bool is_known_slurm_state(std::string_view state) { return find_state(state) != nullptr; }

std::optional<double> parse_slurm_duration(std::string_view text) {
  text = trim(text);
  long long days = 0;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    const auto d = to_int(text.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    text.remove_prefix(dash + 1);
  }
  std::vector<long long> parts;
  while (true) {
    const auto colon = text.find(':');
    const auto v = to_int(text.substr(0, colon));
    if (!v) return std::nullopt;
    parts.push_back(*v);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  long long seconds = 0;
  if (parts.size() == 3) {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else if (parts.size() == 2) {
    // "M:SS"; with days Slurm always prints hours ("1-02:03:04")
    if (days != 0) return std::nullopt;
    seconds = parts[0] * 60 + parts[1];
  } else {
    return std::nullopt;
  }
  return static_cast<double>(days * 86400 + seconds);
}

std::string slurm_exit_code_from_wait_status(std::string_view status) {
  const auto v = to_int(trim(status));
  if (!v) return "";
  const long long s = *v;
  return fmt::format("{}:{}", (s >> 8) & 0xff, s & 0x7f);
}

std::optional<std::string> parse_sbatch_job_id(std::string_view out) {
  std::string_view last;
  for (const std::string_view line : lines_of(out)) {
    if (!trim(line).empty()) last = trim(line);
  }
  const std::string_view id = last.substr(0, last.find(';'));
  if (!all_digits(id)) return std::nullopt;
  return std::string(id);
}

namespace {

// Which column holds which field, per source; -1: the source has none.
struct Columns {
  int job_id, state, elapsed, start, end, exit_code, nodes, reason;
};

std::optional<SlurmJobInfo> job_info(std::string_view line, std::size_t count, const Columns& c) {
  const auto f = split_fields(line, count);
  if (!f) return std::nullopt;
  const auto field = [&](int i) { return i < 0 ? std::string() : std::string(trim((*f)[static_cast<std::size_t>(i)])); };
  SlurmJobInfo info;
  info.job_id = field(c.job_id);
  info.state = field(c.state);
  info.elapsed_s = parse_slurm_duration((*f)[static_cast<std::size_t>(c.elapsed)]).value_or(0);
  info.start = field(c.start);
  info.end = field(c.end);
  info.exit_code = field(c.exit_code);
  info.nodes = field(c.nodes);
  info.reason = field(c.reason);
  return info;
}

}  // namespace

std::optional<SlurmJobInfo> parse_squeue_job(std::string_view out, std::string_view job_id) {
  return last_matching(out, job_id, [](std::string_view line) -> std::optional<SlurmJobInfo> {
    if (!line.empty() && line.back() == '|') line.remove_suffix(1);  // the last field's suffix
    auto info = job_info(line, 8, {0, 1, 2, 3, 4, 5, 6, 7});
    // squeue's exit_code is a raw wait status ("768" for 3:0).
    if (info) info->exit_code = slurm_exit_code_from_wait_status(info->exit_code);
    return info;
  });
}

std::optional<SlurmJobInfo> parse_sacct_job(std::string_view out, std::string_view job_id) {
  return last_matching(out, job_id, [](std::string_view line) { return job_info(line, 8, {0, 1, 3, 4, 5, 2, 6, 7}); });
}

std::optional<SlurmJobInfo> parse_sacct_jobcomp_job(std::string_view out, std::string_view job_id) {
  return last_matching(out, job_id, [](std::string_view line) { return job_info(line, 7, {0, 1, 3, 4, 5, 2, 6, -1}); });
}

std::vector<std::string> parse_job_ids_named(std::string_view out, std::string_view name) {
  std::vector<std::string> ids;
  for (const std::string_view line : lines_of(out)) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    const std::string_view id = trim(line.substr(0, bar));
    if (!all_digits(id)) continue;
    if (line.substr(bar + 1) != name) continue;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.emplace_back(id);
  }
  return ids;
}

std::optional<std::string> newest_job_id(const std::vector<std::string>& ids) {
  std::optional<std::string> best;
  long long best_value = -1;
  for (const auto& id : ids) {
    const auto v = to_int(id);
    if (v && *v > best_value) {
      best_value = *v;
      best = id;
    }
  }
  return best;
}

RunStatus run_status_from_slurm(const SlurmJobInfo& job, double time_scale) {
  if (!(time_scale > 0)) time_scale = 1;
  RunStatus s;
  const StateEntry* e = find_state(job.state);
  s.state = e != nullptr ? e->state : RunState::Failed;
  s.elapsed_s = s.state == RunState::Pending ? 0 : job.elapsed_s * time_scale;
  if (s.state == RunState::Running) return s;
  std::string reason = job.state.empty() ? "state unknown" : job.state;
  if (!job.reason.empty() && job.reason != "None") reason += " " + job.reason;
  const std::string_view word = state_word(job.state);
  const bool wants_exit = e == nullptr || word == "FAILED" || word == "OUT_OF_MEMORY";
  if (wants_exit && !job.exit_code.empty()) reason += " " + job.exit_code;
  s.reason = std::move(reason);
  return s;
}

std::string explain_sbatch_refusal(std::string_view stderr_text, const SbatchJob& job, std::string_view cluster) {
  const SbatchRequest& r = job.request;
  std::vector<std::string_view> lines;
  for (const std::string_view line : lines_of(stderr_text)) {
    if (!trim(line).empty()) lines.push_back(trim(line));
  }
  const std::string last = lines.empty() ? std::string("sbatch printed nothing") : std::string(lines.back());
  const auto has = [&](std::string_view needle) { return stderr_text.find(needle) != std::string_view::npos; };
  const std::string part =
      r.partition.empty() ? std::string("the default partition") : fmt::format("partition '{}'", r.partition);
  const std::string gpus = r.gpu.empty() ? fmt::format("{} GPUs", r.gpus_per_node)
                                         : fmt::format("{} GPUs of type '{}'", r.gpus_per_node, r.gpu);
  const std::string feature =
      !r.constraint.empty() && r.constraint != r.gpu ? fmt::format(" with feature '{}'", r.constraint) : "";

  std::string what;
  if (has("invalid partition specified") || has("Invalid partition name specified")) {
    std::string name = r.partition;
    constexpr std::string_view kPrefix = "invalid partition specified: ";
    if (const auto p = stderr_text.find(kPrefix); p != std::string_view::npos && name.empty())
      name = std::string(trim(lines_of(stderr_text.substr(p + kPrefix.size())).front()));
    what = fmt::format("partition '{}' does not exist on cluster '{}'", name, cluster);
  } else if (has("Requested node configuration is not available")) {
    if (r.nodes <= 1) {
      what = fmt::format("no node in {} has {} per node{} (gpus_per_node / gpu / constraint)", part, gpus, feature);
    } else {
      what = fmt::format("{} has no {} nodes with {} per node{} (nodes / gpus_per_node / gpu / constraint)", part,
                         r.nodes, gpus, feature);
    }
  } else if (has("Invalid account")) {
    what = r.account.empty()
               ? fmt::format("the default account may not use {} on cluster '{}' (account)", part, cluster)
               : fmt::format("account '{}' does not exist on cluster '{}' or may not use {}", r.account, cluster,
                             part);
  } else if (has("Invalid qos")) {
    what = r.qos.empty() ? fmt::format("the default qos is not allowed on cluster '{}' (qos)", cluster)
                         : fmt::format("qos '{}' does not exist on cluster '{}' or is not allowed for the account",
                                       r.qos, cluster);
  } else if (has("Node count specification invalid")) {
    what = fmt::format("nodes: {} does not allow {} node{}", part, r.nodes, r.nodes == 1 ? "" : "s");
  } else if (has("Requested time limit is invalid")) {
    what = fmt::format("time limit: {} minute{} is more than {} allows", r.time_minutes,
                       r.time_minutes == 1 ? "" : "s", part);
  } else if (has("Invalid feature specification")) {
    what = !r.gpu.empty() && r.constraint == r.gpu
               ? fmt::format("gpu '{}' is not a feature of any node in {} (gpu / constraint)", r.gpu, part)
               : fmt::format("constraint '{}' is not a feature of any node in {} (constraint / gpu)", r.constraint,
                             part);
  } else if (has("Invalid generic resource")) {
    what = fmt::format("gpu '{}' is not a generic resource of cluster '{}' (gpu / gpus_per_node: {})", r.gpu,
                       cluster, r.gpus_per_node);
  } else {
    // Not a refusal we know: sbatch's own text, all but the last line (which follows).
    std::string text;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      if (!text.empty()) text += "; ";
      text += lines[i];
    }
    if (text.empty()) return last;
    return text + " (" + last + ")";
  }
  return what + " (" + last + ")";
}

}  // namespace attune::cluster
