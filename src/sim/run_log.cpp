#include "attune/sim/run_log.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ostream.h>

namespace attune::sim {

namespace {

constexpr std::time_t kJobStart = 1796032800;  // 2026-11-30 10:00:00 UTC: timestamps count from here
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
constexpr long kDeepspeedStepsPerPrint = 10;   // DeepSpeed's steps_per_print default

// ---------------------------------------------------------------- the run's numbers

double loss_at(long step, std::mt19937_64& rng) {
  std::normal_distribution<double> jitter(0, 0.01);
  return 2.0 + 9.0 * std::exp(-static_cast<double>(step) / 150.0) + jitter(rng);
}

// Seconds for each step: a slow first step, a slightly slow second, then the
// steady time with Gaussian noise (never below half the steady time); with
// straggler_probability a steady step waits straggler_slowdown times as long
// for a slow rank (perfmodel.md §8).
std::vector<double> step_times(double steady, const RunOptions& o, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1.0, o.cv);
  std::bernoulli_distribution straggler(o.straggler_probability);
  std::vector<double> t;
  for (int i = 0; i < o.steps; ++i) {
    double f = std::max(0.5, noise(rng));
    if (i == 0) {
      f *= o.warmup_factor;
    } else if (i == 1) {
      f *= 1.09;
    } else if (o.straggler_probability > 0 && straggler(rng)) {  // no draw when off: old seeds keep their logs
      f *= o.straggler_slowdown;
    }
    t.push_back(steady * f);
  }
  return t;
}

// What every format prints about one step.
struct Step {
  long n = 0;            // 1-based
  long total = 0;        // steps in the run
  double time_s = 0;     // this step's wall time
  double elapsed_s = 0;  // training time at the end of this step (start-up not counted)
  double loss = 0;
  double grad_norm = 0;
  double lr = 0;
};

struct Run {
  const Workload& w;
  const Prediction& p;
  const std::vector<double>& t;
  std::mt19937_64& rng;
  std::ostream& out;
  const std::function<void(double)>& before_lines;

