#include "attune/diagnose/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "attune/diagnose/failure_classifier.h"
#include "attune/diagnose/log_parser.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "attune/recipe/hardware.h"
#include "attune/util/json_input.h"
#include "attune/util/error.h"

namespace attune::diagnose {

namespace {

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The log's own per-step figure over the samples the steady state used.
template <typename Field>
std::optional<double> logged_median(const StepSeries& samples, const SteadyState& st, Field field) {
  std::vector<double> v;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i < st.used.size() && st.used[i] && (samples[i].*field)) v.push_back(*(samples[i].*field));
  }
  return median_of(std::move(v));
}

long long global_batch(const StepSeries& samples, const DiagnoseOptions& o) {
  if (o.global_batch > 0) return o.global_batch;
  for (std::size_t i = samples.size(); i-- > 0;) {
    if (samples[i].global_batch) return *samples[i].global_batch;
  }
  return 0;
}

// The formula of the log's TFLOP/s figures: that of the last sample the
// steady state used which has one.
LoggedFlops logged_formula(const StepSeries& samples, const SteadyState& st) {
  for (std::size_t i = samples.size(); i-- > 0;) {
    if (i < st.used.size() && st.used[i] && samples[i].tflops_per_gpu) return samples[i].tflops_formula;
  }
  return LoggedFlops::None;
}

void throughput(const ParseSink& sink, const DiagnoseOptions& o, Diagnosis& d) {
  const auto& samples = sink.samples;
  d.step_time_s = d.steady.step_time_s;
  d.tokens_per_s_per_gpu = logged_median(samples, d.steady, &StepSample::tokens_per_s_per_gpu);
  d.logged_tflops_per_gpu = logged_median(samples, d.steady, &StepSample::tflops_per_gpu);
  d.logged_mfu = logged_median(samples, d.steady, &StepSample::mfu);
  d.samples_per_s = logged_median(samples, d.steady, &StepSample::samples_per_s);
  d.throughput_source = "log";
  long long gbs = global_batch(samples, o);
  if (!d.samples_per_s && gbs > 0 && d.step_time_s) d.samples_per_s = gbs / *d.step_time_s;
  if (!d.tokens_per_s_per_gpu && gbs > 0 && o.seq_len > 0 && o.world > 0 && d.step_time_s) {
    d.tokens_per_s_per_gpu = gbs * static_cast<double>(o.seq_len) / (*d.step_time_s * o.world);
    d.throughput_source = "computed";
  }
  const LoggedFlops formula = d.logged_tflops_per_gpu ? logged_formula(samples, d.steady) : LoggedFlops::None;
  d.logged_flops_convention = describe(formula);
  const std::string megatron = to_string(FlopsConvention::CausalHalved);
  // One convention for the headline figure: the log's when it is Megatron's,
  // else computed in Megatron's, else the log's under its own name.
  if (d.logged_tflops_per_gpu && formula == LoggedFlops::Megatron) {
    d.tflops_per_gpu = d.logged_tflops_per_gpu;
    d.mfu = d.logged_mfu;
    d.tflops_source = "log";
    d.flops_convention = megatron;
  } else if (o.model && o.seq_len > 0 && d.tokens_per_s_per_gpu) {
    d.tflops_per_gpu =
        *d.tokens_per_s_per_gpu * flops_per_token(*o.model, o.seq_len, FlopsConvention::CausalHalved) / 1e12;
    d.tflops_source = "computed";
    d.flops_convention = megatron;
  } else if (d.logged_tflops_per_gpu) {
    d.tflops_per_gpu = d.logged_tflops_per_gpu;
    d.mfu = d.logged_mfu;
    d.tflops_source = "log";
    d.flops_convention = d.logged_flops_convention.empty() ? "as the framework logged it (formula unknown)"
                                                           : d.logged_flops_convention;
    d.notes.push_back(
        "TFLOP/s/GPU and MFU are the log's own, in its framework's convention: they do not compare with the "
        "Megatron-convention figures of other logs; the model (--recipe, or --model and --seq-len) gives that figure");
  }
  if (const recipe::GpuSpec* g = recipe::gpu_spec(o.gpu)) {
    bool fp8 = o.precision.find("fp8") != std::string::npos || o.precision.find("mxfp8") != std::string::npos;
    d.peak_tflops = fp8 ? g->fp8_tflops : g->bf16_tflops;
    if (!d.mfu && d.tflops_per_gpu) d.mfu = *d.tflops_per_gpu / *d.peak_tflops;
    d.capacity_gib = g->hbm_gib;
  }
}

