#include "attune/diagnose/failure_classifier.h"
#include "attune/util/text.h"

#include <bitset>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>

namespace attune::diagnose {
namespace {

constexpr std::size_t kMaxEvidence = 300;
constexpr long kHangSilenceLines = 50;  // no step line this long before a timeout = hang
constexpr int kOverflowsForNan = 16;    // 2^16 initial loss scale halved down to 1

bool contains_any(std::string_view s, std::initializer_list<std::string_view> what) {
  for (std::string_view w : what) {
    if (contains(s, w)) return true;
  }
  return false;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// True when a value "nan"/"inf" (any case) follows `key` and spaces somewhere in s.
bool nonfinite_after(std::string_view s, std::string_view key) {
  for (std::size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
    std::string_view v = trim_left(s.substr(at + key.size()));
    if (v.size() < 3 || (v.size() > 3 && is_alnum(v[3]))) continue;
    char low[3];
    for (int i = 0; i < 3; ++i) low[i] = static_cast<char>(v[i] | 0x20);  // ASCII lower case
    const std::string_view word(low, 3);
    if (word == "nan" || word == "inf") return true;
  }
  return false;
}

// The integer after `key` (spaces allowed), or -1.
long int_after(std::string_view s, std::string_view key) {
  const std::size_t at = s.find(key);
  if (at == std::string_view::npos) return -1;
  std::string_view v = trim_left(s.substr(at + key.size()));
  if (v.empty() || !is_digit(v.front())) return -1;
  long n = 0;
  for (std::size_t i = 0; i < v.size() && is_digit(v[i]) && n < 1000000000; ++i) {
    n = n * 10 + (v[i] - '0');
  }
  return n;
}

// torchrun "exitcode : -9" / "exitcode: -9": the task was sent SIGKILL.
bool is_sigkill_exit(std::string_view s) {
  if (contains(s, "Signal 9 (SIGKILL)")) return true;
  const std::size_t at = s.find("exitcode");
  if (at == std::string_view::npos) return false;
  std::string_view v = trim_left(s.substr(at + 8));
  if (v.empty() || v.front() != ':') return false;
  v = trim_left(v.substr(1));
  return v.substr(0, 2) == "-9" && (v.size() == 2 || !is_digit(v[2]));
}

// "XxxError: msg" / "pkg.XxxError" at the start of a line: the exception name, or "".
std::string_view exception_name(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && (is_alnum(s[n]) || s[n] == '.')) ++n;
  const std::string_view name = s.substr(0, n);
  if (n < s.size() && s[n] != ':') return {};
  if (!ends_with(name, "Error") && !ends_with(name, "Exception")) return {};
  return name;
}

std::string truncate_evidence(std::string_view s) {
  if (s.size() <= kMaxEvidence) return std::string(s);
  std::size_t n = kMaxEvidence;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // keep UTF-8 whole
  return std::string(s.substr(0, n));
}

// A whole word "nan" or "inf" (any case), not counting Megatron's
// "nan iterations:   0", which every healthy step line prints.
bool has_nonfinite_word(std::string_view s) {
  for (std::size_t i = 0; i + 3 <= s.size(); ++i) {
    const char c = static_cast<char>(s[i] | 0x20);
    if (c != 'n' && c != 'i') continue;
    if (i > 0 && is_alnum(s[i - 1])) continue;
    if (i + 3 < s.size() && is_alnum(s[i + 3])) continue;
    char low[3] = {c, static_cast<char>(s[i + 1] | 0x20), static_cast<char>(s[i + 2] | 0x20)};
    const std::string_view word(low, 3);
    if (word != "nan" && word != "inf") continue;
    if (s.substr(i, 15) == "nan iterations:" && int_after(s.substr(i), "nan iterations:") == 0) continue;
    return true;
  }
  return false;
}

// Cheap test that a line may carry a failure signature at all: every matcher
// below needs one of these words. One pass looks up each 4-byte window in a
// bitmap of the anchors' first four bytes, so the lines of a healthy run
// (step lines, info) cost about a byte a cycle and skip the full matchers.
class AnchorFilter {
 public:
  AnchorFilter() {
    for (std::string_view a : kAnchors) bits_[slot(word(a.data()))] = true;
  }

