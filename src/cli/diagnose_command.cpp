// `attune diagnose LOG...`: the steady-state throughput, memory, loss and
// failure of a run, read from its logs.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/cli/commands.h"
#include "attune/cli/diagnosis_output.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct DiagnoseArgs {
  std::vector<std::string> logs;
  std::string profile;
  std::string recipe;
  std::string framework;
  std::string model;
  std::string gpu;
  int world = 0;
  long long seq_len = 0;
  long long global_batch = 0;
  bool json = false;
};

diagnose::DiagnoseOptions options_from(const DiagnoseArgs& a) {
  diagnose::DiagnoseOptions o;
  if (!a.recipe.empty()) {
    recipe::RecipeOptions ro;
    ro.model = a.model;
    ro.hardware.gpu = a.gpu;
    o = diagnose_options_for(recipe::Recipe::load(a.recipe, ro));
  }
  o.framework = a.framework;
  if (!a.model.empty()) {
    const recipe::ModelSpec* m = recipe::find_model_preset(a.model);
    if (!m) throw InputError({}, "--model", "unknown model preset '" + a.model + "'");
    if (!o.model) o.model = *m;
  }
  if (!a.gpu.empty()) {
    if (!recipe::normalize_gpu(a.gpu)) throw InputError({}, "--gpu", "expected h100, h200 or b200, got '" + a.gpu + "'");
    o.gpu = *recipe::normalize_gpu(a.gpu);
  }
  if (a.world > 0) o.world = a.world;
  if (a.seq_len > 0) o.seq_len = a.seq_len;
  if (a.global_batch > 0) o.global_batch = a.global_batch;
  return o;
}

std::string num(const std::optional<double>& v, const char* fmt_spec, const std::string& unit) {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) + unit : "-";
}

// The framework's own split of a step, when it printed timers.
void print_timers(const diagnose::TimeBreakdown& b) {
  std::vector<std::string> parts;
  auto part = [&](const char* label, const std::optional<double>& ms) {
    if (ms) parts.push_back(fmt::format("{} {:.1f} ms", label, *ms));
  };
  part("step", b.total_ms);
  part("compute", b.compute_ms);
  part("DP comm", b.dp_comm_ms);
  part("PP comm", b.pp_comm_ms);
  part("data", b.data_ms);
  part("optimizer", b.optimizer_ms);
  if (b.straggler_spread) parts.push_back(fmt::format("rank spread {:.1f}%", *b.straggler_spread * 100));
  if (!parts.empty()) fmt::print("timers      {}\n", fmt::join(parts, " · "));
}

}  // namespace

diagnose::DiagnoseOptions diagnose_options_for(const recipe::Recipe& r) {
  diagnose::DiagnoseOptions o;
  const recipe::Plan p = r.plan();
  o.model = r.model();
  o.gpu = p.gpu;
  o.precision = p.precision;
  o.world = p.world;
  o.seq_len = p.seq_len;
  o.global_batch = p.gbs;
  return o;
}

void print_diagnosis(const diagnose::Diagnosis& d) {
  fmt::print("framework   {}\n", d.framework.empty() ? "unknown" : d.framework);
  fmt::print("steps       {} logged (last step {}), {} used for the steady state{}\n", d.steps, d.last_step,
             d.steady.samples_used, d.steady.drift ? " — DRIFT: step time keeps rising" : "");
  fmt::print("throughput  {} tokens/s/GPU · step {} · {} TFLOP/s/GPU · MFU {}\n",
             num(d.tokens_per_s_per_gpu, "{:.0f}", ""), num(d.step_time_s, "{:.3f}", " s"),
             num(d.tflops_per_gpu, "{:.1f}", ""), d.mfu ? fmt::format("{:.1f}%", *d.mfu * 100) : "-");
  if (!d.flops_convention.empty() && d.tflops_per_gpu) {
    fmt::print("            FLOPs convention {}{}\n", d.flops_convention,
               d.peak_tflops ? fmt::format(", peak {:.0f} TFLOP/s", *d.peak_tflops) : "");
  }
  fmt::print("noise       CV {} · 95% interval of the mean {} – {}\n",
             d.steady.cv ? fmt::format("{:.1f}%", *d.steady.cv * 100) : "-", num(d.steady.ci95_low_s, "{:.3f}", " s"),
             num(d.steady.ci95_high_s, "{:.3f}", " s"));
  fmt::print("memory      peak allocated {} · reserved {} · headroom {}\n", num(d.peak_allocated_gib, "{:.1f}", " GiB"),
             num(d.peak_reserved_gib, "{:.1f}", " GiB"), num(d.headroom_gib, "{:.1f}", " GiB"));
  print_timers(d.time_breakdown);
  if (!d.loss.empty()) {
    fmt::print("loss        {:.4f} at step {} ({} values)\n", d.loss.back().second, d.loss.back().first, d.loss.size());
  }
  if (d.failure) {
    fmt::print("failure     {} at line {}: {}\n", to_string(d.failure->kind), d.failure->line, d.failure->evidence);
  } else {
    fmt::print("failure     none\n");
  }
  for (const auto& n : d.notes) fmt::print("note        {}\n", n);
}

