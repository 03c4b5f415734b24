// Hugging Face parser (Trainer, TRL, axolotl, LLaMA-Factory): the per-log
// dict repr "{'loss': 1.23, 'grad_norm': .., 'learning_rate': .., 'epoch': ..}"
// (axolotl memory and tokens/s keys included), the end-of-training summary
// dict and "***** train metrics *****" block, eval dicts, checkpoint saves,
// and the tqdm training bar, which is the only source of the step number and
// step time (the dicts carry neither).
#include <cmath>
#include <string>
#include <vector>

#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

// End of a value starting at i: quoted strings and bracketed lists skipped whole.
std::size_t value_end(std::string_view t, std::size_t i) {
  if (i < t.size() && (t[i] == '\'' || t[i] == '"')) {
    std::size_t q = t.find(t[i], i + 1);
    return q == npos ? t.size() : q + 1;
  }
  int depth = 0;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '[' || c == '(' || c == '{') ++depth;
    else if ((c == ']' || c == ')') && depth > 0) --depth;
    else if (depth == 0 && (c == ',' || c == '}')) return i;
  }
  return i;
}

// Calls f(key, value) for each entry of a Python dict repr starting at '{'.
template <class F>
void for_each_dict_entry(std::string_view t, F&& f) {
  std::size_t i = 1;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == ',')) ++i;
    if (i >= t.size() || (t[i] != '\'' && t[i] != '"')) return;
    std::size_t kq = t.find(t[i], i + 1);
    if (kq == npos) return;
    std::string_view key = t.substr(i + 1, kq - i - 1);
    std::size_t colon = t.find(':', kq);
    if (colon == npos) return;
    std::size_t v = colon + 1;
    while (v < t.size() && t[v] == ' ') ++v;
    std::size_t e = value_end(t, v);
    std::string_view value = trim(t.substr(v, e - v));
    // transformers 5 prints each float of a log dict as a '.4g' string ('10.98').
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    f(key, value);
    i = e;
  }
}

struct DictInfo {
  StepSample s;
  bool has_loss = false;
  bool is_eval = false;
  bool is_summary = false;
  std::optional<double> runtime_s, steps_per_s, train_tokens_per_s, epoch;
};

void apply_summary_key(std::string_view key, std::string_view val, DictInfo& d) {
  d.is_summary = true;
  if (key == "train_samples_per_second") d.s.samples_per_s = to_double(val);
  else if (key == "train_steps_per_second") d.steps_per_s = to_double(val);
}

void apply_dict_entry(std::string_view key, std::string_view val, DictInfo& d) {
  StepSample& s = d.s;
  if (key == "loss") {
    d.has_loss = true;
    read_loss(val, s);
  } else if (key == "train_loss") {
    read_loss(val, s);
  } else if (key == "grad_norm") {
    s.grad_norm = to_double(val);
  } else if (key == "learning_rate") {
    s.lr = to_double(val);
  } else if (key == "train_runtime") {
    d.runtime_s = to_double(val);
  } else if (key == "train_samples_per_second" || key == "train_steps_per_second") {
    apply_summary_key(key, val, d);
  } else if (key == "tokens/train_per_sec_per_gpu") {  // axolotl include_tkps
    s.tokens_per_s_per_gpu = to_double(val);
  } else if (key == "train_tokens_per_second") {
    // Every dict has a cumulative one with include_num_input_tokens_seen; only
    // the summary's is kept. Counted from the local dataloader: per GPU.
    d.train_tokens_per_s = to_double(val);
  } else if (key == "memory/max_allocated (GiB)" || key == "memory/max_mem_allocated(gib)") {
    s.mem_max_allocated_gib = to_double(val);
  } else if (key == "memory/device_reserved (GiB)" || key == "memory/device_mem_reserved(gib)") {
    s.mem_reserved_gib = to_double(val);
  } else if (key == "epoch") {
    d.epoch = to_double(val);
  } else if (key.starts_with("eval_")) {
    d.is_eval = true;
  }
}

// "H:MM:SS.ss" of the train-metrics block, or plain seconds.
std::optional<double> hms_seconds(std::string_view v) {
  double total = 0;
  while (true) {
    auto part = to_double(v);
    if (!part) return std::nullopt;
    std::size_t colon = v.find(':');
    if (colon == npos) return total * 60 + *part;
    total = total * 60 + *part;
    v = v.substr(colon + 1);
  }
}

class HfParser : public LogParser {
 public:
  std::string framework() const override { return "hf"; }

