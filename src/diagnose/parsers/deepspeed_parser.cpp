// DeepSpeed parser: the engine's "[Rank 0] step=N, skipped=n, lr=[..]" line,
// the ThroughputTimer line (current "epoch=e/micro_step=m/global_step=g, ..."
// and the older "e/s, RunningAvgSamplesPerSec=..." / "e/s, SamplesPerSec=..."),
// see_memory_usage's "MA x GB  Max_MA x GB  CA x GB  Max_CA x GB", checkpoint
// and flops-profiler markers, and Megatron-DeepSpeed's iteration line (Megatron
// line + samples per second / tgs / TFLOPs). The wall-clock breakdown
// ("time (ms) | fwd: ...") goes to the timer table through MegatronLines.
#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

// Value after "key" up to the next ", " ("lr=[0.0001]" -> "[0.0001]").
std::string_view value_after(std::string_view t, std::string_view key) {
  std::size_t p = t.find(key);
  if (p == npos) return {};
  std::string_view v = t.substr(p + key.size());
  return v.substr(0, v.find(", "));
}

// The step of a throughput line: "global_step=g" or the "s" of "e/s,".
std::optional<long> throughput_step(std::string_view t, std::size_t fields) {
  std::string_view g = value_after(t.substr(0, fields), "global_step=");
  if (!g.empty()) return to_long(g);
  std::string_view head = trim(t.substr(0, fields));
  if (head.ends_with(',')) head.remove_suffix(1);
  std::size_t sp = head.find_last_of(' ');
  if (sp != npos) head = head.substr(sp + 1);
  std::size_t slash = head.find('/');
  if (slash == npos) return std::nullopt;
  return to_long(head.substr(slash + 1));
}

// "MemAllocated=3.45GB": DeepSpeed's "GB" are GiB (bytes / 1024^3).
void apply_throughput_field(std::string_view key, std::string_view val, StepSample& s) {
  if (key == "CurrSamplesPerSec" || key == "SamplesPerSec") {
    s.samples_per_s = to_double(val);  // global batch / this step's time: whole job
  } else if (key == "RunningAvgSamplesPerSec") {
    if (!s.samples_per_s) s.samples_per_s = to_double(val);
  } else if (key == "MemAllocated") {
    s.mem_allocated_gib = to_double(val);
  } else if (key == "MaxMemAllocated") {
    s.mem_max_allocated_gib = to_double(val);
  }
}

// "MA 1.2 GB         Max_MA 2.3 GB         CA 3.4 GB         Max_CA 4 GB " (GiB).
bool feed_see_memory(std::string_view t, ParseSink& sink) {
  std::size_t ma = t.find("MA ");
  std::size_t max_ma = t.find("Max_MA ");
  if (ma == npos || max_ma == npos || ma > max_ma) return false;
  std::size_t max_ca = t.find("Max_CA ");
  max_into(sink.peak_mem_allocated_gib, to_double(t.substr(max_ma + 7)));
  if (max_ca != npos) max_into(sink.peak_mem_reserved_gib, to_double(t.substr(max_ca + 7)));
  return true;
}

bool feed_marker(const LogLine& line, ParseSink& sink) {
  std::string_view t = line.text;
  if (contains(t, "is about to be saved!") || contains(t, "Saving model checkpoint")) {
    add_disturbance(sink, Disturbance::Kind::Checkpoint, line);
  } else if (contains(t, "DeepSpeed Flops Profiler")) {
    add_disturbance(sink, Disturbance::Kind::Profiler, line);
  } else {
    return generic_disturbance(line, sink);
  }
  return true;
}

class DeepspeedParser : public LogParser {
 public:
  std::string framework() const override { return "deepspeed"; }

  int detect(std::string_view line) const override {
    int score = MegatronLines::detect(line);
    if (score > 0 && (contains(line, "tokens per gpu per second (tgs)") ||
                      contains(line, "| samples per second:")))
      score += 5;  // Megatron-DeepSpeed's extras beat plain Megatron
    if (contains(line, "SamplesPerSec=")) score += 10;
    if (contains(line, "] step=") && contains(line, "skipped=")) score += 10;
    if (contains(line, "Max_MA ")) score += 5;
    if (contains(line, "[deepspeed]") || contains(line, "DeepSpeed")) score += 1;
    if (contains(line, "] [launch.py:")) score += 2;  // the deepspeed launcher's own lines
    return score;
  }

  void finish(ParseSink& sink) override { megatron_.flush_wrapped(sink); }