  bool any(std::string_view s) const {
    for (std::size_t i = 0; i + 4 <= s.size(); ++i) {
      if (!bits_[slot(word(s.data() + i))]) continue;
      for (std::string_view a : kAnchors) {
        if (s.compare(i, a.size(), a) == 0) return true;
      }
    }
    return false;
  }

 private:
  static constexpr std::string_view kAnchors[] = {
      "rror",     "memory",   "Watchdog",  "NCCL",     "nccl",     "Connection", "DUE TO",
      "Signal 9", "exitcode", "Traceback", "File \"", "xception", "OVERFLOW",   "Unexpected result",
      "loss scale already", "not found", "Killed", "Killing", "Segmentation fault", "SIGSEGV", ".py\", line",
      "<module>", "assert ", "skipped=", "Error executing job", "NVRM", "oom_kill", "oom-kill", "watchdog got"};

  static std::uint32_t word(const char* p) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  }
  static std::size_t slot(std::uint32_t w) { return (w * 2654435761u) >> 16; }

  std::bitset<65536> bits_;
};

bool may_signal(std::string_view s) {
  static const AnchorFilter filter;
  return filter.any(s) || has_nonfinite_word(s);
}

// A frame in argument parsing or validation: an assertion there is a bad setting.
bool is_config_frame(std::string_view frame) {
  return contains_any(frame, {"arguments.py", "training_args.py", "validate_args", "__post_init__", "parse_args"});
}

Failure make_failure(FailureKind kind, const LogLine& line) {
  return Failure{kind, line.line, truncate_evidence(line.text), line.rank};
}

void keep_earliest(std::optional<Failure>& slot, Failure f) {
  if (!slot || f.line < slot->line) slot = std::move(f);
}

// Tiers from root cause to consequence; inside a tier the earliest line wins.
// Unknown pads the shorter tiers.
constexpr std::array<std::array<FailureKind, 5>, 5> kTiers = {{
    {FailureKind::Oom, FailureKind::IllegalMemoryAccess, FailureKind::InvalidArgument,
     FailureKind::ImportError, FailureKind::CommandNotFound},
    {FailureKind::NodeFailure, FailureKind::TimeLimit, FailureKind::Unknown, FailureKind::Unknown,
     FailureKind::Unknown},
    {FailureKind::Nan, FailureKind::Unknown, FailureKind::Unknown, FailureKind::Unknown, FailureKind::Unknown},
    {FailureKind::Hang, FailureKind::NcclTimeout, FailureKind::NcclError, FailureKind::Unknown,
     FailureKind::Unknown},
    {FailureKind::PythonError, FailureKind::Unknown, FailureKind::Unknown, FailureKind::Unknown,
     FailureKind::Unknown},
}};

}  // namespace

void FailureClassifier::record(FailureKind kind, const LogLine& line) {
  keep_earliest(first_[static_cast<std::size_t>(kind)], make_failure(kind, line));
}

void FailureClassifier::note_step(long line) {
  if (line > last_step_line_) last_step_line_ = line;
}

void FailureClassifier::feed_step(const LogLine& line, const StepSample& sample) {
  note_step(line.line);
  const bool nan = sample.loss_is_nan || (sample.loss && !std::isfinite(*sample.loss)) ||
                   (sample.grad_norm && !std::isfinite(*sample.grad_norm)) ||
                   sample.nan_iterations.value_or(0) > 0;
  if (nan) record(FailureKind::Nan, line);
  // Text glued after a progress bar the step parser read
  // ("...2.43s/it, loss=9.1]Error executing job"): scan what follows the bar.
  std::size_t rate = line.text.find("it/s");
  if (rate == std::string_view::npos) rate = line.text.find("s/it");
  const std::size_t close = rate == std::string_view::npos ? rate : line.text.find(']', rate);
  if (close != std::string_view::npos && close + 1 < line.text.size()) {
    const std::string_view rest = trim(line.text.substr(close + 1));
    if (!rest.empty()) feed(LogLine{rest, line.line, line.rank});
  }
}

void FailureClassifier::feed(const LogLine& line) {
  if (line.text.empty() || !may_signal(line.text)) return;
  if (match_cuda(line) || match_nccl(line) || match_cluster(line) || match_nan(line)) return;
  match_python(line);
}

