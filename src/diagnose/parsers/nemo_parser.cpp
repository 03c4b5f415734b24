// NeMo parser: NeMo 1 / HyperPod-v1 Lightning progress bars ("Epoch 0: 6%|..|
// n/N [t<r, 1.37it/s, k=v, ...]"), NeMo 2 ProgressPrinter lines ("Training
// epoch e, iteration n/N | k: v | ..."), DeltaTimingCallback lines
// ("Step n: train_step_timing in s=x"), validation runs and checkpoint saves.
#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

struct KeyState {
  bool have_train_loss = false;  // reduced_train_loss outranks the bar's smoothed "loss"
};

// Metric keys of NeMo (TimingCallback, FLOPs callback) and the HyperPod adapter.
void apply_metric(std::string_view key, std::string_view val, StepSample& s, KeyState& ks) {
  if (key == "train_step_timing in s" || key == "Step Time") {
    s.step_time_s = to_double(val);
  } else if (key == "reduced_train_loss" || key == "Loss/train") {
    ks.have_train_loss = true;
    read_loss(val, s);
  } else if (key == "loss" || key == "train_loss") {
    if (!ks.have_train_loss) read_loss(val, s);
  } else if (key == "lr" || key == "LR/learning_rate") {
    s.lr = to_double(val);
  } else if (key == "global_batch_size") {
    s.global_batch = to_long(val);
  } else if (key == "TFLOPS_per_GPU" || key == "TFLOPS/GPU") {
    s.tflops_per_gpu = to_double(val);
    s.tflops_formula = key == "TFLOPS/GPU" ? LoggedFlops::HyperPod : LoggedFlops::NemoCallback;
  } else if (key == "tokens_per_sec_per_gpu") {
    s.tokens_per_s_per_gpu = to_double(val);
  } else if (key == "Samples/Second") {
    s.samples_per_s = to_double(val);
  } else if (key == "grad_norm" || key == "Norms/grad_norm") {
    s.grad_norm = to_double(val);
  }
}

// "Training epoch 0, iteration 119/999 | ..." -> index of the first '|'.
// ProgressPrinter prints iteration {n-1}/{total-1} for the n-th step
// (Lightning's progress bar): `it` is the printed, 0-based number.
std::size_t progress_printer_header(std::string_view t, long& it) {
  std::size_t p = t.find("Training epoch ");
  if (p == npos) return npos;
  std::size_t i = t.find(", iteration ", p);
  if (i == npos) return npos;
  i += 12;
  auto [end, ec] = std::from_chars(t.data() + i, t.data() + t.size(), it);
  if (ec != std::errc() || !is_sane_count(it)) return npos;
  return t.find('|', static_cast<std::size_t>(end - t.data()));
}

// "Step 12: train_step_timing in s=0.345" (DeltaTimingCallback).
bool parse_delta_timing(std::string_view t, StepSample& s) {
  std::size_t p = t.find("train_step_timing in s=");
  if (p == npos) return false;
  std::size_t st = t.rfind("Step ", p);
  if (st == npos) return false;
  auto [end, ec] = std::from_chars(t.data() + st + 5, t.data() + p, s.step);
  if (ec != std::errc() || *end != ':' || !is_sane_count(s.step)) return false;
  s.step_time_s = to_double(t.substr(p + 23));
  return s.step_time_s.has_value();
}

bool is_checkpoint_line(std::string_view t) {
  return contains(t, "Saving checkpoint") || contains(t, "saving model to") ||
         contains(t, "Async checkpoint save") || contains(t, "Scheduled async checkpoint save");
}

class NemoParser : public LogParser {
 public:
  std::string framework() const override { return "nemo"; }

  int detect(std::string_view line) const override {
    int score = 0;
    if (contains(line, "Training epoch ") && contains(line, ", iteration ")) score += 10;
    if (contains(line, "train_step_timing in s")) score += 10;
    if (contains(line, "reduced_train_loss")) score += 10;
    if (contains(line, "[NeMo I ") || contains(line, "[NeMo W ")) score += 2;
    if (contains(line, "Loss/train=") || contains(line, "TFLOPS/GPU=")) score += 10;
    // NeMo 1 and 2 train through Lightning: its progress bar and its paths.
    if (contains(line, ", v_num=")) score += 2;
    if (contains(line, "lightning")) score += 1;
    return score;
  }

