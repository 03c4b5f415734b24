// Megatron-LM parser: the per-iteration line (current, 2024 and <=2023
// layouts), the "[Rank r] (after N iterations) memory (MB)" report, checkpoint
// saves, evaluations and the timer blocks (both layouts).
#include <cctype>
#include <string>

#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// Reads digits at i into v; returns the index after them (i if none).
std::size_t read_long(std::string_view s, std::size_t i, long& v) {
  auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  return ec == std::errc() && is_sane_count(v) ? static_cast<std::size_t>(p - s.data()) : i;
}

// Finds "iteration <N>/ <M> |" and returns the index after the '|' (npos if
// absent). The '/' rules out "validation loss at iteration N |".
std::size_t iteration_header(std::string_view text, long& it) {
  std::size_t pos = 0;
  while ((pos = text.find("iteration", pos)) != npos) {
    pos += 9;
    std::size_t i = skip_blanks(text, pos);
    std::size_t j = read_long(text, i, it);
    if (j == i) continue;
    j = skip_blanks(text, j);
    if (j >= text.size() || text[j] != '/') continue;
    long total = 0;
    std::size_t k = skip_blanks(text, j + 1);
    std::size_t l = read_long(text, k, total);
    if (l == k) continue;
    l = skip_blanks(text, l);
    if (l < text.size() && text[l] == '|') return l + 1;
  }
  return npos;
}

// Loss keys other than "lm loss" that are auxiliary terms, not the training loss.
bool is_auxiliary_loss(std::string_view key) {
  return contains(key, "balanc") || contains(key, "mtp") || contains(key, "aux") ||
         contains(key, "z_loss") || contains(key, "z loss");
}

struct LossState {
  bool have_lm = false;   // "lm loss" outranks other loss keys
  bool any_loss = false;  // some loss field was printed (even nan)
};

void apply_loss(std::string_view key, std::string_view val, StepSample& s, LossState& ls) {
  if (key == "lm loss") {
    ls.have_lm = ls.any_loss = true;
    s.loss_is_nan = false;
    s.loss.reset();
    read_loss(val, s);
  } else if (!ls.have_lm && !ls.any_loss && !is_auxiliary_loss(key)) {
    ls.any_loss = true;
    read_loss(val, s);
  }
}

enum class IterationKey { None, StepTime, StepTimeSeconds, Tflops, Lr, GlobalBatch, GradNorm, Skipped, NanIters, SamplesPerS, Tgs, TflopsDs };

// The key of an iteration-line field. Keys are looked up by length first: a
// line has a dozen fields and a log has millions of lines.
IterationKey iteration_key(std::string_view key) {
  switch (key.size()) {
    case 6: return key == "TFLOPs" ? IterationKey::TflopsDs : IterationKey::None;
    case 9: return key == "grad norm" ? IterationKey::GradNorm : IterationKey::None;
    case 13: return key == "learning rate" ? IterationKey::Lr : IterationKey::None;
    case 17: return key == "global batch size" ? IterationKey::GlobalBatch : IterationKey::None;
    case 18: return key == "samples per second" ? IterationKey::SamplesPerS : IterationKey::None;
    case 24: return key == "number of nan iterations" ? IterationKey::NanIters : IterationKey::None;
    case 28: return key == "number of skipped iterations" ? IterationKey::Skipped : IterationKey::None;
    // Megatron-DeepSpeed's BigScience fork prints seconds (megatron/training.py training_log).
    case 30: return key == "elapsed time per iteration (s)" ? IterationKey::StepTimeSeconds : IterationKey::None;
    case 31:
      if (key == "elapsed time per iteration (ms)") return IterationKey::StepTime;
      return key == "tokens per gpu per second (tgs)" ? IterationKey::Tgs : IterationKey::None;
    case 32: return key == "throughput per GPU (TFLOP/s/GPU)" ? IterationKey::Tflops : IterationKey::None;
    default: return IterationKey::None;
  }
}

void apply_iteration_field(std::string_view key, std::string_view val, StepSample& s,
                           LossState& ls) {
  switch (iteration_key(key)) {
    case IterationKey::StepTime:
      if (auto v = to_double(val)) s.step_time_s = *v / 1000.0;
      return;
    case IterationKey::StepTimeSeconds: s.step_time_s = to_double(val); return;
    case IterationKey::Tflops:
      s.tflops_per_gpu = to_double(val);
      s.tflops_formula = LoggedFlops::Megatron;
      return;
    case IterationKey::Lr: s.lr = to_double(val); return;
    case IterationKey::GlobalBatch: s.global_batch = to_long(val); return;
    case IterationKey::GradNorm: s.grad_norm = to_double(val); return;  // kept even when nan: it is what the log says
    case IterationKey::Skipped: s.skipped_iterations = to_long(val); return;
    case IterationKey::NanIters: s.nan_iterations = to_long(val); return;
    case IterationKey::SamplesPerS: s.samples_per_s = to_double(val); return;  // Megatron-DeepSpeed extras
    case IterationKey::Tgs: s.tokens_per_s_per_gpu = to_double(val); return;
    case IterationKey::TflopsDs:
      if (!s.tflops_per_gpu) {
        s.tflops_per_gpu = to_double(val);
        s.tflops_formula = LoggedFlops::MegatronDeepSpeed;
      }
      return;
    case IterationKey::None:
      if (key.ends_with("loss")) apply_loss(key, val, s, ls);
      return;
  }
}

}  // namespace