bool FailureClassifier::match_cuda(const LogLine& line) {
  const std::string_view s = line.text;
  // NCCL's own allocation failing ("NCCL WARN Cuda failure 2 'out of memory'") and
  // the kernel's OOM killer ("Out of memory: Killed process N (python)") are OOMs too.
  if (contains_any(s, {"CUDA out of memory", "OutOfMemoryError:", "Cuda failure 2 'out of memory'",
                       "Cuda failure 'out of memory'"}) ||
      (contains(s, "Out of memory: Kill") && contains(s, "process"))) {
    record(FailureKind::Oom, line);
    return true;
  }
  if (contains(s, "illegal memory access was encountered")) {
    record(FailureKind::IllegalMemoryAccess, line);
    return true;
  }
  // The GPU itself failing: an uncorrectable ECC error, the driver's Xid
  // report (dmesg), or the CUDA runtime's "unknown error" that a GPU fallen
  // off the bus gives. Not the recipe's doing: the node is.
  if (contains_any(s, {"uncorrectable ECC error", "cudaErrorECCUncorrectable", "NVRM: Xid",
                       "CUDA error: unknown error"})) {
    record(FailureKind::NodeFailure, line);
    return true;
  }
  return false;
}

bool FailureClassifier::match_nccl(const LogLine& line) {
  const std::string_view s = line.text;
  // The heartbeat monitor: the watchdog thread itself made no progress for N
  // seconds (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC): a NCCL or CUDA call hung.
  // A collective's own timeout or error elsewhere in the log is the cause.
  if (contains(s, "watchdog got stuck for")) {
    keep_earliest(stuck_, make_failure(FailureKind::Hang, line));
    return true;
  }
  if (contains(s, "Watchdog caught collective operation timeout")) {
    const bool silent = last_step_line_ > 0 && line.line - last_step_line_ > kHangSilenceLines;
    const FailureKind kind = silent ? FailureKind::Hang : FailureKind::NcclTimeout;
    if (kind == FailureKind::NcclTimeout && !first_[static_cast<std::size_t>(kind)]) {
      timeout_ran_for_ms_ = int_after(s, "ran for");
    }
    record(kind, line);
    return true;
  }
  if (contains(s, "ncclRemoteError")) keep_earliest(remote_error_, make_failure(FailureKind::NodeFailure, line));
  if (contains_any(s, {"NCCL error", "ncclSystemError", "ncclRemoteError", "ncclInternalError",
                       "ncclUnhandledCudaError", "ncclInvalidUsage", "ncclInvalidArgument",
                       "Some NCCL operations have failed or timed out", "NET/IB : Got completion from peer"})) {
    record(FailureKind::NcclError, line);
    return true;
  }
  // The heartbeat monitor's store noise says "Connection reset by peer" too,
  // but it belongs to a hang, not to a dead node.
  if (contains(s, "Connection reset by peer") && !contains(s, "exception dump flag")) {
    keep_earliest(conn_reset_, make_failure(FailureKind::NodeFailure, line));
    return true;
  }
  return false;
}

