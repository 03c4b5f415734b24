#include "attune/diagnose/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "attune/diagnose/failure_classifier.h"
#include "attune/diagnose/log_parser.h"
#include "attune/diagnose/log_pass.h"
#include "attune/diagnose/log_reader.h"
#include "attune/recipe/hardware.h"
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

void throughput(const ParseSink& sink, const DiagnoseOptions& o, const std::string& framework, Diagnosis& d) {
  const auto& samples = sink.samples;
  d.step_time_s = d.steady.step_time_s;
  d.tokens_per_s_per_gpu = logged_median(samples, d.steady, &StepSample::tokens_per_s_per_gpu);
  d.tflops_per_gpu = logged_median(samples, d.steady, &StepSample::tflops_per_gpu);
  d.mfu = logged_median(samples, d.steady, &StepSample::mfu);
  d.samples_per_s = logged_median(samples, d.steady, &StepSample::samples_per_s);
  d.throughput_source = "log";
  long long gbs = global_batch(samples, o);
  if (!d.samples_per_s && gbs > 0 && d.step_time_s) d.samples_per_s = gbs / *d.step_time_s;
  if (!d.tokens_per_s_per_gpu && gbs > 0 && o.seq_len > 0 && o.world > 0 && d.step_time_s) {
    d.tokens_per_s_per_gpu = gbs * static_cast<double>(o.seq_len) / (*d.step_time_s * o.world);
    d.throughput_source = "computed";
  }
  FlopsConvention conv = framework == "torchtitan" ? FlopsConvention::FullAttention : FlopsConvention::CausalHalved;
  d.flops_convention = to_string(conv);
  if (!d.tflops_per_gpu && o.model && o.seq_len > 0 && d.tokens_per_s_per_gpu) {
    d.tflops_per_gpu = *d.tokens_per_s_per_gpu * flops_per_token(*o.model, o.seq_len, conv) / 1e12;
  }
  if (const recipe::GpuSpec* g = recipe::gpu_spec(o.gpu)) {
    bool fp8 = o.precision.find("fp8") != std::string::npos || o.precision.find("mxfp8") != std::string::npos;
    d.peak_tflops = fp8 ? g->fp8_tflops : g->bf16_tflops;
    if (!d.mfu && d.tflops_per_gpu) d.mfu = *d.tflops_per_gpu / *d.peak_tflops;
    d.capacity_gib = g->hbm_gib;
  }
}

// Frameworks that print only a rate (torchtitan's tps, tokens per second per
// GPU) still need a step time for the steady state: from the tokens each GPU
// processes per step when the recipe says, else 1/tps, which ranks the
// samples the same way (then true is returned: the times are not seconds).
bool step_times_from_rates(ParseSink& sink, const DiagnoseOptions& o) {
  const double tokens_per_gpu_step =
      o.global_batch > 0 && o.seq_len > 0 && o.world > 0
          ? static_cast<double>(o.global_batch) * static_cast<double>(o.seq_len) / o.world
          : 0;
  bool relative = false;
  for (std::size_t i = 0; i < sink.samples.size(); ++i) {
    StepSample& s = sink.samples[i];
    if (s.step_time_s || !s.tokens_per_s_per_gpu || *s.tokens_per_s_per_gpu <= 0) continue;
    if (tokens_per_gpu_step > 0) {
      s.step_time_s = tokens_per_gpu_step / *s.tokens_per_s_per_gpu;
    } else {
      s.step_time_s = 1.0 / *s.tokens_per_s_per_gpu;
      relative = true;
    }
  }
  return relative;
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
  // A NaN that only shows as a missing loss field is still a NaN (logs.md §1.6).
  if (!d.failure && first_nan) {
    d.failure = Failure{FailureKind::Nan, first_nan->line, "loss is NaN/Inf or missing at step " + std::to_string(first_nan->step), -1};
  }
}

}  // namespace

Diagnosis diagnose_logs(const std::vector<std::string>& files, const DiagnoseOptions& o) {
  LogPass pass(o.framework);
  for (const auto& f : files) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(f, ec) && std::filesystem::file_size(f, ec) == 0) {
      throw InputError({f, 0, 0}, "", "the log is empty");
    }
    LogReader::read_file(f, [&](const LogLine& line) { pass.feed(line); });
  }
  pass.finish();
  Diagnosis d;
  d.framework = pass.framework();
  const bool relative_times = step_times_from_rates(pass.sink(), o);
  const ParseSink& sink = pass.sink();
  d.steps = static_cast<int>(sink.samples.size());
  if (!sink.samples.empty()) d.last_step = sink.samples.back().step;
  d.steady = steady_state(sink.samples, sink.disturbances);
  throughput(sink, o, d.framework, d);
  if (relative_times) {  // 1/tps ranked the samples; it is not a time
    d.step_time_s.reset();
    d.samples_per_s.reset();
  }
  memory(sink, d);
  d.failure = pass.classifier().result(true, d.step_time_s);
  d.timers = sink.timers.phases();
  d.time_breakdown = sink.timers.breakdown();
  losses_and_nan(sink, d);
  if (sink.samples.empty()) d.notes.push_back("no step lines found: the run did not reach its first logged step");
  if (d.steady.drift) d.notes.push_back("step time keeps rising: no steady state (drift)");
  if (!d.tokens_per_s_per_gpu) {
    d.notes.push_back("tokens/s/GPU needs the global batch, sequence length and world size: pass --recipe");
  }
  return d;
}

namespace {
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }


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
           {{"total_ms", opt(b.total_ms)},
            {"compute_ms", opt(b.compute_ms)},
            {"dp_comm_ms", opt(b.dp_comm_ms)},
            {"pp_comm_ms", opt(b.pp_comm_ms)},
            {"data_ms", opt(b.data_ms)},
            {"optimizer_ms", opt(b.optimizer_ms)},
            {"straggler_spread", opt(b.straggler_spread)}}}};
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
      {"last_step", d.last_step},
      {"throughput",
       {{"tokens_per_s_per_gpu", opt(d.tokens_per_s_per_gpu)},
        {"step_time_s", opt(d.step_time_s)},
        {"samples_per_s", opt(d.samples_per_s)},
        {"tflops_per_gpu", opt(d.tflops_per_gpu)},
        {"mfu", opt(d.mfu)},
        {"flops_convention", d.flops_convention},
        {"peak_tflops", opt(d.peak_tflops)},
        {"source", d.throughput_source}}},
      {"steady_state",
       {{"samples", d.steady.samples_total},
        {"used", d.steady.samples_used},
        {"steps_used", d.steady.steps_used},
        {"drift", d.steady.drift}}},
      {"noise", {{"cv", opt(d.steady.cv)}, {"ci95_s", {opt(d.steady.ci95_low_s), opt(d.steady.ci95_high_s)}}}},
      {"memory",
       {{"peak_allocated_gib", opt(d.peak_allocated_gib)},
        {"peak_reserved_gib", opt(d.peak_reserved_gib)},
        {"capacity_gib", opt(d.capacity_gib)},
        {"headroom_gib", opt(d.headroom_gib)}}},
      {"loss", loss},
      {"timers", timers_json(d)},
      {"profile", d.profile ? to_json(*d.profile) : nlohmann::json(nullptr)},
      {"failure", failure},
      {"notes", d.notes},
  };
}

}  // namespace attune::diagnose
