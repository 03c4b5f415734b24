// Scanning helpers shared by the log parsers: number parsing without
// std::regex (too slow for logs of hundreds of MB), '|'-separated field
// walking, tqdm progress bars, and the Megatron iteration/memory lines that
// Megatron-LM, Megatron-Bridge and Megatron-DeepSpeed all print.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "attune/diagnose/log_parser.h"
#include "attune/util/text.h"

namespace attune::diagnose::detail {

inline constexpr double kMiB_per_GiB = 1024.0;
inline constexpr double kGB_to_GiB = 1e9 / (1024.0 * 1024.0 * 1024.0);


inline bool is_digit(char c) { return c >= '0' && c <= '9'; }


namespace fast_number {
// Clinger's fast path: a decimal with at most 15 significant digits and a
// power of ten up to 1e22 is m * 10^e or m / 10^-e with both operands exact
// doubles, so one IEEE operation gives the correctly rounded result — the same
// value std::from_chars returns, in a fraction of its time. Anything else
// (longer mantissas, nan, inf, hex) is left to std::from_chars.
inline constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

inline bool parse(const char* p, const char* end, double& out) {
  bool neg = false;
  if (p < end && *p == '-') {
    neg = true;
    ++p;
  }
  std::uint64_t m = 0;
  int digits = 0, frac = 0;
  const char* start = p;
  while (p < end && *p >= '0' && *p <= '9') {
    m = m * 10 + static_cast<unsigned>(*p - '0');
    digits += (m != 0);
    ++p;
  }
  if (p < end && *p == '.') {
    ++p;
    while (p < end && *p >= '0' && *p <= '9') {
      m = m * 10 + static_cast<unsigned>(*p - '0');
      digits += (m != 0);
      ++frac;
      ++p;
    }
  }
  if (p == start || (p == start + 1 && *start == '.') || digits > 15) return false;
  int exp = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    const char* q = p + 1;
    bool eneg = false;
    if (q < end && (*q == '+' || *q == '-')) eneg = *q++ == '-';
    if (q == end || *q < '0' || *q > '9') return false;
    while (q < end && *q >= '0' && *q <= '9' && exp < 1000) exp = exp * 10 + (*q++ - '0');
    if (eneg) exp = -exp;
  }
  const int e = exp - frac;
  if (e < -22 || e > 22) return false;
  double v = static_cast<double>(m);
  v = e < 0 ? v / kPow10[-e] : v * kPow10[e];
  out = neg ? -v : v;
  return true;
}
}  // namespace fast_number

// Leading number of s (after blanks; '+', nan and inf accepted).
inline std::optional<double> to_double(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i < s.size() && s[i] == '+') ++i;
  double v = 0;
  if (fast_number::parse(s.data() + i, s.data() + s.size(), v)) return v;
  auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

// Like to_double but skips thousands separators ("1,234.5"), which torchtitan prints.
inline std::optional<double> to_double_grouped(std::string_view s) {
  char buf[64];
  std::size_t n = 0;
  for (char c : s) {
    if (c == ',') continue;
    if (n == sizeof buf) break;
    buf[n++] = c;
  }
  return to_double(std::string_view(buf, n));
}

// Steps, counts and batch sizes beyond 1e15 are not real (a run of 1e15
// steps would take millennia); refusing them keeps every later sum and
// difference of counts far from overflow.
inline constexpr long kMaxCount = 1'000'000'000'000'000;
inline bool is_sane_count(long v) { return v >= -kMaxCount && v <= kMaxCount; }

// Integer fields may be printed as floats ("3.2e+4" in Lightning bars).
inline std::optional<long> to_long(std::string_view s) {
  auto d = to_double(s);
  if (!d || !(*d == *d) || *d > static_cast<double>(kMaxCount) || *d < -static_cast<double>(kMaxCount)) {
    return std::nullopt;
  }
  return static_cast<long>(*d + (*d < 0 ? -0.5 : 0.5));
}

inline bool is_nan_or_inf(double v) { return !(v == v) || v > 1.7e308 || v < -1.7e308; }

// A printed loss into s: NaN/Inf marks the step as NaN and stays out of the
// loss curve (it would poison medians downstream); text that is not a number
// changes nothing.
inline void read_loss(std::string_view text, StepSample& s) {
  auto v = to_double(text);
  if (!v) return;
  s.loss_is_nan = is_nan_or_inf(*v);
  if (s.loss_is_nan) {
    s.loss.reset();
  } else {
    s.loss = *v;
  }
}

template <class Into, class From>
void max_into(Into& into, const From& v) {
  if (v && (!into || *v > *into)) into = *v;
}

