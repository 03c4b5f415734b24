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

#include "attune/diagnose/flops.h"

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

// What a launch draws before its first step: the run-level factor of its
// placement and clocks (its CV grows with the nodes and with the cross-node
// communication it exposes), slow nodes, when a node fails, whether a run
// near the memory limit OOMs late, and at which step (docs/simulator.md).
struct RunDraws {
  double factor = 1;
  double node_failure_s = -1;  // since the first step; < 0: none
  int late_oom_step = 0;       // 0: none
};

RunDraws draw_run(const Workload& w, const RunOptions& o, std::mt19937_64& rng) {
  RunDraws d;
  const NoiseModel& n = o.noise;
  const int nodes = std::max(1, w.plan.nodes);
  const double cv = n.run_cv + n.per_node_doubling_cv * std::log2(nodes) + n.cross_node_cv * o.cross_node_share;
  if (cv > 0) d.factor = std::max(0.7, std::normal_distribution<double>(1.0, cv)(rng));
  if (n.slow_node_probability > 0) {
    std::bernoulli_distribution slow(n.slow_node_probability);
    bool any = false;
    for (int i = 0; i < nodes; ++i) any = slow(rng) || any;
    if (any) d.factor *= n.slow_node_slowdown;
  }
  if (n.node_failure_per_node_hour > 0)
    d.node_failure_s = std::exponential_distribution<double>(n.node_failure_per_node_hour * nodes / 3600.0)(rng);
  if (o.oom_risk > 0 && std::bernoulli_distribution(std::min(1.0, o.oom_risk))(rng) && o.steps >= 3)
    d.late_oom_step = std::uniform_int_distribution<int>(3, o.steps)(rng);
  return d;
}

// Seconds for each step: a slow first step (its extra set-up on top of three
// steady steps' worth), a slightly slow second, then the steady time with
// Gaussian jitter (never below half of it); a step waits for a straggling GPU
// with the chance that one of the world's GPUs straggles.
std::vector<double> step_times(double steady, int world, const RunOptions& o, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1.0, o.noise.step_cv);
  const double p_gpu = o.noise.straggler_probability;
  const double p_step = p_gpu > 0 ? 1 - std::pow(1 - p_gpu, std::max(1, world)) : 0;
  std::bernoulli_distribution straggler(p_step);
  std::vector<double> t;
  for (int i = 0; i < o.steps; ++i) {
    double f = o.noise.step_cv > 0 ? std::max(0.5, noise(rng)) : 1.0;
    double extra = 0;
    if (i == 0) {
      f *= 3;
      extra = o.first_step_extra_s;
    } else if (i == 1) {
      f *= 1.09;
    } else if (p_step > 0 && straggler(rng)) {  // no draw when off: old seeds keep their logs
      f *= o.noise.straggler_slowdown;
    }
    t.push_back(steady * f + extra);
  }
  return t;
}

// What every format prints about one step.
struct Step {
  long n = 0;            // 1-based
  long total = 0;        // steps in the run
  double time_s = 0;     // this step's wall time
  double elapsed_s = 0;  // training time at the end of this step (start-up not counted)
  double wall_s = 0;     // since the job started, at the end of this step
  double loss = 0;
  double grad_norm = 0;
  double lr = 0;
};

struct Run {
  const Workload& w;
  const Prediction& p;
  const std::vector<double>& t;  // the steps that complete (a failing run stops early)
  long total;                    // steps the run was launched for
  double startup_s;
  std::mt19937_64& rng;
  std::ostream& out;
  const std::function<void(double)>& before_lines;

