#include "attune/sim/run_log.h"

#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace attune::sim {

namespace {

constexpr double kStartupS = 60;  // process start, NCCL init, checkpoint load

double loss_at(long step, std::mt19937_64& rng) {
  std::normal_distribution<double> jitter(0, 0.01);
  return 2.0 + 9.0 * std::exp(-static_cast<double>(step) / 150.0) + jitter(rng);
}

// Seconds for each step: a slow first step, a slightly slow second, then the
// steady time with Gaussian noise (never below half the steady time).
std::vector<double> step_times(double steady, const RunOptions& o, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1.0, o.cv);
  std::vector<double> t;
  for (int i = 0; i < o.steps; ++i) {
    double f = std::max(0.5, noise(rng));
    if (i == 0) f *= o.warmup_factor;
    if (i == 1) f *= 1.09;
    t.push_back(steady * f);
  }
  return t;
}

std::string thousands(double v) {
  return fmt::format("{:L}", static_cast<long long>(std::llround(v)));
}

void write_megatron(const Workload& w, const Prediction& p, const std::vector<double>& t, std::mt19937_64& rng,
                    std::ostream& out) {
  const auto& pl = w.plan;
  const int last_rank = pl.world - 1;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const long it = static_cast<long>(i) + 1;
    const double tflops = p.tflops_per_gpu * p.step_time_s / t[i];
    const double lr = 3e-4 * std::min(1.0, it / 10.0);
    fmt::print(out,
               "[rank{}]:  [2026-11-30 10:{:02d}:{:02d}.000000] iteration {:8d}/{:8d} | consumed samples: {:12d} | "
               "elapsed time per iteration (ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): {:.1f} | learning rate: "
               "{:.6E} | global batch size: {:5d} | lm loss: {:.6E} | loss scale: 1.0 | grad norm: {:.3f} | number of "
               "skipped iterations:   0 | number of nan iterations:   0 |\n",
               last_rank, (it / 60) % 60, it % 60, it, t.size(), it * pl.gbs, t[i] * 1e3, tflops, lr, pl.gbs,
               loss_at(it, rng), 1.0 + 0.2 * std::exp(-it / 50.0));
    if (it == 1) {
      const double mib = 1024;
      fmt::print(out,
                 "[rank0]: [Rank 0] (after 1 iterations) memory (MB) | allocated: {:.2f} | max allocated: {:.2f} | "
                 "reserved: {:.2f} | max reserved: {:.2f}\n",
                 (p.memory.weights_gib + p.memory.gradients_gib + p.memory.optimizer_gib) * mib,
                 p.memory.peak_allocated_gib * mib, p.memory.peak_reserved_gib * mib, p.memory.peak_reserved_gib * mib);
    }
  }
}

void write_torchtitan(const Workload& w, const Prediction& p, const std::vector<double>& t, std::mt19937_64& rng,
                      std::ostream& out) {
  const double tokens_per_gpu_step = static_cast<double>(w.plan.gbs) * w.plan.seq_len / w.plan.world;
  const double pct = 100 * p.memory.peak_reserved_gib / p.hbm_gib;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const long step = static_cast<long>(i) + 1;
    const double tps = tokens_per_gpu_step / t[i];
    const double tflops = p.tflops_per_gpu * p.step_time_s / t[i];
    const std::string mfu = w.knobs.fp8 ? "N/A" : fmt::format("{:.2f}%", 100 * tflops / (p.mfu > 0 ? p.tflops_per_gpu / p.mfu : 1));
    fmt::print(out,
               "[titan] 2026-11-30 10:{:02d}:{:02d},000 - root - INFO - step: {:2d}  loss: {:8.5f}  grad_norm: {:7.4f}  "
               "memory: {:5.2f}GiB({:.2f}%)  tps: {}  tflops: {:.2f}  mfu: {}\n",
               (step / 60) % 60, step % 60, step, loss_at(step, rng), 1.0 + 0.2 * std::exp(-step / 50.0),
               p.memory.peak_reserved_gib, pct, thousands(tps), tflops, mfu);
  }
}

void write_hf(const Workload& w, const std::vector<double>& t, std::mt19937_64& rng, std::ostream& out) {
  double elapsed = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const long step = static_cast<long>(i) + 1;
    elapsed += t[i];
    fmt::print(out, "{{'loss': {:.4f}, 'grad_norm': {:.4f}, 'learning_rate': {:.2e}, 'epoch': {:.2f}}}\n",
               loss_at(step, rng), 1.0 + 0.2 * std::exp(-step / 50.0), 2e-5, step / 1000.0);
  }
  fmt::print(out, "{{'train_runtime': {:.4f}, 'train_samples_per_second': {:.3f}, 'train_steps_per_second': {:.3f}, "
                  "'train_loss': {:.4f}, 'epoch': {:.2f}}}\n",
             elapsed, static_cast<double>(w.plan.gbs) * t.size() / elapsed, t.size() / elapsed, 2.5, t.size() / 1000.0);
}

void write_failure(const Prediction& p, std::ostream& out) {
  if (p.failure == "oom") {
    const double total = p.hbm_gib;
    fmt::print(out,
               "[rank0]: Traceback (most recent call last):\n"
               "[rank0]:   File \"/workspace/train.py\", line 412, in train_step\n"
               "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {:.2f} GiB. GPU 0 has a total "
               "capacity of {:.2f} GiB of which {:.2f} MiB is free. Including non-PyTorch memory, this process has "
               "{:.2f} GiB memory in use. Of the allocated memory {:.2f} GiB is allocated by PyTorch, and {:.2f} MiB "
               "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
               "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n",
               std::max(0.5, p.memory.total_gib - total), total, 300.0, total - 0.3, total - 1.5, 512.0);
    return;
  }
  fmt::print(out,
             "[rank0]: Traceback (most recent call last):\n"
             "[rank0]:   File \"/workspace/megatron/training/arguments.py\", line 402, in validate_args\n"
             "[rank0]: AssertionError: {}\n",
             p.error);
}

}  // namespace

std::string log_flavour(const std::string& framework) {
  if (framework == "torchtitan") return "torchtitan";
  if (framework == "axolotl") return "hf";
  return "megatron";
}

double write_run_log(const Workload& w, const Prediction& p, const RunOptions& o, std::ostream& out) {
  std::mt19937_64 rng(o.seed);
  if (!p.ok) {
    write_failure(p, out);
    return kStartupS;
  }
  const std::vector<double> t = step_times(p.step_time_s, o, rng);
  const std::string flavour = log_flavour(w.plan.framework);
  if (flavour == "torchtitan") {
    write_torchtitan(w, p, t, rng, out);
  } else if (flavour == "hf") {
    write_hf(w, t, rng, out);
  } else {
    write_megatron(w, p, t, rng, out);
  }
  double total = kStartupS;
  for (double s : t) total += s;
  return total;
}

}  // namespace attune::sim