namespace {

void print_profile(const diagnose::ProfileSummary& p) {
  auto pct = [](const std::optional<double>& share) { return share ? fmt::format(" ({:.0f}%)", *share * 100) : ""; };
  auto ms = [](double s) { return fmt::format("{:.1f} ms", s * 1e3); };
  fmt::print("profile     {}{}: compute {}{} · communication {}{} · memory {}{}\n", p.source,
             p.window_s ? fmt::format(", window {}", ms(*p.window_s)) : "", ms(p.compute_s), pct(p.compute_share),
             ms(p.communication_s), pct(p.communication_share), ms(p.memory_s), pct(p.memory_share));
  if (p.exposed_communication_s) {
    fmt::print("            exposed communication {}{} · idle {}{} · overlap {}\n", ms(*p.exposed_communication_s),
               pct(p.exposed_communication_share), p.idle_s ? ms(*p.idle_s) : "-", pct(p.idle_share),
               p.overlap_pct ? fmt::format("{:.0f}%", *p.overlap_pct) : "-");
  }
  const std::size_t shown = std::min<std::size_t>(p.top_kernels.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& k = p.top_kernels[i];
    std::string name = k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name;
    fmt::print("            {:>4.0f}% {} [{}]\n", k.share * 100, name, k.kind);
  }
  for (const auto& n : p.notes) fmt::print("note        {}\n", n);
}

int run_diagnose(const DiagnoseArgs& a) {
  diagnose::Diagnosis d;
  if (!a.logs.empty()) {
    d = diagnose::diagnose_logs(a.logs, options_from(a));
  } else if (a.profile.empty()) {
    throw InputError({}, "LOG", "give at least one log file, or --profile FILE");
  }
  if (!a.profile.empty()) d.profile = diagnose::read_profile(a.profile);
  if (a.json) {
    print_json(diagnose::to_json(d));
  } else if (a.logs.empty()) {
    print_profile(*d.profile);
  } else {
    print_diagnosis(d);
    if (d.profile) print_profile(*d.profile);
  }
  return 0;
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto args = std::make_shared<DiagnoseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Read a run's logs (plain or gzip; several files are one run, in order): steady-state throughput, "
                  "noise, memory and headroom, loss, the framework's timers, and the failure with its evidence line; "
                  "with --profile, where the GPU time goes.");
  cmd->add_option("LOG", args->logs, "Log files of the run (may be omitted with --profile)");
  cmd->add_option("--profile", args->profile,
                  "A profile of the run: PyTorch profiler Chrome-trace JSON (.json or .json.gz, streamed), or an "
                  "`nsys stats --format csv` cuda_gpu_trace / cuda_gpu_kern_sum report: compute, communication, "
                  "exposed communication and idle time, top kernels");
  cmd->add_option("--framework", args->framework,
                  "Log format when it cannot be told from the text: megatron, bridge, nemo, automodel, torchtitan, "
                  "deepspeed, hf");
  cmd->add_option("--recipe", args->recipe,
                  "The run's recipe: supplies global batch, sequence length, world size, model and GPU for "
                  "tokens/s, TFLOP/s and MFU");
  cmd->add_option("--model", args->model, "Model preset for the FLOPs when the recipe does not say");
  cmd->add_option("--gpu", args->gpu, "GPU type (h100, h200, b200): peak for MFU and HBM for headroom");
  cmd->add_option("--world", args->world, "GPUs in the job")->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", args->seq_len, "Sequence length in tokens")->check(CLI::PositiveNumber);
  cmd->add_option("--global-batch", args->global_batch, "Global batch in samples per step")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json,
                "Print JSON: {framework, steps, throughput: {tokens_per_s_per_gpu, step_time_s, tflops_per_gpu, mfu, "
                "flops_convention}, noise: {cv}, memory: {...}, loss: [[step, value]], timers, failure, profile}");
  cmd->callback([args]() { command_status() = run_diagnose(*args); });
}

}  // namespace attune::cli
