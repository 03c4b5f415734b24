// torchtitan parser: MetricsProcessor's line
// "step: N  loss: x  grad_norm: x  memory: xGiB(p%)  tps: 1,234  tflops: x  mfu: x%"
// (older versions without grad_norm, "mfu: N/A" under FP8), and the [GC],
// profiler-dump, checkpoint and validation lines that disturb the steps around them.
#include <algorithm>

#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

// Calls f(key, value) for "key: value  key: value" (values are one token).
template <class F>
void for_each_titan_field(std::string_view t, F&& f) {
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t colon = t.find(':', i);
    if (colon == npos) return;
    std::string_view key = trim(t.substr(i, colon - i));
    std::size_t v = colon + 1;
    while (v < t.size() && t[v] == ' ') ++v;
    std::size_t e = t.find(' ', v);
    if (e == npos) e = t.size();
    f(key, t.substr(v, e - v));
    i = e;
  }
}

// "step:" starting a field (after the logging prefix), npos if absent.
std::size_t step_field(std::string_view t) {
  std::size_t p = 0;
  while ((p = t.find("step:", p)) != npos) {
    if (p == 0 || t[p - 1] == ' ') return p;
    p += 5;
  }
  return npos;
}

// "49.66GiB(52.28%)": peak reserved GiB and, from the percentage, the capacity.
void apply_memory(std::string_view val, StepSample& s, ParseSink& sink) {
  s.mem_max_reserved_gib = to_double(val);
  std::size_t paren = val.find('(');
  if (!s.mem_max_reserved_gib || paren == npos) return;
  auto pct = to_double(val.substr(paren + 1));
  if (pct && *pct > 0) sink.mem_capacity_gib = *s.mem_max_reserved_gib / (*pct / 100.0);
}

void apply_field(std::string_view key, std::string_view val, StepSample& s, ParseSink& sink) {
  if (key == "step") {
    if (auto v = to_long(val)) s.step = *v;
  } else if (key == "loss") {
    read_loss(val, s);
  } else if (key == "grad_norm") {
    s.grad_norm = to_double(val);
  } else if (key == "memory") {
    apply_memory(val, s, sink);
  } else if (key == "tps") {
    s.tokens_per_s_per_gpu = to_double_grouped(val);  // per GPU (divided by non-DP size)
  } else if (key == "tflops") {
    s.tflops_per_gpu = to_double_grouped(val);
    s.tflops_formula = LoggedFlops::Torchtitan;
  } else if (key == "mfu") {
    if (auto v = to_double(val)) s.mfu = *v / 100.0;  // "N/A" under FP8 stays empty
  }
}

bool feed_disturbance(const LogLine& line, ParseSink& sink) {
  std::string_view t = line.text;
  using K = Disturbance::Kind;
  if (contains(t, "[GC]")) add_disturbance(sink, K::GarbageCollection, line);
  else if (contains(t, "Dumping profiler traces") || contains(t, "Dumping memory snapshot"))
    add_disturbance(sink, K::Profiler, line);
  else if (contains(t, "Saving the checkpoint") || contains(t, "Saving checkpoint"))
    add_disturbance(sink, K::Checkpoint, line);
  else if (contains(t, "validate") || contains(t, "Validation"))
    add_disturbance(sink, K::Evaluation, line);
  else return generic_disturbance(line, sink);
  return true;
}

class TorchtitanParser : public LogParser {
 public:
  std::string framework() const override { return "torchtitan"; }

  int detect(std::string_view line) const override {
    int score = 0;
    if (step_field(line) != npos && contains(line, "  loss:") && contains(line, "tps:")) score += 10;
    if (contains(line, "[titan]") || contains(line, "torchtitan")) score += 2;
    return score;
  }

  void feed(const LogLine& line, ParseSink& sink) override {
    if (feed_disturbance(line, sink)) return;  // also keeps "validate step:" out of samples
    std::size_t p = step_field(line.text);
    if (p == npos || !contains(line.text, "loss:")) return;
    StepSample s;
    for_each_titan_field(line.text.substr(p), [&](std::string_view k, std::string_view v) {
      apply_field(k, v, s, sink);
    });
    // Every rank logs each step (torchtitan/components/metrics.py): a step
    // number already read is another rank's copy of that step, whatever
    // order the ranks' lines reach the log in.
    if (s.step > 0 && s.step <= last_step_) return;
    last_step_ = std::max(last_step_, s.step);
    s.line = line.line;
    s.steps_in_interval = steps_.interval(s.step);  // averages over log_freq steps
    max_into(sink.peak_mem_reserved_gib, s.mem_max_reserved_gib);
    sink.samples.push_back(std::move(s));
  }

 private:
  StepCounter steps_;
  long last_step_ = 0;
};

}  // namespace

std::unique_ptr<LogParser> make_torchtitan_parser() { return std::make_unique<TorchtitanParser>(); }

}  // namespace attune::diagnose::detail
