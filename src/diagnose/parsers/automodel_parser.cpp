// NeMo AutoModel parser: the train_ft recipe's per-step line
// "step N | epoch e | loss x | grad_norm x | lr x | mem x GiB | tps x(y/gpu) | num_label_tokens n"
// (behind a "date | INFO | root | " logging prefix), the key=value form other
// recipes print ("epoch=0 step=1070 loss=2.5 grad_norm=0.12 lr=2.6e-05 ..."),
// validation and checkpoint lines.
#include "parse_util.h"

namespace attune::diagnose::detail {

namespace {

constexpr auto npos = std::string_view::npos;

// Index of "step N | epoch" (the logging prefix also uses '|'), npos if absent.
std::size_t step_segment(std::string_view t) {
  std::size_t p = 0;
  while ((p = t.find("step ", p)) != npos) {
    bool starts_segment = p == 0 || t[p - 1] == ' ' || t[p - 1] == '|';
    std::size_t bar = t.find(" | epoch ", p);
    if (starts_segment && p + 5 < t.size() && is_digit(t[p + 5]) && bar != npos && bar < p + 32)
      return p;
    p += 5;
  }
  return npos;
}

// Start of "... step=N ..." key=value pairs after the last '|' of the
// logging prefix, npos if absent.
std::size_t key_value_segment(std::string_view t) {
  std::size_t p = t.find(" step=");
  if (p == npos || p + 6 >= t.size() || !is_digit(t[p + 6]) || t.find(" loss=") == npos) return npos;
  std::size_t bar = t.rfind('|', p);
  return bar == npos ? 0 : bar + 1;
}

// Calls f(key, value) for each blank-separated "key=value" word.
template <class F>
void for_each_key_value(std::string_view text, F&& f) {
  while (!text.empty()) {
    std::size_t blank = text.find(' ');
    std::string_view word = text.substr(0, blank);
    text = blank == npos ? std::string_view() : text.substr(blank + 1);
    std::size_t eq = word.find('=');
    if (eq != npos && eq > 0) f(word.substr(0, eq), word.substr(eq + 1));
  }
}

void apply_field(std::string_view key, std::string_view val, StepSample& s, long& epoch) {
  if (key == "epoch") {
    if (auto v = to_long(val)) epoch = *v;
  } else if (key == "step") {
    if (auto v = to_long(val)) s.step = *v;
  } else if (key == "loss") {
    read_loss(val, s);
  } else if (key == "grad_norm") {
    s.grad_norm = to_double(val);
  } else if (key == "lr") {
    s.lr = to_double(val);
  } else if (key == "mem") {
    s.mem_max_allocated_gib = to_double(val);  // torch.cuda.max_memory_allocated, GiB
  } else if (key == "tps") {
    // Tokens of the global step over its wall time: the whole job's rate. The
    // "(x/gpu)" part divides by DP·CP only, so it is per GPU only without
    // TP/PP; the diagnosis replaces it by tps / world when the world is known.
    s.tokens_per_s = to_double(val);
    std::size_t open = val.find('(');
    if (open != npos && val.substr(open).find("/gpu)") != npos) {
      auto per_replica = to_double(val.substr(open + 1));
      if (per_replica && *per_replica > 0 && !is_nan_or_inf(*per_replica)) s.tokens_per_s_per_gpu = *per_replica;
    }
  } else if (key == "time") {  // bi-encoder recipe prints step time instead of tps
    s.step_time_s = to_double(val);
  }
}

class AutomodelParser : public LogParser {
 public:
  std::string framework() const override { return "automodel"; }

  int detect(std::string_view line) const override {
    int score = 0;
    if (step_segment(line) != npos && contains(line, "| loss ")) score += 10;
    if (key_value_segment(line) != npos && contains(line, "nemo_automodel")) score += 5;
    if (contains(line, "nemo_automodel")) score += 5;
    if (contains(line, "(mesh_data_parallel)")) score += 2;  // its device mesh's process group
    return score;
  }

  void feed(const LogLine& line, ParseSink& sink) override {
    std::string_view t = line.text;
    // A validation run's line has the training line's fields
    // (`[val] name "default" | step 9 | epoch 0 | loss ...`): not a step.
    if (contains(t, "[val]")) {
      add_disturbance(sink, Disturbance::Kind::Evaluation, line);
      return;
    }
    std::size_t p = step_segment(t);
    const std::size_t kv = p == npos ? key_value_segment(t) : npos;
    if (p != npos || kv != npos) {
      StepSample s;
      long epoch = -1;
      const auto apply = [&](std::string_view k, std::string_view v) { apply_field(k, v, s, epoch); };
      if (p != npos) for_each_field(t.substr(p), ' ', apply);
      else for_each_key_value(trim(t.substr(kv)), apply);
      // A new epoch restarts the data loader: the step around it is disturbed.
      if (last_epoch_ >= 0 && epoch >= 0 && epoch != last_epoch_)
        add_disturbance(sink, Disturbance::Kind::DataEpoch, line);
      if (epoch >= 0) last_epoch_ = epoch;
      s.line = line.line;  // values are of this one step: steps_in_interval stays 1
      sink.samples.push_back(std::move(s));
      max_into(sink.peak_mem_allocated_gib, sink.samples.back().mem_max_allocated_gib);
      return;
    }
    if (contains(t, "Saving checkpoint") || contains(t, "saving checkpoint")) {
      add_disturbance(sink, Disturbance::Kind::Checkpoint, line);
    } else if (contains(t, "[val]") || contains(t, "val_loss") || contains(t, "Validation")) {
      add_disturbance(sink, Disturbance::Kind::Evaluation, line);
    } else {
      generic_disturbance(line, sink);
    }
  }

 private:
  long last_epoch_ = -1;
};

}  // namespace

std::unique_ptr<LogParser> make_automodel_parser() { return std::make_unique<AutomodelParser>(); }

}  // namespace attune::diagnose::detail