  // The per-step loop every format shares: print(step) in order, the losses
  // drawn from the run's generator after the step times.
  template <class F>
  void for_each_step(F&& print) const {
    Step s;
    s.total = static_cast<long>(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      s.n = static_cast<long>(i) + 1;
      s.time_s = t[i];
      s.elapsed_s += t[i];
      s.loss = loss_at(s.n, rng);
      s.grad_norm = 1.0 + 0.2 * std::exp(-static_cast<double>(s.n) / 50.0);
      s.lr = 3e-4 * std::min(1.0, static_cast<double>(s.n) / 10.0);
      if (before_lines) before_lines(kStartupSeconds + s.elapsed_s);
      print(s);
    }
  }
  // Model TFLOP/s per GPU in Megatron's convention, for this step's time.
  double tflops(double step_s) const { return p.tflops_per_gpu * p.step_time_s / step_s; }
  double tokens_per_step() const { return static_cast<double>(w.plan.gbs) * static_cast<double>(w.plan.seq_len); }
  double state_gib() const { return p.memory.weights_gib + p.memory.gradients_gib + p.memory.optimizer_gib; }
};

// ---------------------------------------------------------------- text as Python and tqdm print it

enum class Stamp { Seconds, Millis, Micros };  // %S, logging's %S,mmm, datetime's %S.%f

std::string clock_at(double elapsed_s, Stamp stamp) {
  const long long us = std::llround((kStartupSeconds + elapsed_s) * 1e6);
  const std::tm tm = fmt::gmtime(kJobStart + static_cast<std::time_t>(us / 1'000'000));
  const std::string base = fmt::format("{:%Y-%m-%d %H:%M:%S}", tm);
  if (stamp == Stamp::Millis) return fmt::format("{},{:03d}", base, us % 1'000'000 / 1000);
  if (stamp == Stamp::Micros) return fmt::format("{}.{:06d}", base, us % 1'000'000);
  return base;
}

// Python's repr(float): the shortest text that reads back, ".0" on whole numbers.
std::string py_repr(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

double py_round(double v, int digits) {
  const double k = std::pow(10.0, digits);
  return std::round(v * k) / k;
}

// Python's format(v, ".<precision>"): %g, but a whole number keeps ".0".
std::string py_general(double v, int precision) {
  std::string s = fmt::format("{:.{}g}", v, precision);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// Python's "{:,}" grouping of the integer part ("12345.67" -> "12,345.67").
std::string with_commas(std::string s) {
  std::size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  const std::size_t first = s[0] == '-' ? 1 : 0;
  for (std::size_t i = end; i > first + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// A value in a Lightning bar's postfix: tqdm's format_num (3 significant
// digits unless repr is shorter), then Lightning's padding to 5 characters.
std::string bar_number(double v) {
  std::string g = fmt::format("{:.3g}", v);
  replace_all(g, "+0", "+");
  replace_all(g, "-0", "-");
  const std::string r = py_repr(v);
  std::string s = g.size() < r.size() ? g : r;
  if (s.find('e') != std::string::npos) return s;
  if (s.find('.') == std::string::npos && s.size() < 5) s += '.';
  if (s.size() < 5) s.append(5 - s.size(), '0');
  return s;
}

std::string tqdm_interval(double seconds) {
  const long t = static_cast<long>(seconds);
  const long h = t / 3600, m = t / 60 % 60, s = t % 60;
  return h > 0 ? fmt::format("{}:{:02d}:{:02d}", h, m, s) : fmt::format("{:02d}:{:02d}", m, s);
}

// tqdm's bar at its 10 columns (no terminal width off a tty): full blocks, one
// partial block in eighths, blanks.
std::string tqdm_bar(double frac) {
  static constexpr std::string_view kEighths[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const int eighths = static_cast<int>(frac * 80);
  const int full = std::min(eighths / 8, 10);
  std::string bar;
  for (int i = 0; i < full; ++i) bar += "█";
  if (full < 10) bar.append(kEighths[eighths % 8]).append(static_cast<std::size_t>(9 - full), ' ');
  return bar;
}

struct Meter {
  std::string desc;     // "" or Lightning's "Epoch 0"
  long n = 0;
  long total = 0;
  double elapsed_s = 0;
  double rate = 0;      // iterations per second, as tqdm estimates it
  bool inverted = true; // tqdm prints "s/it" below 1 it/s; Lightning's bar_format never does
  std::string postfix;
};

// One refresh of a tqdm bar. Off a terminal tqdm separates refreshes with a
// bare CR, which the diagnoser's reader collapses to the last one; logs.md's
// examples (and captures that split on CR) have one refresh per line, as here.
std::string tqdm_line(const Meter& m) {
  const double frac = static_cast<double>(m.n) / static_cast<double>(m.total);
  const std::string rate = m.inverted && m.rate < 1 ? fmt::format("{:5.2f}s/it", 1 / m.rate)
                                                    : fmt::format("{:5.2f}it/s", m.rate);
  return fmt::format("{}{:3.0f}%|{}| {}/{} [{}<{}, {}{}]", m.desc.empty() ? "" : m.desc + ": ", 100 * frac,
                     tqdm_bar(frac), m.n, m.total, tqdm_interval(m.elapsed_s),
                     tqdm_interval(static_cast<double>(m.total - m.n) / m.rate), rate,
                     m.postfix.empty() ? "" : ", " + m.postfix);
}

// ---------------------------------------------------------------- Megatron-LM, Bridge, Megatron-DeepSpeed

// training_log's line; Bridge's differs only in the timestamp's precision.
std::string megatron_iteration(const Run& r, const Step& s, Stamp stamp) {
  const auto gbs = r.w.plan.gbs;
  return fmt::format(" [{}] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration (ms): "
                     "{:.1f} | throughput per GPU (TFLOP/s/GPU): {:.1f} | learning rate: {:.6E} | global batch "
                     "size: {:5d} | lm loss: {:.6E} | loss scale: 1.0 | grad norm: {:.3f} | number of skipped "
                     "iterations:   0 | number of nan iterations:   0 |",
                     clock_at(s.elapsed_s, stamp), s.n, s.total, s.n * gbs, s.time_s * 1e3, r.tflops(s.time_s), s.lr,
                     gbs, s.loss, s.grad_norm);
}

// Both report memory after iterations 1 and 2, so the optimizer state is in.
bool reports_memory(const Step& s) { return s.n <= 2; }

// Printed by the last rank (iteration lines) and DP rank 0 (memory), tagged by torchrun.
void write_megatron(const Run& r) {
  const int last = r.w.plan.world - 1;
  const auto& m = r.p.memory;
  r.for_each_step([&](const Step& s) {
    fmt::print(r.out, "[rank{}]: {}\n", last, megatron_iteration(r, s, Stamp::Micros));
    if (!reports_memory(s)) return;
    const double mib = 1024;  // Megatron's "MB" are MiB
    fmt::print(r.out,
               "[rank0]: [Rank 0] (after {} iterations) memory (MB) | allocated: {:.2f} | max allocated: {:.2f} | "
               "reserved: {:.2f} | max reserved: {:.2f}\n",
               s.n, r.state_gib() * mib, m.peak_allocated_gib * mib, m.peak_reserved_gib * mib,
               m.peak_reserved_gib * mib);
  });
}

// Bridge's report_memory: bytes / 1e9, rounded to 5 significant digits, as Python floats.
std::string bridge_gb(double gib) {
  const double gb = gib * kBytesPerGiB / 1e9;
  if (gb <= 0) return "0.0";
  return py_repr(py_round(gb, 4 - static_cast<int>(std::floor(std::log10(gb)))));
}

std::string bridge_memory(const MemoryBreakdown& m, double state_gib) {
  return fmt::format("mem-allocated-gigabytes: {0} | mem-active-gigabytes: {0} | mem-inactive-gigabytes: {1} | "
                     "mem-reserved-gigabytes: {2} | mem-max-allocated-gigabytes: {3} | mem-max-active-gigabytes: {3} "
                     "| mem-max-inactive-gigabytes: {4} | mem-max-reserved-gigabytes: {2} | mem-alloc-retires: 0 | "
                     "mem-allocated-count: 2841",
                     bridge_gb(state_gib), bridge_gb(m.fragmentation_gib / 2), bridge_gb(m.peak_reserved_gib),
                     bridge_gb(m.peak_allocated_gib), bridge_gb(m.fragmentation_gib));
}

// Rank 0 prints "Step Time" just before the last rank's iteration line.
void write_bridge(const Run& r) {
  const int last = r.w.plan.world - 1;
  r.for_each_step([&](const Step& s) {
    fmt::print(r.out, "[rank0]: Step Time : {:.2f}s GPU utilization: {:.1f}MODEL_TFLOP/s/GPU\n", s.time_s,
               r.tflops(s.time_s));
    fmt::print(r.out, "[rank{}]: {}\n", last, megatron_iteration(r, s, Stamp::Seconds));
    if (reports_memory(s)) {
      fmt::print(r.out, "[rank0]: [Rank 0] (after {} iterations) memory (GB) | {}\n", s.n,
                 bridge_memory(r.p.memory, r.state_gib()));
    }
  });
}

// Megatron-DeepSpeed's throughput_calculator: 24·c·B·s·L·h²·(1 + s/6h + V/16Lh)
// with c = 4 under recompute (it counts the recomputed forward), else 3.
double deepspeed_tflops(const Run& r, double step_s) {
  const auto& m = r.w.model;
  const auto& pl = r.w.plan;
  if (m.hidden <= 0 || m.layers <= 0) return 0;
  const double c = r.w.knobs.recompute_granularity == "none" ? 3 : 4;
  const double h = m.hidden, L = m.layers, s = static_cast<double>(pl.seq_len);
  const double per_sample = 24 * c * s * L * h * h * (1 + s / (6 * h) + m.vocab / (16 * L * h));
  return static_cast<double>(pl.gbs) * per_sample / (step_s * pl.world * 1e12);
}

std::string deepspeed_iteration(const Run& r, const Step& s) {
  const auto& pl = r.w.plan;
  const double samples_per_s = static_cast<double>(pl.gbs) / s.time_s;
  return fmt::format(" iteration {:8d}/{:8d} | consumed samples: {:12d} | consumed tokens: {:12d} | elapsed time per "
                     "iteration (ms): {:.1f} | learning rate: {:.3E} | global batch size: {:5d} | lm loss: {:.6E} | "
                     "loss scale: 1.0 | actual seqlen: {:5d} | number of skipped iterations:   0 | number of nan "
                     "iterations:   0 | samples per second: {:.3f} | tokens per gpu per second (tgs): {:.3f} | "
                     "TFLOPs: {:.2f} |",
                     s.n, s.total, s.n * pl.gbs, s.n * pl.gbs * pl.seq_len, s.time_s * 1e3, s.lr, pl.gbs, s.loss,
                     pl.seq_len, samples_per_s, samples_per_s * static_cast<double>(pl.seq_len) / pl.world,
                     deepspeed_tflops(r, s.time_s));
}

// Megatron-DeepSpeed's report_memory prints the raw MiB floats (allocator
// blocks of 512 B, reserved segments of 2 MiB).
std::string deepspeed_memory(const Run& r) {
  auto mib = [](double gib, double block) {
    return py_repr(std::round(gib * kBytesPerGiB / block) * block / (1024.0 * 1024.0));
  };
  const auto& m = r.p.memory;
  return fmt::format("memory (MB) | allocated: {} | max allocated: {} | reserved: {} | max reserved: {}",
                     mib(r.state_gib(), 512), mib(m.peak_allocated_gib, 512), mib(m.peak_reserved_gib, 2 << 20),
                     mib(m.peak_reserved_gib, 2 << 20));
}

// The engine's own lines every steps_per_print: progress (log_dist) and the
// ThroughputTimer, whose running average leaves out the first two steps.
void write_deepspeed_engine(const Run& r, const Step& s, double timed_s) {
  const auto& pl = r.w.plan;
  const std::string stamp = clock_at(s.elapsed_s, Stamp::Millis);
  const std::string lr = py_repr(s.lr);
  fmt::print(r.out,
             "[{}] [INFO] [logging.py:96:log_dist] [Rank 0] step={}, skipped=0, lr=[{}, {}], mom=[(0.9, 0.95), "
             "(0.9, 0.95)]\n",
             stamp, s.n, lr, lr);
  const double gbs = static_cast<double>(pl.gbs);
  fmt::print(r.out,
             "[{}] [INFO] [timer.py:260:stop] epoch=0/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, "
             "CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB\n",
             stamp, s.n * std::max(1LL, pl.grad_accum), s.n, py_repr(gbs * static_cast<double>(s.n - 2) / timed_s),
             py_repr(gbs / s.time_s), py_repr(py_round(r.state_gib(), 2)),
             py_repr(py_round(r.p.memory.peak_allocated_gib, 2)));
}

// Launched by the deepspeed launcher: no torchrun rank tags.
void write_deepspeed(const Run& r) {
  double timed_s = 0;
  r.for_each_step([&](const Step& s) {
    if (s.n > 2) timed_s += s.time_s;
    if (s.n % kDeepspeedStepsPerPrint == 0) write_deepspeed_engine(r, s, timed_s);
    fmt::print(r.out, "{}\n", deepspeed_iteration(r, s));
    if (s.n == 1) fmt::print(r.out, "[Rank 0] (after 1 iterations) {}\n", deepspeed_memory(r));
  });
}

// ---------------------------------------------------------------- NeMo (Lightning)

// The HyperPod adapter's compute_tflops (logs.md §8): no causal discount, a
// dense MLP counted as two GEMMs — not Megatron's convention.
double hyperpod_tflops(const Run& r, double step_s) {
  const auto& m = r.w.model;
  const auto& pl = r.w.plan;
  if (m.hidden <= 0 || m.layers <= 0 || m.heads <= 0) return 0;
  const double h = m.hidden, L = m.layers, s = static_cast<double>(pl.seq_len);
  const double q = m.heads * m.attention_head_dim();
  const double f = m.is_moe() ? m.moe_ffn : m.ffn, k = m.is_moe() ? m.top_k : 1, g = m.is_moe() ? 1.5 : 1;
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) / m.heads;
  const double per_sample = 12 * s * L * h * h * ((1 + kv + s / h) * q / h + f / h * k * g + m.vocab / (2 * L * h));
  return static_cast<double>(pl.gbs) * per_sample / (step_s * pl.world * 1e12);
}

using Postfix = std::string (*)(const Run&, const Step&, const std::optional<Step>& previous);

// NeMo 1 (logs.md §3): the running loss (old Lightning, "%.3g"), the logger
// version, MegatronGPTModel's metrics and TimingCallback's step time. The
// callback runs before the bar, so every value is this step's.
std::string nemo1_postfix(const Run& r, const Step& s, const std::optional<Step>&) {
  return fmt::format("loss={:.3g}, v_num=0, reduced_train_loss={}, global_step={}, consumed_samples={}, "
                     "train_step_timing in s={}",
                     s.loss, bar_number(s.loss), bar_number(static_cast<double>(s.n - 1)),
                     bar_number(static_cast<double>(s.n * r.w.plan.gbs)), bar_number(s.time_s));
}

// The HyperPod adapter logs in the module's on_train_batch_end, which
// Lightning calls after the bar's callback: the bar shows the previous step.
std::string hyperpod_postfix(const Run& r, const Step&, const std::optional<Step>& prev) {
  if (!prev) return "v_num=0";
  return fmt::format("v_num=0, Step Time={}, TFLOPS/GPU={}, Samples/Second={}, Loss/train={}, Norms/grad_norm={}, "
                     "LR/learning_rate={}",
                     bar_number(prev->time_s), bar_number(hyperpod_tflops(r, prev->time_s)),
                     bar_number(static_cast<double>(r.w.plan.gbs) / prev->time_s), bar_number(prev->loss),
                     bar_number(prev->grad_norm), bar_number(prev->lr));
}

// Lightning's TQDMProgressBar: smoothing 0 (the rate is the run's average),
// rate always in it/s.
void write_lightning_bar(const Run& r, Postfix postfix) {
  std::optional<Step> prev;
  r.for_each_step([&](const Step& s) {
    const double rate = static_cast<double>(s.n) / s.elapsed_s;
    fmt::print(r.out, "{}\n", tqdm_line({"Epoch 0", s.n, s.total, s.elapsed_s, rate, false, postfix(r, s, prev)}));
    prev = s;
  });
}

// NeMo 2's ProgressPrinter (log_interval 1): whole floats printed as ints, others "{:.4}".
void write_progress_printer(const Run& r) {
  const auto gbs = r.w.plan.gbs;
  r.for_each_step([&](const Step& s) {
    fmt::print(r.out,
               "Training epoch 0, iteration {}/{} | lr: {} | consumed_samples: {} | global_batch_size: {} | "
               "global_step: {} | reduced_train_loss: {} | train_step_timing in s: {}\n",
               s.n - 1, s.total - 1, py_general(s.lr, 4), s.n * gbs, gbs, s.n, py_general(s.loss, 4),
               py_general(s.time_s, 4));
  });
}

// HyperPod dialects on NeMo: nemo1 runs NeMo 1 (its progress bar); smp runs
// the SageMaker training adapter, a NeMo 1 / Lightning stack whose bar carries
// "Step Time", "TFLOPS/GPU", "Samples/Second" (logs.md §8); checkpointless runs
// NeMo 2 (hyperpod_checkpointless_nemo), whose Trainer prints through the
// ProgressPrinter instead of a bar. Any other plan gets NeMo 1's bar.
void write_nemo(const Run& r) {
  const std::string& dialect = r.w.plan.dialect;
  if (dialect == "checkpointless") {
    write_progress_printer(r);
  } else {
    write_lightning_bar(r, dialect == "smp" ? hyperpod_postfix : nemo1_postfix);
  }
}

// ---------------------------------------------------------------- AutoModel, torchtitan, Hugging Face

// train_ft's log_train_metrics behind Python logging's "date | level | name | ":
// tps is the global step's tokens over its time; "/gpu" divides by DP·CP only.
void write_automodel(const Run& r) {
  const auto& pl = r.w.plan;
  const double tokens = r.tokens_per_step();
  const double replicas = std::max(1, pl.dp) * std::max(1, pl.cp);
  r.for_each_step([&](const Step& s) {
    const double tps = tokens / s.time_s;
    fmt::print(r.out,
               "{} | INFO | root | step {} | epoch 0 | loss {:.4f} | grad_norm {:.4f} | lr {:.2e} | mem {:.2f} GiB | "
               "tps {:.2f}({:.2f}/gpu) | num_label_tokens {}\n",
               clock_at(s.elapsed_s, Stamp::Seconds), s.n, s.loss, s.grad_norm, s.lr, r.p.memory.peak_allocated_gib,
               tps, tps / replicas, static_cast<long long>(tokens));
  });
}

void write_torchtitan(const Run& r) {
  const auto& pl = r.w.plan;
  const auto& p = r.p;
  const double tokens_per_gpu_step = r.tokens_per_step() / pl.world;
  const double pct = 100 * p.memory.peak_reserved_gib / p.hbm_gib;
  const double peak = p.mfu > 0 ? p.tflops_per_gpu / p.mfu : 1;
  r.for_each_step([&](const Step& s) {
    const double tflops = r.tflops(s.time_s);
    const std::string mfu = r.w.knobs.fp8 ? "N/A" : fmt::format("{:.2f}%", 100 * tflops / peak);
    fmt::print(r.out,
               "[titan] {} - root - INFO - step: {:2d}  loss: {:8.5f}  grad_norm: {:7.4f}  "
               "memory: {:5.2f}GiB({:.2f}%)  tps: {}  tflops: {}  mfu: {}\n",
               clock_at(s.elapsed_s, Stamp::Millis), s.n, s.loss, s.grad_norm, p.memory.peak_reserved_gib, pct,
               with_commas(fmt::format("{}", std::llround(tokens_per_gpu_step / s.time_s))),
               with_commas(fmt::format("{:.2f}", tflops)), mfu);
  });
}

// tqdm's rate estimate with its default smoothing 0.3: a bias-corrected
// exponential average of the seconds per update.
struct TqdmRate {
  double ema = 0;
  int calls = 0;
  double operator()(double dt) {
    ema = 0.3 * dt + 0.7 * ema;
    ++calls;
    return (1 - std::pow(0.7, calls)) / ema;
  }
};

std::string hf_summary(const Run& r, double loss_sum) {
  const double n = static_cast<double>(r.t.size());
  double runtime = 0;
  for (double s : r.t) runtime += s;  // start_time is taken just before the loop: warm-up included
  runtime = py_round(runtime, 4);
  return fmt::format("{{'train_runtime': {}, 'train_samples_per_second': {}, 'train_steps_per_second': {}, "
                     "'train_loss': {}, 'epoch': {}}}",
                     py_repr(runtime), py_repr(py_round(static_cast<double>(r.w.plan.gbs) * n / runtime, 3)),
                     py_repr(py_round(n / runtime, 3)), py_repr(loss_sum / n), py_repr(py_round(n / 1000, 2)));
}

// Trainer with logging_steps 1: ProgressCallback's bar moves on at each step's
// end, then the step's dict is written above it; the summary dict at the end.
void write_hf(const Run& r) {
  TqdmRate rate;
  double loss_sum = 0;
  r.for_each_step([&](const Step& s) {
    fmt::print(r.out, "{}\n", tqdm_line({"", s.n, s.total, s.elapsed_s, rate(s.time_s), true, ""}));
    fmt::print(r.out, "{{'loss': {}, 'grad_norm': {}, 'learning_rate': {}, 'epoch': {}}}\n",
               py_repr(py_round(s.loss, 4)), py_repr(s.grad_norm), py_repr(s.lr),
               py_repr(py_round(static_cast<double>(s.n) / 1000, 2)));
    loss_sum += s.loss;
  });
  if (!r.t.empty()) fmt::print(r.out, "{}\n", hf_summary(r, loss_sum));
}

// ---------------------------------------------------------------- failures

struct Frame {
  const char* file;
  int line;
  const char* function;
};

// How a framework's run dies: the launcher's line tag (torchrun's "[rankN]: ";
// the deepspeed launcher, srun and single-process launches add none), where an
// OOM surfaces, and where the arguments are checked with which exception.
// The messages stay the simulator's own, which the diagnoser classifies.
struct FailureShape {
  const char* prefix;
  Frame oom;
  Frame args;
  const char* args_exception;
};

std::string oom_message(const Prediction& p) {
  const double total = p.hbm_gib;
  return fmt::format(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {:.2f} GiB. GPU 0 has a total capacity of "
      "{:.2f} GiB of which {:.2f} MiB is free. Including non-PyTorch memory, this process has {:.2f} GiB memory in "
      "use. Of the allocated memory {:.2f} GiB is allocated by PyTorch, and {:.2f} MiB is reserved by PyTorch but "
      "unallocated. If reserved but unallocated memory is large try setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
      "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      std::max(0.5, p.memory.total_gib - total), total, 300.0, total - 0.3, total - 1.5, 512.0);
}

void write_failure(const Prediction& p, const FailureShape& f, std::ostream& out) {
  const bool oom = p.failure == "oom";
  const Frame& frame = oom ? f.oom : f.args;
  const std::string lines[] = {
      "Traceback (most recent call last):",
      fmt::format("  File \"{}\", line {}, in {}", frame.file, frame.line, frame.function),
      oom ? oom_message(p) : fmt::format("{}: {}", f.args_exception, p.error)};
  for (const std::string& line : lines) fmt::print(out, "{}{}\n", f.prefix, line);
}

// ---------------------------------------------------------------- the formats

struct Flavour {
  std::string_view name;
  void (*write)(const Run&);
  FailureShape failure;
};

// Megatron-Core models (Bridge, NeMo) check the layout in TransformerConfig.__post_init__.
constexpr Frame kMcoreConfig{"/opt/megatron-lm/megatron/core/transformer/transformer_config.py", 740, "__post_init__"};

constexpr std::array<Flavour, 7> kFlavours = {{
    {"megatron", write_megatron,
     {"[rank0]: ", {"/workspace/megatron/training/training.py", 1478, "train_step"},
      {"/workspace/megatron/training/arguments.py", 402, "validate_args"}, "AssertionError"}},
    {"bridge", write_bridge,
     {"[rank0]: ", {"/opt/Megatron-Bridge/src/megatron/bridge/training/train.py", 612, "train_step"}, kMcoreConfig,
      "ValueError"}},
    {"nemo", write_nemo,
     {"", {"/opt/NeMo/nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py", 696, "training_step"},
      kMcoreConfig, "ValueError"}},
    {"automodel", write_automodel,
     {"", {"/opt/Automodel/nemo_automodel/recipes/llm/train_ft.py", 1187, "_run_train_optim_step"},
      {"/opt/Automodel/nemo_automodel/recipes/llm/train_ft.py", 912, "setup"}, "ValueError"}},
    {"torchtitan", write_torchtitan,
     {"", {"/workspace/torchtitan/torchtitan/train.py", 436, "forward_backward_step"},
      {"/workspace/torchtitan/torchtitan/distributed/parallel_dims.py", 48, "_validate"}, "AssertionError"}},
    {"deepspeed", write_deepspeed,
     {"", {"/workspace/Megatron-DeepSpeed/megatron/training.py", 791, "train_step"},
      {"/workspace/Megatron-DeepSpeed/megatron/arguments.py", 362, "validate_args"}, "AssertionError"}},
    {"hf", write_hf,
     {"", {"/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", 3612, "training_step"},
      {"/usr/local/lib/python3.10/dist-packages/transformers/training_args.py", 1621, "__post_init__"},
      "ValueError"}},
}};

const Flavour& flavour_for(const Workload& w, const RunOptions& o) {
  const std::string name = o.flavour.empty() ? log_flavour(w.plan) : o.flavour;
  for (const Flavour& f : kFlavours) {
    if (f.name == name) return f;
  }
  throw std::invalid_argument(
      fmt::format("unknown log flavour '{}' (expected one of: {})", name, fmt::join(log_flavours(), ", ")));
}

void check_stragglers(const RunOptions& o) {
  if (!(o.straggler_probability >= 0 && o.straggler_probability <= 1)) {
    throw std::invalid_argument(
        fmt::format("straggler_probability {} is not between 0 and 1", o.straggler_probability));
  }
  if (!(o.straggler_slowdown > 0)) {
    throw std::invalid_argument(fmt::format("straggler_slowdown {} is not positive", o.straggler_slowdown));
  }
}

}  // namespace

const std::vector<std::string>& log_flavours() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Flavour& f : kFlavours) v.emplace_back(f.name);
    return v;
  }();
  return names;
}

// HyperPod's llmft recipes are Hugging Face TrainingArguments run in a closed
// container whose per-step format is not public (logs.md §8): the HF Trainer's
// is the closest. Its other dialects run on NeMo (see write_nemo).
std::string log_flavour(const recipe::Plan& plan) {
  const std::string& f = plan.framework;
  if (f == "bridge" || f == "automodel" || f == "torchtitan") return f;
  if (f == "axolotl") return "hf";
  if (f == "hyperpod") return plan.dialect == "llmft" ? "hf" : "nemo";
  return "megatron";
}

double write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out) {
  const Flavour& flavour = flavour_for(w, o);
  check_stragglers(o);
  std::mt19937_64 rng(o.seed);
  if (!p.ok) {
    if (o.before_lines) o.before_lines(kStartupSeconds);
    write_failure(p, flavour.failure, out);
    return kStartupSeconds;
  }
  const std::vector<double> t = step_times(p.step_time_s, o, rng);
  flavour.write(Run{w, p, t, rng, out, o.before_lines});
  double total = kStartupSeconds;
  for (double s : t) total += s;
  return total;
}

RunOptions run_options(const Perturbation& truth, std::uint64_t seed, int steps) {
  RunOptions o;
  o.steps = steps;
  o.seed = seed;
  o.cv = truth.noise_cv;
  o.straggler_probability = truth.straggler_probability;
  o.straggler_slowdown = truth.straggler_slowdown;
  return o;
}

}  // namespace attune::sim