// Calls f(key, value) for each "key<sep>value" segment of a '|'-separated
// text; segments without sep are passed with an empty value.
template <class F>
void for_each_field(std::string_view text, char sep, F&& f) {
  while (!text.empty()) {
    std::size_t bar = text.find('|');
    std::string_view seg = trim(text.substr(0, bar));
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
    if (seg.empty()) continue;
    std::size_t k = seg.find(sep);
    if (k == std::string_view::npos) {
      f(seg, std::string_view());
    } else {
      f(trim(seg.substr(0, k)), trim(seg.substr(k + 1)));
    }
  }
}

// Remembers the previous step so each sample says how many steps it covers.
struct StepCounter {
  long prev = -1;
  int interval(long step) {
    long n = (prev >= 0 && step > prev) ? step - prev : 1;
    prev = step;
    return static_cast<int>(std::min<long>(n, 1'000'000'000));
  }
};

// A disturbance with the line (shortened) as evidence.
void add_disturbance(ParseSink& sink, Disturbance::Kind kind, const LogLine& line);

// nsys capture start/end and similar framework-independent markers.
bool generic_disturbance(const LogLine& line, ParseSink& sink);

// One tqdm progress bar: "desc: 6%|##  | 32040/500150 [6:28<9:39, 1.37it/s, k=v, ...]".
struct TqdmBar {
  std::string_view desc;     // text before the percentage
  long n = 0;
  long total = 0;
  std::optional<double> sec_per_it;
  std::string_view postfix;  // "k=v, k=v" after the rate, may be empty
};
std::optional<TqdmBar> parse_tqdm(std::string_view text);

// Calls f(key, value) for each "k=v" of a tqdm postfix.
template <class F>
void for_each_postfix(std::string_view postfix, F&& f) {
  while (!postfix.empty()) {
    std::size_t comma = postfix.find(", ");
    std::string_view kv = trim(postfix.substr(0, comma));
    postfix = comma == std::string_view::npos ? std::string_view() : postfix.substr(comma + 2);
    std::size_t eq = kv.find('=');
    if (eq != std::string_view::npos) f(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)));
  }
}

// A Megatron memory report ("memory (MB)" in MiB, Bridge's "memory (GB)" in 1e9 B), in GiB.
struct MemoryReport {
  std::optional<long> after_iteration;  // "(after N iterations)"; absent around checkpoint saves
  std::optional<double> allocated, max_allocated, reserved, max_reserved;
};
std::optional<MemoryReport> parse_megatron_memory(std::string_view text);

// Fills s from a Megatron iteration line ("iteration N/ M | consumed samples: ...")
// incl. the Megatron-DeepSpeed extras; false if the line is not one.
bool parse_megatron_iteration(std::string_view text, StepSample& s);

// Megatron timer blocks ("(min, max) time across ranks (ms):" then one
// "name ....: (min, max)" or "name ....: v" line per phase, or per-rank
// "rank  0: v" lines under "name:"), and the one-line "time (ms) | name: v |"
// form of old Megatron and DeepSpeed's wall-clock breakdown.
class TimerLines {
 public:
  // True if the line was part of a timer report.
  bool feed(std::string_view text, TimerTable& table);

 private:
  bool feed_block_line(std::string_view text, TimerTable& table);
  bool in_block_ = false;
  std::string rank_phase_;  // "all" layout: the phase whose per-rank lines follow
};

// The Megatron line family with its state: iteration lines, memory reports
// (attached to the sample of their iteration, whichever comes first),
// checkpoint saves and evaluations. Used by the megatron, bridge and
// deepspeed parsers.
class MegatronLines {
 public:
  // True if the line was one of Megatron's.
  bool feed(const LogLine& line, ParseSink& sink);
  static int detect(std::string_view text);
  // The log ended: a record held for its wrapped rest becomes a sample as it is.
  void flush_wrapped(ParseSink& sink);

 private:
  void attach_memory(const MemoryReport& m, ParseSink& sink);
  void add_iteration(StepSample s, long line, ParseSink& sink);
  bool continue_wrapped(std::string_view t, ParseSink& sink);
  StepCounter steps_;
  std::string wrapped_;                  // an iteration record cut by a hard wrap, being rejoined
  long wrapped_line_ = 0;
  int wrapped_parts_ = 0;
  TimerLines timers_;
  std::optional<MemoryReport> pending_;  // report that arrived before its iteration line
};

std::unique_ptr<LogParser> make_megatron_parser();
std::unique_ptr<LogParser> make_bridge_parser();
std::unique_ptr<LogParser> make_nemo_parser();
std::unique_ptr<LogParser> make_automodel_parser();
std::unique_ptr<LogParser> make_torchtitan_parser();
std::unique_ptr<LogParser> make_deepspeed_parser();
std::unique_ptr<LogParser> make_hf_parser();

}  // namespace attune::diagnose::detail