bool FailureClassifier::match_cluster(const LogLine& line) {
  const std::string_view s = line.text;
  // Slurm's cgroup OOM killer, as slurmstepd and srun report it (slurmstepd's
  // "Detected N oom-kill event(s)", newer "oom_kill event(s)"; srun's "task N:
  // Out Of Memory"): the host's memory, killed under the framework, which
  // may print nothing.
  if ((contains(s, "slurmstepd: error: Detected") && contains_any(s, {"oom-kill event", "oom_kill event"})) ||
      (contains(s, "srun: error:") && contains(s, ": Out Of Memory"))) {
    record(FailureKind::Oom, line);
    return true;
  }
  if (contains(s, "srun: error: Node failure on") || contains(s, "DUE TO NODE FAILURE")) {
    record(FailureKind::NodeFailure, line);
    return true;
  }
  // SIGKILL says nothing of who sent it (the OOM killer, the scheduler, a
  // user): a task exit with no cause, unless the log names one elsewhere.
  if (is_sigkill_exit(s)) {
    keep_earliest(task_exit_, make_failure(FailureKind::Unknown, line));
    return true;
  }
  if (contains(s, "CANCELLED AT") && contains(s, "DUE TO TIME LIMIT")) {
    record(FailureKind::TimeLimit, line);
    return true;
  }
  // The shell could not find the launcher or the script's command.
  if (contains(s, ": command not found") || (contains(s, "sh: ") && ends_with(trim(s), ": not found"))) {
    record(FailureKind::CommandNotFound, line);
    return true;
  }
  // A launcher saying a task died (or a process crashing on a signal), with no
  // cause anywhere else in the log.
  if (contains(s, "Exited with exit code") || (contains(s, "srun: error:") && contains(s, "Terminated")) ||
      contains(s, "failed (exitcode") || contains(s, "Signal 11 (SIGSEGV)") ||
      contains(s, "Segmentation fault") || contains(s, "sigkill_handler] Killing subprocess") ||
      contains(s, "Error executing job with overrides")) {
    keep_earliest(task_exit_, make_failure(FailureKind::Unknown, line));
  }
  // A bare "Killed" from the shell: the host's OOM killer, unless a launcher
  // already reported a task exit (then it is the clean-up of the others).
  const std::string_view t = trim(s);
  if (t == "Killed" || ends_with(t, "]Killed")) keep_earliest(killed_, make_failure(FailureKind::Oom, line));
  return false;
}

bool FailureClassifier::match_nan(const LogLine& line) {
  const std::string_view s = line.text;
  const bool nan = contains_any(s, {"ound NaN in", "ound Inf in", "Unexpected result nan",
                                    "Unexpected result inf", "loss scale already at minimum"}) ||
                   nonfinite_after(s, "grad norm:") || nonfinite_after(s, "'grad_norm':") ||
                   nonfinite_after(s, "grad_norm=") ||
                   nonfinite_after(s, "'loss':") || nonfinite_after(s, "loss:") ||
                   int_after(s, "number of nan iterations:") > 0;
  // DeepSpeed's "step=2000, skipped=1995": the fp16 loss scale skipped almost
  // every step, so the gradients are non-finite, not calibrating.
  const long ds_step = int_after(s, "step=");
  const long ds_skipped = int_after(s, "skipped=");
  if (nan || (ds_step >= 100 && ds_skipped * 2 > ds_step)) {
    record(FailureKind::Nan, line);
    return true;
  }
  const std::size_t at = s.find("OVERFLOW! Rank");
  if (at == std::string_view::npos) return false;
  // Overflows are normal while the fp16 loss scale calibrates; only a long run
  // of them (scale driven towards 1) means the loss itself is non-finite.
  const int rank = static_cast<int>(int_after(s.substr(at), "OVERFLOW! Rank"));
  if (!first_overflow_) {
    first_overflow_ = make_failure(FailureKind::Nan, line);
    overflow_rank_ = rank;
  }
  if (rank == overflow_rank_ && ++overflow_count_ == kOverflowsForNan) {
    keep_earliest(first_[static_cast<std::size_t>(FailureKind::Nan)], *first_overflow_);
  }
  return true;
}

void FailureClassifier::match_python(const LogLine& line) {
  const std::string_view s = trim_left(line.text);
  if (contains_any(s, {": error: unrecognized arguments", ": error: argument ",
                       ": error: the following arguments are required"})) {
    record(FailureKind::InvalidArgument, line);
    return;
  }
  if (const std::size_t tb = s.find("Traceback (most recent call last)"); tb != std::string_view::npos) {
    seen_traceback_ = true;
    // A traceback flattened onto one line: its import error is on it too.
    if (contains_any(s.substr(tb), {" ModuleNotFoundError: ", " ImportError: "})) {
      record(FailureKind::ImportError, line);
    }
    return;
  }
  // A frame line (also one cut at its start, or a faulthandler frame): a
  // traceback is under way even when the excerpt lost its first line.
  if (s.rfind("File \"", 0) == 0 || contains(s, ".py\", line ")) {
    seen_traceback_ = true;
    last_frame_[line.rank].assign(s);
    last_frame_line_ = line.line;
    return;
  }
  if (s.rfind("in <module>", 0) == 0) {
    seen_traceback_ = true;
    return;
  }
  // The source line of a failing assert in argument validation, when the
  // excerpt ends before its AssertionError.
  if (s.rfind("assert ", 0) == 0 && last_frame_line_ > 0 && line.line - last_frame_line_ <= 2) {
    const auto frame = last_frame_.find(line.rank);
    const std::string& f = frame != last_frame_.end() ? frame->second : last_frame_.begin()->second;
    if (last_frame_.size() == 1 || frame != last_frame_.end()) {
      if (is_config_frame(f)) pending_assert_ = make_failure(FailureKind::InvalidArgument, line);
    }
    return;
  }
  const std::string_view name = exception_name(s);
  // torchrun's summary that a child died: the cause is the child's own error
  // when the log has it, else unknown (its root-cause block gives an exit
  // code, not a reason). Its qualified name needs no traceback above it.
  if (ends_with(name, "ChildFailedError") && (seen_traceback_ || name.find('.') != std::string_view::npos)) {
    pending_assert_.reset();
    keep_earliest(child_failed_, make_failure(FailureKind::Unknown, line));
    return;
  }
  if (name.empty() || !seen_traceback_) return;
  pending_assert_.reset();
  record(classify_exception(name, s, line.rank), line);
}

