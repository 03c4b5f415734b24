#include "attune/cli/diagnosis_output.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attune::cli {

namespace {

// Log text as it may reach a terminal: control bytes (but tab) shown as \xNN,
// so a stray byte of a damaged log cannot move the cursor or ring the bell.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\t') || b == 0x7F) {
      out += fmt::format("\\x{:02x}", b);
    } else {
      out += c;
    }
  }
  return out;
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

void print_diagnosis(const diagnose::Diagnosis& d) {
  fmt::print("framework   {}\n", d.framework.empty() ? "unknown" : d.framework);
  fmt::print("steps       {} logged, {} timed (last step {}), {} used for the steady state{}\n", d.steps,
             d.timed_steps, d.last_step > 0 ? std::to_string(d.last_step) : "not printed", d.steady.samples_used,
             d.steady.drift ? " — DRIFT: step time keeps rising" : "");
  fmt::print("throughput  {} tokens/s/GPU · step {} · {} TFLOP/s/GPU · MFU {}\n",
             num(d.tokens_per_s_per_gpu, "{:.0f}", ""), num(d.step_time_s, "{:.3f}", " s"),
             num(d.tflops_per_gpu, "{:.1f}", ""), d.mfu ? fmt::format("{:.1f}%", *d.mfu * 100) : "-");
  if (!d.flops_convention.empty() && d.tflops_per_gpu) {
    fmt::print("            FLOPs: {}, {}{}\n", d.flops_convention,
               d.tflops_source == "computed" ? "computed from tokens/s" : "as the log printed them",
               d.peak_tflops ? fmt::format("; peak {:.0f} TFLOP/s", *d.peak_tflops) : "");
  }
  // The framework's own figure when it is not the one above: another formula.
  if (d.logged_tflops_per_gpu && d.tflops_source == "computed") {
    fmt::print("            the log's own: {:.1f} TFLOP/s/GPU{}, {}\n", *d.logged_tflops_per_gpu,
               d.logged_mfu ? fmt::format(" · MFU {:.1f}%", *d.logged_mfu * 100) : "",
               d.logged_flops_convention.empty() ? "formula unknown" : d.logged_flops_convention);
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
    fmt::print("failure     {} at line {}: {}\n", to_string(d.failure->kind), d.failure->line,
               printable(d.failure->evidence));
  } else {
    fmt::print("failure     none\n");
  }
  for (const auto& n : d.notes) fmt::print("note        {}\n", n);
}

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

}  // namespace attune::cli