bool parse_megatron_iteration(std::string_view text, StepSample& s) {
  long it = 0;
  std::size_t body = iteration_header(text, it);
  if (body == npos) return false;
  s.step = it;
  LossState ls;
  for_each_field(text.substr(body), ':', [&](std::string_view k, std::string_view v) {
    apply_iteration_field(k, v, s, ls);
  });
  // Megatron prints a loss only if its average is >= 0, so a NaN loss makes
  // the field vanish; the nan-iteration count tells that apart (Megatron counts NaN iterations on every log line).
  if (!ls.any_loss && s.nan_iterations.value_or(0) > 0) s.loss_is_nan = true;
  return true;
}

namespace {

void apply_memory_field(std::string_view key, std::string_view val, double to_gib,
                        MemoryReport& m) {
  auto v = to_double(val);
  if (!v) return;
  double gib = *v * to_gib;
  if (key == "allocated" || key == "mem-allocated-gigabytes") {
    m.allocated = gib;
  } else if (key == "max allocated" || key == "mem-max-allocated-gigabytes") {
    m.max_allocated = gib;
  } else if (key == "reserved" || key == "mem-reserved-gigabytes") {
    m.reserved = gib;
  } else if (key == "max reserved" || key == "mem-max-reserved-gigabytes") {
    m.max_reserved = gib;
  }
}

std::optional<long> after_iterations(std::string_view text) {
  std::size_t p = text.find("(after ");
  if (p == npos) return std::nullopt;
  long it = 0;
  std::size_t i = p + 7;
  std::size_t j = read_long(text, i, it);
  if (j == i || text.substr(j).rfind(" iterations)", 0) != 0) return std::nullopt;
  return it;
}

void merge_max(MemoryReport& into, const MemoryReport& m) {
  max_into(into.allocated, m.allocated);
  max_into(into.max_allocated, m.max_allocated);
  max_into(into.reserved, m.reserved);
  max_into(into.max_reserved, m.max_reserved);
}

void put_memory(const MemoryReport& m, StepSample& s) {
  max_into(s.mem_allocated_gib, m.allocated);
  max_into(s.mem_max_allocated_gib, m.max_allocated);
  max_into(s.mem_reserved_gib, m.reserved);
  max_into(s.mem_max_reserved_gib, m.max_reserved);
}

}  // namespace

std::optional<MemoryReport> parse_megatron_memory(std::string_view text) {
  double to_gib = 0;
  std::size_t p = text.find("memory (MB)");
  if (p != npos) {
    to_gib = 1.0 / kMiB_per_GiB;  // Megatron's MB are 2^20 bytes
  } else if ((p = text.find("memory (GB)")) != npos) {
    to_gib = kGB_to_GiB;  // Bridge's GB are 1e9 bytes
  } else {
    return std::nullopt;
  }
  MemoryReport m;
  m.after_iteration = after_iterations(text.substr(0, p));
  for_each_field(text.substr(p + 11), ':', [&](std::string_view k, std::string_view v) {
    apply_memory_field(k, v, to_gib, m);
  });
  if (!m.allocated && !m.max_allocated && !m.reserved && !m.max_reserved) return std::nullopt;
  return m;
}

bool TimerLines::feed(std::string_view text, TimerTable& table) {
  if (contains(text, " across ranks (ms):")) {  // "(min, max) time", "max time", "times"
    table.begin_report();
    in_block_ = true;
    rank_phase_.clear();
    return true;
  }
  std::size_t at = text.find("time (ms) |");
  if (at != npos) {
    in_block_ = false;
    table.begin_report();
    for_each_field(text.substr(at + 11), ':', [&](std::string_view k, std::string_view v) {
      if (auto ms = to_double(v)) table.add(k, *ms, *ms);
    });
    return true;
  }
  return in_block_ && feed_block_line(text, table);
}

// "    forward-backward ......: (5164.84, 5177.15)", "    name ......: 5177.15",
// "  name:" and "     rank  0: 5164.84"; anything else ends the block.
bool TimerLines::feed_block_line(std::string_view text, TimerTable& table) {
  std::string_view t = trim(text);
  std::size_t colon = t.rfind(':');
  if (colon == npos || colon == 0) {
    in_block_ = false;
    return false;
  }
  std::string_view name = trim(t.substr(0, colon));
  std::string_view value = trim(t.substr(colon + 1));
  if (value.empty() && name.find(' ') == npos) {  // "all" layout: per-rank lines follow
    rank_phase_.assign(name);
    return true;
  }
  if (name.starts_with("rank ") && !rank_phase_.empty()) {
    if (auto ms = to_double(value)) table.add(rank_phase_, *ms, *ms);
    return true;
  }
  while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.remove_suffix(1);
  if (name.empty() || name.size() == trim(t.substr(0, colon)).size()) {  // no dot leader: not a timer
    in_block_ = false;
    return false;
  }
  if (value.front() == '(') {
    std::size_t comma = value.find(',');
    auto lo = to_double(value.substr(1));
    auto hi = comma == npos ? std::nullopt : to_double(value.substr(comma + 1));
    if (lo && hi) table.add(name, *lo, *hi);
  } else if (auto ms = to_double(value)) {
    table.add(name, *ms, *ms);
  }
  return true;
}