  int detect(std::string_view line) const override {
    int score = 0;
    if (contains(line, "{'loss':")) score += 10;
    if (contains(line, "'learning_rate':")) score += 5;
    if (contains(line, "'train_runtime':")) score += 10;
    if (contains(line, "'eval_loss':")) score += 5;
    if (contains(line, "***** train metrics *****") || contains(line, "***** Running training *****"))
      score += 10;
    // Launchers built on the Trainer name themselves in paths and logger names.
    if (contains(line, "llamafactory") || contains(line, "axolotl")) score += 2;
    return score;
  }

  void feed(const LogLine& line, ParseSink& sink) override {
    std::string_view t = line.text;
    std::size_t brace = t.find("{'");
    if (brace != npos) {
      feed_dict(t.substr(brace), line, sink);
    } else if (auto bar = parse_tqdm(t)) {
      note_bar(*bar, line, sink);
    } else if (contains(t, "***** Running Evaluation *****")) {
      in_eval_ = true;
      add_disturbance(sink, Disturbance::Kind::Evaluation, line);
    } else if (contains(t, "Saving model checkpoint to")) {
      add_disturbance(sink, Disturbance::Kind::Checkpoint, line);
    } else if (!feed_metrics_block(t, line, sink)) {
      generic_disturbance(line, sink);
    }
  }

 private:
  // The training bar is the last one with a total before the first training
  // step (data preparation prints bars of its own first); eval bars, which
  // come after steps, have other totals.
  // Each new position of the training bar is a timed step; those before the
  // first dict are held until it shows which bar is the training one.
  void note_bar(const TqdmBar& bar, const LogLine& line, ParseSink& sink) {
    if (bar.total > 0 && (train_total_ == 0 || (steps_.prev < 0 && bar.total != train_total_))) {
      if (bar.total != train_total_) early_bars_.clear();
      train_total_ = bar.total;
    }
    if (bar.total != train_total_) return;
    bar_n_ = bar.n;
    bar_sec_per_it_ = bar.sec_per_it;
    if (steps_.prev < 0) {
      if (early_bars_.size() == kEarlyBars) early_bars_.erase(early_bars_.begin());
      early_bars_.push_back({bar.n, bar.sec_per_it, line.line});
    } else if (bar.n > steps_.prev) {
      add_bar_sample({bar.n, bar.sec_per_it, line.line}, sink);
    }
  }

  struct BarPosition {
    long n = 0;
    std::optional<double> sec_per_it;
    long line = 0;
  };

  void add_bar_sample(const BarPosition& b, ParseSink& sink) {
    StepSample s;
    s.step = b.n;
    s.line = b.line;
    s.step_time_s = b.sec_per_it;
    s.rate_smoothed = b.sec_per_it.has_value();  // tqdm smooths its rate
    s.steps_in_interval = steps_.interval(b.n);
    sink.samples.push_back(std::move(s));
    bar_sample_ = sink.samples.size() - 1;
  }

  // The first dict settles the training bar: its earlier positions become steps.
  void flush_early_bars(ParseSink& sink) {
    for (const auto& b : early_bars_) {
      if (b.n < bar_n_ && b.n > steps_.prev) add_bar_sample(b, sink);
    }
    early_bars_.clear();
  }

  void feed_dict(std::string_view t, const LogLine& line, ParseSink& sink) {
    DictInfo d;
    for_each_dict_entry(t, [&](std::string_view k, std::string_view v) { apply_dict_entry(k, v, d); });
    if (d.is_summary) {
      add_summary(d, line, sink);
    } else if (d.is_eval) {
      if (!in_eval_) add_disturbance(sink, Disturbance::Kind::Evaluation, line);
      in_eval_ = false;
    } else if (d.has_loss) {
      note_epoch(d.epoch, line, sink);
      add_step(d.s, line, sink);
    }
  }

  // 'epoch' is fractional; crossing an integer restarts the data loader.
  void note_epoch(std::optional<double> epoch, const LogLine& line, ParseSink& sink) {
    if (!epoch || !(*epoch >= 0 && *epoch < 1e9)) return;  // not an epoch number
    long whole = static_cast<long>(*epoch);
    if (last_epoch_ >= 0 && whole > last_epoch_)
      add_disturbance(sink, Disturbance::Kind::DataEpoch, line);
    last_epoch_ = whole;
  }