// AutoModel prints the whole job's tokens/s ("tps x") beside an "(y/gpu)"
// figure that divides by DP·CP only, i.e. per model replica (how AutoModel and torchtitan print it); the
// parser keeps both. With the world size, tps / world is the exact per-GPU
// rate and replaces the per-replica one. True when a per-replica figure is
// left standing in for tokens/s/GPU (no world size).
bool per_gpu_from_job_rates(ParseSink& sink, const DiagnoseOptions& o) {
  bool per_replica = false;
  for (std::size_t i = 0; i < sink.samples.size(); ++i) {
    StepSample& s = sink.samples[i];
    if (!s.tokens_per_s || !(*s.tokens_per_s > 0)) continue;
    if (o.world > 0) {
      s.tokens_per_s_per_gpu = static_cast<float>(*s.tokens_per_s / o.world);
    } else if (s.tokens_per_s_per_gpu) {
      per_replica = true;
    }
  }
  return per_replica;
}

// Frameworks that print only a rate (torchtitan's tps, tokens per second per
// GPU; AutoModel's tps, tokens per second of the whole job) still need a step
// time for the steady state: from the tokens of a step when the recipe says
// (global batch x sequence length, over the world size for a per-GPU rate),
// else 1/rate, which ranks the samples the same way (then true is returned:
// the times are not seconds).
bool step_times_from_rates(ParseSink& sink, const DiagnoseOptions& o) {
  const long long gbs = global_batch(sink.samples, o);
  const double tokens_per_step =
      gbs > 0 && o.seq_len > 0 ? static_cast<double>(gbs) * static_cast<double>(o.seq_len) : 0;
  const double tokens_per_gpu_step = o.world > 0 ? tokens_per_step / o.world : 0;
  bool relative = false;
  for (std::size_t i = 0; i < sink.samples.size(); ++i) {
    StepSample& s = sink.samples[i];
    if (s.step_time_s) continue;
    const double job = s.tokens_per_s ? static_cast<double>(*s.tokens_per_s) : 0;
    const double per_gpu = s.tokens_per_s_per_gpu ? static_cast<double>(*s.tokens_per_s_per_gpu) : 0;
    if (job > 0 && tokens_per_step > 0) {
      s.step_time_s = tokens_per_step / job;
    } else if (per_gpu > 0 && tokens_per_gpu_step > 0) {
      s.step_time_s = tokens_per_gpu_step / per_gpu;
    } else if (job > 0 || per_gpu > 0) {
      s.step_time_s = 1.0 / (job > 0 ? job : per_gpu);
      relative = true;
    }
  }
  return relative;
}

// A sample whose interval reaches back over steps that earlier samples already
// cover (or, first in the log, spans several steps no line before it logged)
// is a whole-run average, not a logged interval: the Hugging Face
// end-of-training summary ("train_runtime", "train_steps_per_second", ...),
// whose time includes the slow first steps, evaluation and checkpoint saves.
// Interval counting (StepCounter) never makes such a sample.
bool is_whole_run(const StepSeries& samples, std::size_t i) {
  const StepSample& s = samples[i];
  if (s.steps_in_interval <= 1) return false;
  return i == 0 || s.step - s.steps_in_interval < samples[i - 1].step;
}