  // The per-step loop every format shares: print(step) in order, the losses
  // drawn from the run's generator after the step times.
  template <class F>
  void for_each_step(F&& print) const {
    Step s;
    s.total = total;
    for (std::size_t i = 0; i < t.size(); ++i) {
      s.n = static_cast<long>(i) + 1;
      s.time_s = t[i];
      s.elapsed_s += t[i];
      s.wall_s = startup_s + s.elapsed_s;
      s.loss = loss_at(s.n, rng);
      s.grad_norm = 1.0 + 0.2 * std::exp(-static_cast<double>(s.n) / 50.0);
      s.lr = 3e-4 * std::min(1.0, static_cast<double>(s.n) / 10.0);
      if (before_lines) before_lines(s.wall_s);
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

std::string clock_at(double wall_s, Stamp stamp) {
  const long long us = std::llround(wall_s * 1e6);
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
// bare CR, which the diagnoser's reader collapses to the last one; published
// log excerpts (and captures that split on CR) have one refresh per line, as here.
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
                     clock_at(s.wall_s, stamp), s.n, s.total, s.n * gbs, s.time_s * 1e3, r.tflops(s.time_s), s.lr,
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
  const std::string stamp = clock_at(s.wall_s, Stamp::Millis);
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

// The HyperPod training adapter's compute_tflops: no causal discount, a
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

// NeMo 1's Lightning bar: the running loss (old Lightning, "%.3g"), the logger
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
// "Step Time", "TFLOPS/GPU", "Samples/Second"; checkpointless runs
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
               clock_at(s.wall_s, Stamp::Seconds), s.n, s.loss, s.grad_norm, s.lr, r.p.memory.peak_allocated_gib,
               tps, tps / replicas, static_cast<long long>(tokens));
  });
}