  void add_step(StepSample s, const LogLine& line, ParseSink& sink) {
    in_eval_ = false;
    if (steps_.prev < 0) flush_early_bars(sink);
    if (merge_into_bar_sample(s, line, sink)) return;
    // Without a newer bar position the dicts are numbered one by one.
    bool bar_fresh = bar_n_ > steps_.prev;
    s.step = bar_fresh ? bar_n_ : std::max(steps_.prev, 0L) + 1;
    if (bar_fresh) s.step_time_s = bar_sec_per_it_;
    s.rate_smoothed = bar_fresh && bar_sec_per_it_;  // tqdm smooths its rate
    s.step_counted = !bar_fresh;
    const int interval = steps_.interval(s.step);
    s.steps_in_interval = bar_fresh ? interval : 1;  // logging_steps is not printed
    s.line = line.line;
    max_into(sink.peak_mem_allocated_gib, s.mem_max_allocated_gib);
    max_into(sink.peak_mem_reserved_gib, s.mem_reserved_gib);
    sink.samples.push_back(std::move(s));
  }

  // A dict written under the bar position it belongs to completes that
  // position's sample: the bar gave the step and its time, the dict the rest.
  bool merge_into_bar_sample(StepSample& s, const LogLine& line, ParseSink& sink) {
    if (bar_sample_ >= sink.samples.size()) return false;
    StepSample& at = sink.samples[bar_sample_];
    if (at.step != bar_n_ || at.loss) return false;
    s.step = at.step;
    s.step_time_s = at.step_time_s;
    s.rate_smoothed = at.rate_smoothed;
    s.steps_in_interval = at.steps_in_interval;
    s.line = line.line;
    at = std::move(s);
    max_into(sink.peak_mem_allocated_gib, at.mem_max_allocated_gib);
    max_into(sink.peak_mem_reserved_gib, at.mem_reserved_gib);
    return true;
  }

  // The whole-run average as one sample spanning every step of the run (the
  // diagnosis keeps it out of the steady state where per-step samples exist).
  void add_summary(DictInfo& d, const LogLine& line, ParseSink& sink) {
    if (summary_seen_) return;  // the metrics block repeats the dict
    summary_seen_ = true;
    StepSample& s = d.s;
    s.tokens_per_s_per_gpu = d.train_tokens_per_s;
    const long steps = summary_steps(d);
    if (steps > 0) {
      s.step_time_s = *d.runtime_s / static_cast<double>(steps);
    } else if (d.steps_per_s && *d.steps_per_s > 0) {
      s.step_time_s = 1.0 / *d.steps_per_s;
    }
    s.steps_in_interval = static_cast<int>(std::clamp<long>(steps, 1, 1'000'000'000));
    s.step = steps_.prev > 0 ? steps_.prev : s.steps_in_interval;
    s.line = line.line;
    sink.samples.push_back(std::move(s));
  }

  // The steps train_steps_per_second counts (max_steps), 0 if unknown.
  // Rounded to 3 decimals, the rate alone loses precision on slow runs, so
  // train_runtime / steps is the step time: the steps are the training bar's
  // total or the last step logged where one agrees with the rounded rate,
  // else runtime x rate rounded to a whole number.
  long summary_steps(const DictInfo& d) const {
    if (!d.runtime_s || !d.steps_per_s || !(*d.runtime_s > 0) || !(*d.steps_per_s >= 0)) return 0;
    const double runtime = *d.runtime_s, rate = *d.steps_per_s;
    for (long n : {train_total_, steps_.prev}) {
      if (n > 0 && std::abs(static_cast<double>(n) / runtime - rate) <= 0.0005 + rate * 1e-9) return n;
    }
    const double n = runtime * rate + 0.5;
    return n >= 1 && n <= static_cast<double>(kMaxCount) ? static_cast<long>(n) : 0;
  }

  // "  train_samples_per_second =     12.345" lines of the train-metrics block.
  bool feed_metrics_block(std::string_view t, const LogLine& line, ParseSink& sink) {
    std::size_t eq = t.find(" = ");
    if (eq == npos) return false;
    std::string_view key = trim(t.substr(0, eq));
    std::string_view val = trim(t.substr(eq + 3));
    if (!key.starts_with("train_") || summary_seen_) return false;
    if (key == "train_runtime") block_.runtime_s = hms_seconds(val);
    else apply_dict_entry(key, val, block_);
    if (key == "train_steps_per_second") {
      add_summary(block_, line, sink);
      block_ = DictInfo{};
    }
    return true;
  }

  static constexpr std::size_t kEarlyBars = 64;  // held before the first dict; older ones are dropped

  StepCounter steps_;
  std::vector<BarPosition> early_bars_;
  std::size_t bar_sample_ = static_cast<std::size_t>(-1);  // the sample the latest bar position made
  long train_total_ = 0;
  long bar_n_ = -1;
  std::optional<double> bar_sec_per_it_;
  long last_epoch_ = -1;
  bool in_eval_ = false;
  bool summary_seen_ = false;
  DictInfo block_;
};

}  // namespace

std::unique_ptr<LogParser> make_hf_parser() { return std::make_unique<HfParser>(); }

}  // namespace attune::diagnose::detail