  void feed(const LogLine& line, ParseSink& sink) override {
    std::string_view t = line.text;
    const std::size_t before = sink.samples.size();
    if (megatron_.feed(line, sink)) {
      if (sink.samples.size() > before) {  // an iteration line
        iteration_ = sink.samples.size() - 1;
        merge_pending(sink);
      }
      return;
    }
    if (feed_progress(line, sink) || feed_throughput(line, sink)) {
      merge_pending(sink);
      return;
    }
    if (feed_see_memory(t, sink)) return;
    feed_marker(line, sink);
  }

 private:
  // Where the engine's lines for `step` go. On their own (DeepSpeed under HF
  // or a plain script) they are the step samples: the last one if this
  // parser made it for the same step, else a new one. Beside
  // Megatron-DeepSpeed's iteration lines they are not steps of their own: the
  // engine prints them every steps_per_print steps just before the iteration
  // line of the same step, so they are held and merged into it (fields the
  // iteration line lacks), and dropped if no iteration line of their step
  // comes. Engine lines before the first iteration line still make samples.
  StepSample& sample_for(long step, const LogLine& line, ParseSink& sink) {
    if (iteration_ < sink.samples.size()) {
      if (!pending_ || pending_->step != step) {
        pending_ = StepSample{};
        pending_->step = step;
        pending_->line = line.line;
      }
      return *pending_;
    }
    if (last_ < sink.samples.size() && sink.samples[last_].step == step) return sink.samples[last_];
    StepSample s;
    s.step = step;
    s.line = line.line;
    sink.samples.push_back(std::move(s));
    last_ = sink.samples.size() - 1;
    return sink.samples.back();
  }

  // Held engine figures into the latest iteration sample, if it is of their step.
  void merge_pending(ParseSink& sink) {
    if (!pending_ || iteration_ + 1 != sink.samples.size()) return;
    StepSample& it = sink.samples[iteration_];
    if (it.step != pending_->step) {
      if (it.step > pending_->step) pending_.reset();  // no iteration line for that step
      return;
    }
    auto fill = [](auto& into, const auto& from) {
      if (!into && from) into = from;
    };
    fill(it.samples_per_s, pending_->samples_per_s);
    fill(it.mem_allocated_gib, pending_->mem_allocated_gib);
    fill(it.mem_max_allocated_gib, pending_->mem_max_allocated_gib);
    fill(it.skipped_iterations, pending_->skipped_iterations);
    fill(it.lr, pending_->lr);
    pending_.reset();
  }

  // "[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]"
  bool feed_progress(const LogLine& line, ParseSink& sink) {
    std::string_view t = line.text;
    std::size_t p = t.find("step=");
    if (p == npos || (p > 0 && t[p - 1] != ' ') || !contains(t, "skipped=")) return false;
    auto step = to_long(t.substr(p + 5));
    if (!step) return false;
    StepSample& s = sample_for(*step, line, sink);
    // DeepSpeed counts skips since the start; StepSample wants them per interval.
    if (auto skipped = to_long(value_after(t, "skipped="))) {
      s.skipped_iterations = *skipped >= prev_skipped_ ? *skipped - prev_skipped_ : *skipped;
      prev_skipped_ = *skipped;
    }
    std::string_view lr = value_after(t, "lr=");
    if (!lr.empty() && lr.front() == '[') lr.remove_prefix(1);
    s.lr = to_double(lr);
    return true;
  }

  bool feed_throughput(const LogLine& line, ParseSink& sink) {
    std::string_view t = line.text;
    std::size_t f = t.find("SamplesPerSec=");
    if (f == npos) return false;
    std::size_t fields = t.rfind(", ", f);  // start of the k=v list
    if (fields == npos) return false;
    auto step = throughput_step(t, fields + 1);
    if (!step) return false;
    StepSample& s = sample_for(*step, line, sink);
    for_each_postfix(t.substr(fields + 2), [&](std::string_view k, std::string_view v) {
      apply_throughput_field(k, v, s);
    });
    max_into(sink.peak_mem_allocated_gib, s.mem_max_allocated_gib);
    return true;
  }

  MegatronLines megatron_;
  std::size_t last_ = static_cast<std::size_t>(-1);       // the last engine sample
  std::size_t iteration_ = static_cast<std::size_t>(-1);  // the last iteration-line sample
  std::optional<StepSample> pending_;                     // engine figures held for their iteration line
  long prev_skipped_ = 0;
};

}  // namespace

std::unique_ptr<LogParser> make_deepspeed_parser() { return std::make_unique<DeepspeedParser>(); }

}  // namespace attune::diagnose::detail