void write_torchtitan(const Run& r) {
  const auto& pl = r.w.plan;
  const auto& p = r.p;
  const double tokens_per_gpu_step = r.tokens_per_step() / pl.world;
  const double pct = 100 * p.memory.peak_reserved_gib / p.hbm_gib;
  const double peak = p.mfu > 0 ? p.tflops_per_gpu / p.mfu : 1;
  // torchtitan counts attention in full, where the model's figure halves it for causality.
  const double halved = diagnose::flops_per_token(r.w.model, pl.seq_len, diagnose::FlopsConvention::CausalHalved);
  const double full = diagnose::flops_per_token(r.w.model, pl.seq_len, diagnose::FlopsConvention::FullAttention);
  const double convention = halved > 0 && full > 0 ? full / halved : 1;
  r.for_each_step([&](const Step& s) {
    const double tflops = r.tflops(s.time_s) * convention;
    const std::string mfu = r.w.knobs.fp8 ? "N/A" : fmt::format("{:.2f}%", 100 * tflops / peak);
    fmt::print(r.out,
               "[titan] {} - root - INFO - step: {:2d}  loss: {:8.5f}  grad_norm: {:7.4f}  "
               "memory: {:5.2f}GiB({:.2f}%)  tps: {}  tflops: {}  mfu: {}\n",
               clock_at(s.wall_s, Stamp::Millis), s.n, s.loss, s.grad_norm, p.memory.peak_reserved_gib, pct,
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

// An exception line: the message as given when it names its exception
// ("ModuleNotFoundError: No module named 'deep_ep'"), else under `fallback`.
std::string exception_line(const std::string& message, const char* fallback) {
  const std::size_t colon = message.find(": ");
  const std::string head = colon == std::string::npos ? "" : message.substr(0, colon);
  const bool named = !head.empty() && head.find(' ') == std::string::npos &&
                     (head.ends_with("Error") || head.ends_with("Exception"));
  return named ? message : fmt::format("{}: {}", fallback, message);
}

void write_traceback(const FailureShape& f, const Frame& frame, const std::string& last, std::ostream& out) {
  const std::string lines[] = {"Traceback (most recent call last):",
                               fmt::format("  File \"{}\", line {}, in {}", frame.file, frame.line, frame.function), last};
  for (const std::string& line : lines) fmt::print(out, "{}{}\n", f.prefix, line);
}

constexpr Frame kImportFrame{"/usr/lib/python3/dist-packages/megatron/core/transformer/moe/fused_a2a.py", 16, "<module>"};
constexpr Frame kOptimizerFrame{"/usr/local/lib/python3.12/dist-packages/torch/optim/adam.py", 167, "_init_group"};
constexpr Frame kKernelFrame{"/usr/local/lib/python3.12/dist-packages/torch/autograd/graph.py", 825, "_engine_run_backward"};

// torch's c10d log prefix on a rank's line: "[rankN]:[E1130 10:41:07.123456 ProcessGroupNCCL.cpp:L] ".
std::string c10d_prefix(int rank, double wall_s, int line) {
  const long long us = std::llround(wall_s * 1e6);
  const std::tm tm = fmt::gmtime(kJobStart + static_cast<std::time_t>(us / 1'000'000));
  return fmt::format("[rank{}]:[E{:%m%d %H:%M:%S}.{:06d} ProcessGroupNCCL.cpp:{}] ", rank, tm, us % 1'000'000, line);
}

// NCCL's watchdog taking the job down after a collective ran past its timeout
// (the lines torch 2.x prints for an NCCL timeout, and for a hang once the timeout fires).
void write_watchdog(int rank, double wall_s, long seq, const char* op, double timeout_s, double ran_s, std::ostream& out) {
  const std::string pre = c10d_prefix(rank, wall_s, 632);
  fmt::print(out,
             "{}[Rank {}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={}, OpType={}, NumelIn=4194304, "
             "NumelOut=4194304, Timeout(ms)={}) ran for {} milliseconds before timing out.\n",
             pre, rank, seq, op, std::llround(timeout_s * 1000), std::llround(ran_s * 1000));
  fmt::print(out,
             "{}[PG ID 0 PG GUID 0(default_pg) Rank {}] Exception (either an error or timeout) detected by watchdog at "
             "work: {}, last enqueued NCCL work: {}, last completed NCCL work: {}.\n",
             c10d_prefix(rank, wall_s, 2168), rank, seq, seq, seq - 1);
  fmt::print(out, "{}Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, "
                  "subsequent GPU operations might run on corrupted/incomplete data.\n",
             c10d_prefix(rank, wall_s, 1667));
  fmt::print(out, "{}To avoid data inconsistency, we are taking the entire process down.\n", c10d_prefix(rank, wall_s, 1673));
  fmt::print(out, "terminate called after throwing an instance of 'c10::DistBackendError'\n");
}

void write_nccl_error(const FailureShape& f, const std::string& message, std::ostream& out) {
  write_traceback(f, {"/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", 2806, "all_reduce"},
                  message.empty() ? "torch.distributed.DistBackendError: NCCL error in: "
                                    "/opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, "
                                    "internal error - please report this issue to the NCCL developers, NCCL version 2.23.4"
                                  : exception_line(message, "torch.distributed.DistBackendError"),
                  out);
  fmt::print(out, "{}ncclInternalError: Internal check failed.\n", f.prefix);
  fmt::print(out, "{}Last error:\n{}NET/IB : Got completion from peer 10.0.3.17<40571> with status=12 opcode=1 len=0 "
                  "vendor err 129 (Recv)\n",
             f.prefix, f.prefix);
}

void write_illegal_access(const FailureShape& f, std::ostream& out) {
  write_traceback(f, kKernelFrame, "RuntimeError: CUDA error: an illegal memory access was encountered", out);
  fmt::print(out, "{}CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
                  "might be incorrect.\n{}For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n",
             f.prefix, f.prefix);
}

// slurmstepd's and srun's lines when a node of the job dies.
void write_node_failure(const Workload& w, double wall_s, std::ostream& out) {
  const long long s = std::llround(wall_s);
  const std::tm tm = fmt::gmtime(kJobStart + static_cast<std::time_t>(s));
  const int node = std::max(1, w.plan.nodes) - 1;
  fmt::print(out, "[rank{}]:[E{:%m%d %H:%M:%S}.000000 ProcessGroupNCCL.cpp:1895] NCCL error: remote process exited or "
                  "there was a network error, NCCL version 2.23.4\n[rank{}]: ncclRemoteError: A call failed possibly due "
                  "to a network error or a remote process exiting prematurely. Connection reset by peer\n",
             0, tm, 0);
  fmt::print(out, "srun: error: Node failure on node-{}\n", node);
  fmt::print(out, "slurmstepd: error: *** STEP 4242.0 ON node-{} CANCELLED AT {:%Y-%m-%dT%H:%M:%S} DUE TO NODE FAILURE, "
                  "SEE SLURMCTLD LOG FOR DETAILS ***\n",
             node, tm);
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

void check_noise(const RunOptions& o) {
  const NoiseModel& n = o.noise;
  if (!(n.straggler_probability >= 0 && n.straggler_probability <= 1)) {
    throw std::invalid_argument(fmt::format("straggler probability {} is not between 0 and 1", n.straggler_probability));
  }
  if (!(n.straggler_slowdown > 0)) {
    throw std::invalid_argument(fmt::format("straggler slowdown {} is not positive", n.straggler_slowdown));
  }
  if (!(n.step_cv >= 0 && n.run_cv >= 0)) throw std::invalid_argument("noise CVs must not be negative");
}

bool startup_failure(const Prediction& p) { return p.failure == "invalid_argument" || p.failure == "import_error"; }

// The steps that complete before the run ends, and how and when it ends.
struct Ending {
  std::size_t completed = 0;   // steps that print their lines
  std::string failure;         // "" or the diagnoser's class
  double at_s = 0;             // since the job started: when the failure's text appears
  double stalled_s = -1;
};

Ending ending_of(const Prediction& p, const RunOptions& o, const RunDraws& d, const std::vector<double>& t) {
  Ending e;
  e.completed = t.size();
  auto end_of = [&](std::size_t steps) {
    double s = o.startup_s;
    for (std::size_t i = 0; i < steps && i < t.size(); ++i) s += t[i];
    return s;
  };
  if (p.failure == "oom") {
    e = {0, "oom", o.startup_s + (p.oom_at_optimizer ? t.front() : 0.4 * t.front()), -1};
  } else if (!p.failure.empty()) {
    const std::size_t k = static_cast<std::size_t>(std::clamp(p.fails_at_step, 1, static_cast<int>(t.size())));
    e.completed = k - 1;
    e.failure = p.failure;
    const double start = end_of(k - 1);
    if (p.failure == "hang") {
      e.stalled_s = start;
      e.at_s = start + o.nccl_timeout_s;
    } else if (p.failure == "nccl_timeout") {
      e.stalled_s = start;
      e.at_s = start + 15 * p.step_time_s;  // the job's collective timeout
    } else {
      e.at_s = start + 0.5 * t[k - 1];
    }
  } else if (d.late_oom_step > 0) {
    const std::size_t k = static_cast<std::size_t>(std::min<int>(d.late_oom_step, static_cast<int>(t.size())));
    e = {k - 1, "oom", end_of(k - 1) + 0.6 * t[k - 1], -1};
  }
  if (d.node_failure_s >= 0 && o.startup_s + d.node_failure_s < (e.failure.empty() ? end_of(t.size()) : e.at_s)) {
    const double at = o.startup_s + d.node_failure_s;
    std::size_t k = 0;
    while (k < t.size() && end_of(k + 1) <= at) ++k;
    e = {k, "node_failure", at, -1};
  }
  return e;
}

void write_ending(const Workload& w, const Prediction& p, const FailureShape& f, const Ending& e, std::ostream& out) {
  const long seq = static_cast<long>(e.completed + 1) * 2 * std::max(1, w.model.layers) + 17;
  if (e.failure == "oom") {
    Prediction shown = p;
    if (p.ok) shown.memory.total_gib = p.hbm_gib + 0.6;  // a late OOM: a spike just over the limit
    write_traceback(f, p.oom_at_optimizer ? kOptimizerFrame : f.oom, oom_message(shown), out);
  } else if (e.failure == "hang") {
    write_watchdog(std::max(0, w.plan.world - 1), e.at_s, seq, "ALLREDUCE", e.at_s - e.stalled_s,
                   e.at_s - e.stalled_s + 0.046, out);
  } else if (e.failure == "nccl_timeout") {
    write_watchdog(std::max(0, w.plan.world - 1), e.at_s, seq, w.model.is_moe() ? "ALLTOALL_BASE" : "_REDUCE_SCATTER_BASE",
                   e.at_s - e.stalled_s, e.at_s - e.stalled_s + 0.012, out);
  } else if (e.failure == "nccl_error") {
    write_nccl_error(f, p.error, out);
  } else if (e.failure == "illegal_memory_access") {
    write_illegal_access(f, out);
  } else if (e.failure == "node_failure") {
    write_node_failure(w, e.at_s, out);
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
// container whose per-step format is not public: the HF Trainer's
// is the closest. Its other dialects run on NeMo (see write_nemo).
std::string log_flavour(const recipe::Plan& plan) {
  const std::string& f = plan.framework;
  if (f == "bridge" || f == "automodel" || f == "torchtitan") return f;
  if (f == "axolotl") return "hf";
  if (f == "hyperpod") return plan.dialect == "llmft" ? "hf" : "nemo";
  return "megatron";
}

RunOutcome write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out) {
  const Flavour& flavour = flavour_for(w, o);
  check_noise(o);
  std::mt19937_64 rng(o.seed);
  RunOutcome outcome;
  if (startup_failure(p)) {
    // Imports fail before the process group forms; argument checks after it.
    const double at = o.startup_s * (p.failure == "import_error" ? 0.25 : 0.4);
    if (o.before_lines) o.before_lines(at);
    const bool import = p.failure == "import_error";
    write_traceback(flavour.failure, import ? kImportFrame : flavour.failure.args,
                    exception_line(p.error, import ? "ImportError" : flavour.failure.args_exception), out);
    outcome.elapsed_s = at;
    outcome.failure = p.failure;
    return outcome;
  }
  const RunDraws d = draw_run(w, o, rng);
  outcome.run_factor = d.factor;
  std::vector<double> t = step_times(p.step_time_s * d.factor, w.plan.world, o, rng);
  const Ending e = ending_of(p, o, d, t);
  t.resize(e.completed);
  flavour.write(Run{w, p, t, o.steps, o.startup_s, rng, out, o.before_lines});
  outcome.elapsed_s = o.startup_s;
  for (double s : t) outcome.elapsed_s += s;
  if (!e.failure.empty()) {
    if (o.before_lines) o.before_lines(e.at_s);
    write_ending(w, p, flavour.failure, e, out);
    outcome.elapsed_s = e.at_s;
    outcome.failure = e.failure;
    outcome.failed_at_step = static_cast<int>(e.completed) + 1;
    outcome.stalled_at_s = e.stalled_s;
  }
  return outcome;
}

double startup_seconds(const Workload& w, const Perturbation& truth) {
  const recipe::Plan& p = w.plan;
  const int world = std::max(1, p.world);
  // Container start and imports; NCCL bootstrap and communicator set-up,
  // longer with the world (torch's TCPStore rendezvous, NCCL's ring/tree
  // search); the model built and its weights initialised; the data loader
  // and its workers forked; DeepEP's buffers registered; FSDP wrapping.
  double s = 45 + 5 + 2.5 * std::log2(world) + 0.5 * std::max(1, p.nodes);
  const double params = static_cast<double>(std::max(1, w.model.layers)) * w.model.hidden * w.model.hidden * 12 /
                        std::max(1, p.tp * p.pp);
  s += 10 + params * 2 / 4e9;  // weights built and initialised at ~4 GB/s per GPU
  s += 5 + 2 * worker_count(w.knobs.get(Choice::Workers));
  if (w.knobs.deepep() && w.plan.ep > 1) s += 12;
  if (w.knobs.zero_stage >= 2) s += 10;
  return s * truth.startup;
}

double first_step_extra_seconds(const Workload& w) {
  const int layers = (std::max(1, w.model.layers) + std::max(1, w.plan.pp) - 1) / std::max(1, w.plan.pp);
  double s = 15;  // allocator growth, lazy communicators, kernel autotuning
  // torch.compile traces and compiles on the first call (torchtitan,
  // AutoModel, Axolotl; Megatron-family runs have TE's fused kernels instead).
  const bool native = w.plan.framework == "torchtitan" || w.plan.framework == "axolotl";
  if (native && w.knobs.compiled()) s += 40 + 2.0 * layers;
  if (w.knobs.cuda_graphs()) s += 10 + 0.3 * layers;  // capture after the warm-up iterations
  return s;
}

double expected_run_seconds(const Workload& w, const Prediction& p, const Perturbation& truth, int steps) {
  const double steady = p.step_time_s;
  double s = startup_seconds(w, truth) + first_step_extra_seconds(w);
  if (steps >= 1) s += 3 * steady;
  if (steps >= 2) s += 1.09 * steady;
  if (steps > 2) s += (steps - 2) * steady;
  return s;
}

RunOptions run_options(const Workload& w, const Prediction& p, const Perturbation& truth, std::uint64_t seed, int steps) {
  RunOptions o;
  o.steps = steps;
  o.seed = seed;
  o.noise = truth.noise;
  o.startup_s = startup_seconds(w, truth);
  o.first_step_extra_s = first_step_extra_seconds(w);
  o.oom_risk = p.oom_risk;
  if (p.step_time_s > 0 && w.plan.nodes > 1) {
    const StepBreakdown& b = p.breakdown;
    o.cross_node_share = std::min(1.0, (b.dp_comm_s + b.ep_comm_s + b.pp_comm_s) / p.step_time_s);
  }
  return o;
}

}  // namespace attune::sim