struct WholeRun {
  std::vector<std::size_t> samples;  // indices of the whole-run averages
  std::size_t others = 0;            // other samples
  bool others_timed = false;         // ... of which one has a step time
};

// Where per-step samples exist the whole-run averages stay out of the steady
// state and the loss curve (they would outweigh the steps with the slow
// start) and are kept as a note; where they are the only timing source they
// stay in.
WholeRun set_aside_whole_run(ParseSink& sink, Diagnosis& d) {
  WholeRun w;
  StepSeries& samples = sink.samples;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (is_whole_run(samples, i)) {
      w.samples.push_back(i);
    } else {
      ++w.others;
      w.others_timed = w.others_timed || samples[i].step_time_s.has_value();
    }
  }
  if (w.samples.empty() || w.others == 0) return w;
  for (std::size_t i : w.samples) {
    StepSample& s = samples[i];
    s.loss.reset();  // the run's mean loss, not the loss at its last step
    if (!w.others_timed) continue;
    if (s.step_time_s) {
      d.notes.push_back(fmt::format(
          "whole-run average from the end-of-training summary: {:.4g} s/step over {} steps (warm-up, evaluation "
          "and checkpoint saves included); the steady state uses the per-step samples",
          *s.step_time_s, s.steps_in_interval));
    }
    s.step_time_s.reset();
    s.samples_per_s.reset();
    s.tokens_per_s.reset();
    s.tokens_per_s_per_gpu.reset();
    s.tflops_per_gpu.reset();
    s.mfu.reset();
  }
  return w;
}

// A whole-run average that is the only timing source: the steady state leaves
// out the first sample of a log, which a summary on its own is.
void use_whole_run_alone(const StepSeries& samples, const WholeRun& w, Diagnosis& d) {
  if (w.others_timed) return;
  for (std::size_t i : w.samples) {
    const StepSample& s = samples[i];
    if (!s.step_time_s) continue;
    SteadyState& st = d.steady;
    if (!st.step_time_s) {
      st.used.assign(samples.size(), false);
      st.used[i] = true;
      st.samples_used = 1;
      st.steps_used = s.steps_in_interval;
      st.step_time_s = st.mean_step_time_s = *s.step_time_s;
      st.dropped_lines.clear();
      for (std::size_t j = 0; j < samples.size(); ++j) {
        if (j != i) st.dropped_lines.push_back(samples[j].line);
      }
    }
    d.notes.push_back(
        "step time is the whole-run average of the end-of-training summary (warm-up, evaluation and checkpoint "
        "saves included): no per-step timing was logged");
    return;
  }
}

// The last printed step number (a parser's own count of lines is no step
// number), and how many samples say how fast the steps went.
void count_steps(const StepSeries& samples, Diagnosis& d) {
  for (const auto& s : samples) {
    if (!s.step_counted) d.last_step = s.step;
    const bool timed = s.step_time_s || s.samples_per_s || s.tokens_per_s || s.tokens_per_s_per_gpu;
    d.timed_steps += timed ? 1 : 0;
  }
}

void memory(const ParseSink& sink, Diagnosis& d) {
  auto keep_max = [](std::optional<double>& acc, const auto& v) {
    if (v && (!acc || *v > *acc)) acc = *v;
  };
  keep_max(d.peak_allocated_gib, sink.peak_mem_allocated_gib);
  keep_max(d.peak_reserved_gib, sink.peak_mem_reserved_gib);
  for (const auto& s : sink.samples) {
    keep_max(d.peak_allocated_gib, s.mem_max_allocated_gib ? s.mem_max_allocated_gib : s.mem_allocated_gib);
    keep_max(d.peak_reserved_gib, s.mem_max_reserved_gib ? s.mem_max_reserved_gib : s.mem_reserved_gib);
  }
  if (sink.mem_capacity_gib) d.capacity_gib = sink.mem_capacity_gib;
  std::optional<double> used = d.peak_reserved_gib ? d.peak_reserved_gib : d.peak_allocated_gib;
  if (d.capacity_gib && used) d.headroom_gib = *d.capacity_gib - *used;
}