  void feed(const LogLine& line, ParseSink& sink) override {
    std::string_view t = line.text;
    if (feed_progress_printer(line, sink) || feed_delta_timing(line, sink)) return;
    if (timers_.feed(t, sink.timers)) return;  // NeMo 2 prints Megatron's timers
    if (auto bar = parse_tqdm(t)) {
      feed_bar(*bar, line, sink);
      return;
    }
    if (t.find("Validation") < 32) {  // ProgressPrinter's validation lines
      enter_validation(line, sink);
      return;
    }
    if (is_checkpoint_line(t)) {
      add_disturbance(sink, Disturbance::Kind::Checkpoint, line);
      return;
    }
    generic_disturbance(line, sink);
  }

 private:
  bool feed_progress_printer(const LogLine& line, ParseSink& sink) {
    StepSample s;
    std::size_t body = progress_printer_header(line.text, s.step);
    if (body == npos) return false;
    ++s.step;  // 1-based, like every other parser's step (a bar's n, Megatron's iteration)
    KeyState ks;
    for_each_field(line.text.substr(body), ':', [&](std::string_view k, std::string_view v) {
      apply_metric(k, v, s, ks);
    });
    in_validation_ = false;
    note_epoch(line.text.substr(line.text.find("Training epoch ") + 15), line, sink);
    s.line = line.line;
    s.steps_in_interval = steps_.interval(s.step);  // metrics are log_interval averages
    sink.samples.push_back(std::move(s));
    return true;
  }

  bool feed_delta_timing(const LogLine& line, ParseSink& sink) {
    StepSample s;
    if (!parse_delta_timing(line.text, s)) return false;
    s.line = line.line;
    steps_.interval(s.step);
    sink.samples.push_back(std::move(s));
    return true;
  }

  void feed_bar(const TqdmBar& bar, const LogLine& line, ParseSink& sink) {
    if (bar.desc.starts_with("Validation") || bar.desc.starts_with("Testing")) {
      enter_validation(line, sink);
      return;
    }
    if (!bar.desc.starts_with("Epoch") || bar.n == last_bar_n_) return;
    last_bar_n_ = bar.n;
    in_validation_ = false;
    note_epoch(bar.desc.substr(5), line, sink);
    StepSample s;
    s.step = bar.n;
    s.line = line.line;
    KeyState ks;
    for_each_postfix(bar.postfix, [&](std::string_view k, std::string_view v) {
      apply_metric(k, v, s, ks);
    });
    // The tqdm rate is smoothed; only a fallback for train_step_timing.
    if (!s.step_time_s && bar.sec_per_it) {
      s.step_time_s = bar.sec_per_it;
      s.rate_smoothed = true;
    }
    steps_.interval(s.step);  // bar metrics are those of the latest step
    sink.samples.push_back(std::move(s));
  }

  // A new epoch restarts the data loader (workers, shuffling): a DataEpoch.
  void note_epoch(std::string_view number, const LogLine& line, ParseSink& sink) {
    auto epoch = to_long(number);
    if (!epoch) return;
    if (last_epoch_ >= 0 && *epoch != last_epoch_)
      add_disturbance(sink, Disturbance::Kind::DataEpoch, line);
    last_epoch_ = *epoch;
  }

  // One Evaluation disturbance per validation run, not one per bar update.
  void enter_validation(const LogLine& line, ParseSink& sink) {
    if (in_validation_) return;
    in_validation_ = true;
    add_disturbance(sink, Disturbance::Kind::Evaluation, line);
  }

  StepCounter steps_;
  TimerLines timers_;
  long last_bar_n_ = -1;
  long last_epoch_ = -1;
  bool in_validation_ = false;
};

}  // namespace

std::unique_ptr<LogParser> make_nemo_parser() { return std::make_unique<NemoParser>(); }

}  // namespace attune::diagnose::detail
