// Parser factory, framework detection and the scanning helpers shared by
// several parsers (disturbance records, tqdm bars).
#include "attune/diagnose/log_parser.h"

#include <algorithm>

#include "parsers/parse_util.h"

namespace attune::diagnose {

namespace detail {

void add_disturbance(ParseSink& sink, Disturbance::Kind kind, const LogLine& line) {
  // Evidence is for humans reading the diagnosis; whole lines can be huge.
  constexpr std::size_t kMaxEvidence = 300;
  Disturbance d;
  d.kind = kind;
  d.line = line.line;
  d.evidence = std::string(trim(line.text.substr(0, kMaxEvidence)));
  sink.disturbances.push_back(std::move(d));
}

bool generic_disturbance(const LogLine& line, ParseSink& sink) {
  // nsys prints these when a --capture-range window opens and closes; the
  // steps inside run slower under the profiler.
  if (contains(line.text, "Capture range started") || contains(line.text, "Capture range ended")) {
    add_disturbance(sink, Disturbance::Kind::Profiler, line);
    return true;
  }
  return false;
}

namespace {

// "1.37it/s" -> 1/1.37 s; "41.36s/it" -> 41.36 s; "?it/s" -> nullopt.
std::optional<double> tqdm_rate(std::string_view r) {
  r = trim(r);
  auto v = to_double(r);
  if (!v || *v <= 0) return std::nullopt;
  if (r.ends_with("s/it")) return *v;
  if (r.ends_with("it/s")) return 1.0 / *v;
  return std::nullopt;
}

// Reads "n/total" at the start of s; returns the rest.
std::optional<std::string_view> read_counts(std::string_view s, long& n, long& total) {
  s = trim(s);
  auto [p1, e1] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (e1 != std::errc() || p1 == s.data() + s.size() || *p1 != '/' || !is_sane_count(n)) return std::nullopt;
  auto [p2, e2] = std::from_chars(p1 + 1, s.data() + s.size(), total);
  if (e2 != std::errc() || !is_sane_count(total)) return std::nullopt;
  return s.substr(static_cast<std::size_t>(p2 - s.data()));
}

}  // namespace

std::optional<TqdmBar> parse_tqdm(std::string_view text) {
  std::size_t pct = text.find("%|");
  if (pct == std::string_view::npos) return std::nullopt;
  std::size_t bar_end = text.find('|', pct + 2);
  if (bar_end == std::string_view::npos) return std::nullopt;
  TqdmBar b;
  std::size_t d = pct;
  while (d > 0 && (is_digit(text[d - 1]) || text[d - 1] == ' ')) --d;
  b.desc = trim(text.substr(0, d));
  auto rest = read_counts(text.substr(bar_end + 1), b.n, b.total);
  if (!rest) return std::nullopt;
  std::string_view r = trim(*rest);
  if (r.empty() || r.front() != '[') return b;
  std::size_t close = r.rfind(']');
  r = r.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1);
  std::size_t c1 = r.find(", ");  // after "elapsed<remaining"
  if (c1 == std::string_view::npos) return b;
  r = r.substr(c1 + 2);
  std::size_t c2 = r.find(", ");
  b.sec_per_it = tqdm_rate(r.substr(0, c2));
  if (c2 != std::string_view::npos) b.postfix = r.substr(c2 + 2);
  return b;
}

}  // namespace detail

std::vector<std::string> parser_names() {
  // Order breaks detection ties: plain Megatron before the frameworks that
  // print the same iteration line and add their own.
  return {"megatron", "bridge", "deepspeed", "nemo", "automodel", "torchtitan", "hf"};
}

std::unique_ptr<LogParser> make_parser(std::string_view framework) {
  if (framework == "megatron") return detail::make_megatron_parser();
  if (framework == "bridge") return detail::make_bridge_parser();
  if (framework == "nemo") return detail::make_nemo_parser();
  if (framework == "automodel") return detail::make_automodel_parser();
  if (framework == "torchtitan") return detail::make_torchtitan_parser();
  if (framework == "deepspeed") return detail::make_deepspeed_parser();
  if (framework == "hf") return detail::make_hf_parser();
  return nullptr;
}

std::string detect_framework(const std::vector<std::string>& first_lines) {
  constexpr std::size_t kMaxLines = 2000;
  std::vector<std::string> names = parser_names();
  std::string best;
  long best_score = 0;
  std::size_t n = std::min(first_lines.size(), kMaxLines);
  for (const std::string& name : names) {
    auto p = make_parser(name);
    long score = 0;
    for (std::size_t i = 0; i < n; ++i) score += p->detect(first_lines[i]);
    if (score > best_score) {
      best_score = score;
      best = name;
    }
  }
  return best;
}

}  // namespace attune::diagnose