void losses_and_nan(const ParseSink& sink, Diagnosis& d) {
  const StepSample* first_nan = nullptr;
  d.loss.reserve(sink.samples.size());
  for (const auto& s : sink.samples) {
    if (s.loss && std::isfinite(*s.loss)) d.loss.emplace_back(s.step, *s.loss);
    if (s.loss_is_nan && !first_nan) first_nan = &s;
  }
  // A NaN that only shows as a missing loss field is still a NaN: Megatron drops the field on a NaN step.
  if (!d.failure && first_nan) {
    d.failure = Failure{FailureKind::Nan, first_nan->line, "loss is NaN/Inf or missing at step " + std::to_string(first_nan->step), -1};
  }
}

}  // namespace

Diagnosis diagnose_logs(const std::vector<std::string>& files, const DiagnoseOptions& o) {
  LogPass pass(o.framework);
  std::size_t truncated = 0;
  for (const auto& f : files) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(f, ec) && std::filesystem::file_size(f, ec) == 0) {
      throw InputError({f, 0, 0}, "", "the log is empty");
    }
    LogReader::Limits limits;
    limits.read_bytes = o.log_bytes;
    LogReader reader([&](const LogLine& line) { pass.feed(line); }, limits);
    reader.read_file(f);
    truncated += reader.truncated_lines();
  }
  pass.finish();
  Diagnosis d;
  d.framework = pass.framework_shown();
  const bool per_replica = per_gpu_from_job_rates(pass.sink(), o);
  const bool relative_times = step_times_from_rates(pass.sink(), o);
  const WholeRun whole_run = set_aside_whole_run(pass.sink(), d);
  const ParseSink& sink = pass.sink();
  // Steps are the logged intervals: a whole-run average beside them is not one.
  d.steps = static_cast<int>(whole_run.others > 0 ? whole_run.others : sink.samples.size());
  count_steps(sink.samples, d);
  d.steady = steady_state(sink.samples, sink.disturbances);
  use_whole_run_alone(sink.samples, whole_run, d);
  throughput(sink, o, d);
  if (relative_times) {  // 1/tps ranked the samples; it is not a time
    d.step_time_s.reset();
    d.samples_per_s.reset();
  } else {
    for (std::size_t i = 0; i < sink.samples.size() && i < d.steady.used.size(); ++i) {
      if (d.steady.used[i] && sink.samples[i].step_time_s) d.steady_step_times_s.push_back(*sink.samples[i].step_time_s);
    }
  }
  memory(sink, d);
  d.failure = pass.classifier().result(true, d.step_time_s);
  d.timers = sink.timers.phases();
  d.time_breakdown = sink.timers.breakdown();
  losses_and_nan(sink, d);
  if (sink.samples.empty()) d.notes.push_back("no step lines found: the run did not reach its first logged step");
  if (truncated > 0) {
    d.notes.push_back(fmt::format("{} line(s) longer than {} MiB were cut to their first {} MiB", truncated,
                                  LogReader::kMaxLineBytes >> 20, LogReader::kMaxLineBytes >> 20));
  }
  if (d.steady.drift) d.notes.push_back("step time keeps rising: no steady state (drift)");
  if (per_replica && d.tokens_per_s_per_gpu) {
    d.notes.push_back(
        "tokens/s/GPU is the log's per-replica figure (tokens/s over DP x CP): with tensor or pipeline "
        "parallelism it overstates the per-GPU rate; pass --recipe for the world size");
  }
  if (!d.tokens_per_s_per_gpu) {
    // Only what is missing, and where `attune diagnose` takes it from: a run
    // (`attune run`, a campaign) has them from its recipe already.
    std::vector<std::string> absent;
    if (global_batch(sink.samples, o) <= 0) absent.push_back("global batch");
    if (o.seq_len <= 0) absent.push_back("sequence length");
    if (o.world <= 0) absent.push_back("world size");
    if (!absent.empty()) {
      std::string missing = absent.front();
      for (std::size_t i = 1; i < absent.size(); ++i) missing += (i + 1 == absent.size() ? " and " : ", ") + absent[i];
      d.notes.push_back("tokens/s/GPU needs the " + missing +
                        ", which the log does not give: attune diagnose takes them from --recipe FILE (or "
                        "--global-batch, --seq-len, --world)");
    }
  }
  return d;
}