int MegatronLines::detect(std::string_view text) {
  int score = 0;
  if (contains(text, "| consumed samples:")) score += 5;
  if (contains(text, "elapsed time per iteration (ms)") || contains(text, "elapsed time per iteration (s)")) score += 5;
  if (contains(text, "memory (MB) | allocated:")) score += 5;
  if (contains(text, "time across ranks (ms)") || contains(text, "time (ms) | forward-compute"))
    score += 3;
  return score;
}

void MegatronLines::attach_memory(const MemoryReport& m, ParseSink& sink) {
  max_into(sink.peak_mem_allocated_gib, m.max_allocated ? m.max_allocated : m.allocated);
  max_into(sink.peak_mem_reserved_gib, m.max_reserved ? m.max_reserved : m.reserved);
  if (!m.after_iteration) return;  // around checkpoint saves: peaks only
  if (!sink.samples.empty() && sink.samples.back().step == *m.after_iteration) {
    put_memory(m, sink.samples.back());
    return;
  }
  // Reported by another rank than the iteration line: it may come first.
  if (pending_ && pending_->after_iteration == m.after_iteration) {
    merge_max(*pending_, m);
  } else {
    pending_ = m;
  }
}

void MegatronLines::add_iteration(StepSample s, long line, ParseSink& sink) {
  s.line = line;
  s.steps_in_interval = steps_.interval(s.step);
  if (pending_ && pending_->after_iteration == s.step) put_memory(*pending_, s);
  if (pending_ && pending_->after_iteration <= s.step) pending_.reset();
  sink.samples.push_back(std::move(s));
}

// A record hard-wrapped by whatever copied the log, at its own width (not
// always 80 columns): every iteration line has its elapsed time, so one
// without it is held, and the lines that go on with its words (they start
// in lower case or a digit, a new record with its timestamp or a space) are
// appended until the record ends in its closing '|'. A word cut at the wrap
// stays cut ("number of s kipped"): that field is then not read at all.
bool MegatronLines::continue_wrapped(std::string_view t, ParseSink& sink) {
  const bool goes_on = !t.empty() && (std::islower(static_cast<unsigned char>(t.front())) ||
                                      std::isdigit(static_cast<unsigned char>(t.front())));
  if (!goes_on || wrapped_parts_ >= 4) {
    flush_wrapped(sink);
    return false;
  }
  wrapped_.push_back(' ');
  wrapped_.append(t);
  ++wrapped_parts_;
  if (contains(wrapped_, "elapsed time per iteration") && trim(wrapped_).ends_with('|')) flush_wrapped(sink);
  return true;
}

void MegatronLines::flush_wrapped(ParseSink& sink) {
  if (wrapped_.empty()) return;
  StepSample s;
  if (parse_megatron_iteration(wrapped_, s)) add_iteration(std::move(s), wrapped_line_, sink);
  wrapped_.clear();
  wrapped_parts_ = 0;
}

bool MegatronLines::feed(const LogLine& line, ParseSink& sink) {
  std::string_view t = line.text;
  if (!wrapped_.empty() && continue_wrapped(t, sink)) return true;
  // Iteration lines are most of a log: try them before the keyword scans.
  StepSample s;
  if (parse_megatron_iteration(t, s)) {
    if (!contains(t, "elapsed time per iteration")) {
      wrapped_.assign(t);
      wrapped_line_ = line.line;
      wrapped_parts_ = 1;
      return true;
    }
    add_iteration(std::move(s), line.line, sink);
    return true;
  }
  if (timers_.feed(t, sink.timers)) return true;
  if (contains(t, "saving checkpoint at iteration")) {
    add_disturbance(sink, Disturbance::Kind::Checkpoint, line);
    return true;
  }
  if (contains(t, "validation loss at") || contains(t, " loss at iteration")) {
    add_disturbance(sink, Disturbance::Kind::Evaluation, line);
    return true;
  }
  if (auto m = parse_megatron_memory(t)) {
    attach_memory(*m, sink);
    return true;
  }
  return generic_disturbance(line, sink);
}

namespace {

class MegatronParser : public LogParser {
 public:
  std::string framework() const override { return "megatron"; }
  int detect(std::string_view line) const override { return MegatronLines::detect(line); }
  void feed(const LogLine& line, ParseSink& sink) override { lines_.feed(line, sink); }
  void finish(ParseSink& sink) override { lines_.flush_wrapped(sink); }

 private:
  MegatronLines lines_;
};

}  // namespace

std::unique_ptr<LogParser> make_megatron_parser() { return std::make_unique<MegatronParser>(); }

}  // namespace attune::diagnose::detail