FailureKind FailureClassifier::classify_exception(std::string_view name, std::string_view text,
                                                  int rank) const {
  if (ends_with(name, "ModuleNotFoundError") || ends_with(name, "ImportError")) {
    return FailureKind::ImportError;
  }
  // A broken install: "module 'transformer_engine' has no attribute 'pytorch'".
  if (name == "AttributeError" && contains(text, "module '") && contains(text, "has no attribute")) {
    return FailureKind::ImportError;
  }
  const bool config_type = name == "AssertionError" || name == "ValueError" ||
                           name == "RuntimeError" || name == "TypeError";
  if (config_type && contains(text, "divisible")) return FailureKind::InvalidArgument;
  const auto frame = last_frame_.find(rank);
  if (config_type && name != "RuntimeError" && frame != last_frame_.end() &&
      is_config_frame(frame->second)) {
    return FailureKind::InvalidArgument;
  }
  return FailureKind::PythonError;
}

std::optional<Failure> FailureClassifier::result(bool run_ended_early, std::optional<double> step_time_s) const {
  auto first = first_;
  auto& timeout = first[static_cast<std::size_t>(FailureKind::NcclTimeout)];
  if (timeout && step_time_s && *step_time_s > 0 && timeout_ran_for_ms_ > 0 &&
      timeout_ran_for_ms_ / 1000.0 > kHangStepTimes * *step_time_s) {
    Failure hang = *timeout;
    hang.kind = FailureKind::Hang;
    keep_earliest(first[static_cast<std::size_t>(FailureKind::Hang)], std::move(hang));
    timeout.reset();
  }
  if (stuck_ && !first[static_cast<std::size_t>(FailureKind::NcclTimeout)] &&
      !first[static_cast<std::size_t>(FailureKind::NcclError)])
    keep_earliest(first[static_cast<std::size_t>(FailureKind::Hang)], *stuck_);
  std::optional<Failure> node = first[static_cast<std::size_t>(FailureKind::NodeFailure)];
  if (conn_reset_ && remote_error_) {
    keep_earliest(node, *conn_reset_);
    keep_earliest(node, *remote_error_);
  }
  if (pending_assert_) keep_earliest(first[static_cast<std::size_t>(FailureKind::InvalidArgument)], *pending_assert_);
  for (const auto& tier : kTiers) {
    std::optional<Failure> best;
    for (FailureKind k : tier) {
      const bool traceback_only = k == FailureKind::ImportError || k == FailureKind::PythonError;
      if (traceback_only && !run_ended_early) continue;
      if (k == FailureKind::Unknown) continue;
      const auto& slot = k == FailureKind::NodeFailure ? node : first[static_cast<std::size_t>(k)];
      if (slot) keep_earliest(best, *slot);
    }
    if (best) return best;
  }
  if (run_ended_early && child_failed_) return child_failed_;
  if (run_ended_early && killed_ && (!task_exit_ || killed_->line < task_exit_->line)) return killed_;
  if (run_ended_early && task_exit_) return task_exit_;
  return std::nullopt;
}

}  // namespace attune::diagnose