namespace {
using json_field::optional_json;


nlohmann::json timers_json(const Diagnosis& d) {
  if (d.timers.empty()) return nullptr;
  nlohmann::json phases = nlohmann::json::array();
  for (const PhaseTime& p : d.timers) {
    phases.push_back({{"name", p.name}, {"kind", to_string(p.kind)}, {"min_ms", p.min_ms}, {"max_ms", p.max_ms},
                      {"reports", p.reports}});
  }
  const TimeBreakdown& b = d.time_breakdown;
  return {{"phases", phases},
          {"breakdown",
           {{"total_ms", optional_json(b.total_ms)},
            {"compute_ms", optional_json(b.compute_ms)},
            {"dp_comm_ms", optional_json(b.dp_comm_ms)},
            {"pp_comm_ms", optional_json(b.pp_comm_ms)},
            {"data_ms", optional_json(b.data_ms)},
            {"optimizer_ms", optional_json(b.optimizer_ms)},
            {"straggler_spread", optional_json(b.straggler_spread)}}}};
}

}  // namespace

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json loss = nlohmann::json::array();
  for (const auto& [step, v] : d.loss) loss.push_back({step, v});
  nlohmann::json failure = nullptr;
  if (d.failure) {
    failure = {{"kind", to_string(d.failure->kind)}, {"line", d.failure->line}, {"evidence", d.failure->evidence}};
    if (d.failure->rank >= 0) failure["rank"] = d.failure->rank;
  }
  return {
      {"framework", d.framework},
      {"steps", d.steps},
      {"timed_steps", d.timed_steps},
      {"last_step", d.last_step},
      {"throughput",
       {{"tokens_per_s_per_gpu", optional_json(d.tokens_per_s_per_gpu)},
        {"step_time_s", optional_json(d.step_time_s)},
        {"samples_per_s", optional_json(d.samples_per_s)},
        {"tflops_per_gpu", optional_json(d.tflops_per_gpu)},
        {"mfu", optional_json(d.mfu)},
        {"flops_convention", d.flops_convention},
        {"tflops_source", d.tflops_source},
        {"logged_tflops_per_gpu", optional_json(d.logged_tflops_per_gpu)},
        {"logged_mfu", optional_json(d.logged_mfu)},
        {"logged_flops_convention", d.logged_flops_convention},
        {"peak_tflops", optional_json(d.peak_tflops)},
        {"source", d.throughput_source}}},
      {"steady_state",
       {{"samples", d.steady.samples_total},
        {"used", d.steady.samples_used},
        {"steps_used", d.steady.steps_used},
        {"drift", d.steady.drift}}},
      {"noise", {{"cv", optional_json(d.steady.cv)}, {"ci95_s", {optional_json(d.steady.ci95_low_s), optional_json(d.steady.ci95_high_s)}}}},
      {"memory",
       {{"peak_allocated_gib", optional_json(d.peak_allocated_gib)},
        {"peak_reserved_gib", optional_json(d.peak_reserved_gib)},
        {"capacity_gib", optional_json(d.capacity_gib)},
        {"headroom_gib", optional_json(d.headroom_gib)}}},
      {"loss", loss},
      {"timers", timers_json(d)},
      {"profile", d.profile ? to_json(*d.profile) : nlohmann::json(nullptr)},
      {"failure", failure},
      {"notes", d.notes},
  };
}

}  // namespace attune::diagnose
