#include "chrome_trace_reader.h"

#include <algorithm>
#include <cstring>

#include "attune/util/error.h"
#include "decimal.h"

namespace attune::diagnose::profile {
namespace {

constexpr std::size_t kMaxPendingBytes = std::size_t{256} << 20;  // one event: far above any real one
constexpr int kMicrosecondsToNs = 3;                               // Kineto ts/dur are µs
constexpr std::string_view kStepPrefix = "ProfilerStep#";

enum class Field : std::uint8_t { kOther, kPh, kCat, kName, kPid, kTs, kDur };

Field field_of(std::string_view key) {
  if (key == "ph") return Field::kPh;
  if (key == "ts") return Field::kTs;
  if (key == "cat") return Field::kCat;
  if (key == "dur") return Field::kDur;
  if (key == "pid") return Field::kPid;
  if (key == "name") return Field::kName;
  return Field::kOther;
}

enum class GpuActivity : std::uint8_t { kNone, kKernel, kMemory };

// Kineto categories; PyTorch 1.8-era traces used Kernel / Memcpy / Memset.
GpuActivity gpu_activity(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return GpuActivity::kKernel;
  if (cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Memcpy" || cat == "Memset") {
    return GpuActivity::kMemory;
  }
  return GpuActivity::kNone;
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_json_space(s[i])) ++i;
  return i;
}

// "ProfilerStep#12" → 12.
std::optional<long long> step_number(std::string_view name) {
  if (!name.starts_with(kStepPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kStepPrefix.size());
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  long long n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// Newlines in s, 8 bytes at a time (this runs over every byte of the trace,
// only so that errors can give a line number).
long long count_newlines(std::string_view s) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  long long n = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t x = w ^ (kOnes * '\n');  // zero bytes where w had '\n'
    const std::uint64_t nonzero = ((x & kLow7) + kLow7) | x;  // high bit set for non-zero bytes
    const std::uint64_t ones = (~nonzero & ~kLow7) >> 7;        // 1 in each byte that was '\n'
    n += static_cast<long long>((ones * kOnes) >> 56);          // sum of the bytes (at most 8)
  }
  for (; i < s.size(); ++i) n += s[i] == '\n';
  return n;
}

// What a string value holds between its quotes (value at s[i] == '"', ends at `end`).
std::string_view string_body(std::string_view s, std::size_t i, std::size_t end) {
  return s.substr(i + 1, end - i - 2);
}

}  // namespace

ChromeTraceReader::ChromeTraceReader(ProfileBuilder& out, std::string name_for_errors)
    : out_(out), file_(std::move(name_for_errors)) {}

void ChromeTraceReader::fail(std::string_view s, std::size_t at, const std::string& message) const {
  const long long line = lines_done_ + count_newlines(s.substr(0, std::min(at, s.size()))) + 1;
  throw InputError(SourceLocation{file_, static_cast<int>(std::min<long long>(line, 1'000'000'000)), 0},
                   "", message);
}

void ChromeTraceReader::drop_consumed(std::size_t n) {
  lines_done_ += count_newlines(std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
}

void ChromeTraceReader::feed(std::string_view bytes) {
  pending_.append(bytes);
  if (pending_.size() < retry_at_) return;
  drop_consumed(parse(pending_));
  retry_at_ = 2 * pending_.size();
  if (pending_.size() > kMaxPendingBytes) {
    fail(pending_, 0, "one trace event is larger than 256 MiB: not a trace this reader accepts");
  }
}

void ChromeTraceReader::finish() {
  drop_consumed(parse(pending_));
  const std::size_t rest = skip_space(pending_, 0);
  const bool complete = state_ == State::kDone || (array_format_ && state_ == State::kEvents);
  if (rest < pending_.size() || !complete) {
    fail(pending_, pending_.size(),
         "the trace ends in the middle of the JSON (truncated file?)");
  }
  if (!saw_events_) {
    fail(pending_, pending_.size(),
         "no \"traceEvents\" array: expected a PyTorch profiler (Kineto) Chrome trace");
  }
}

// Parses whole tokens/events from s; returns how many bytes were used (the
// rest is an unfinished token or event).
std::size_t ChromeTraceReader::parse(std::string_view s) {
  std::size_t i = 0;
  for (;;) {
    if (state_ != State::kSkipValue) i = skip_space(s, i);
    if (i >= s.size()) return s.size();
    const std::size_t next = step(s, i);
    if (next == kIncomplete) return i;
    i = next;
  }
}

// One token or event at s[i] (not a space): the index after it, the same
// index when only the state changed, or kIncomplete to wait for more bytes.
std::size_t ChromeTraceReader::step(std::string_view s, std::size_t i) {
  const char c = s[i];
  switch (state_) {
    case State::kBegin:
      if (c == '{') {
        state_ = State::kKeyOrEnd;
        return i + 1;
      }
      if (c == '[') {
        array_format_ = saw_events_ = true;
        state_ = State::kEvents;
        return i + 1;
      }
      if (c == '\xEF') {  // UTF-8 byte order mark EF BB BF
        if (i + 3 > s.size()) return kIncomplete;
        if (s.substr(i, 3) == "\xEF\xBB\xBF") return i + 3;
      }
      fail(s, i, "expected a JSON object with a \"traceEvents\" array (PyTorch profiler trace)");
    case State::kKeyOrEnd: {
      if (c == '}') {
        state_ = State::kDone;
        return i + 1;
      }
      if (c == ',') return i + 1;
      if (c != '"') fail(s, i, "expected a key or '}' in the trace's top-level object");
      const std::size_t end = json_string_end(s, i);
      if (end == kIncomplete) return kIncomplete;
      key_is_events_ = string_body(s, i, end) == "traceEvents";
      state_ = State::kColon;
      return end;
    }
    case State::kColon:
      if (c != ':') fail(s, i, "expected ':' after a top-level key");
      state_ = State::kValue;
      return i + 1;
    case State::kValue:
      if (!key_is_events_) return begin_skip(s, i, State::kKeyOrEnd);
      if (c != '[') fail(s, i, "\"traceEvents\" is not an array");
      saw_events_ = true;
      state_ = State::kEvents;
      return i + 1;
    case State::kSkipValue:
      return resume_skip(s, i);
    case State::kEvents: {
      if (c == ',') return i + 1;
      if (c == ']') {
        state_ = array_format_ ? State::kDone : State::kKeyOrEnd;
        return i + 1;
      }
      if (c != '{') return begin_skip(s, i, State::kEvents);
      Event ev;
      const std::size_t end = parse_event(s, i, ev);
      if (end != kIncomplete) on_event(ev);
      return end;
    }
    case State::kDone:
      break;
  }
  fail(s, i, "unexpected text after the end of the trace's JSON");
}

std::size_t ChromeTraceReader::begin_skip(std::string_view s, std::size_t i, State after) {
  skipper_.reset();
  after_skip_ = after;
  state_ = State::kSkipValue;
  const std::size_t end = skipper_.feed(s, i);
  if (end != kIncomplete && skipper_.consumed_nothing()) fail(s, i, "expected a JSON value");
  if (end == kIncomplete) return s.size();
  state_ = after_skip_;
  return end;
}

std::size_t ChromeTraceReader::resume_skip(std::string_view s, std::size_t i) {
  const std::size_t end = skipper_.feed(s, i);
  if (end == kIncomplete) return s.size();
  state_ = after_skip_;
  return end;
}

// One event object at s[i] == '{'. Keys may come in any order; unknown keys
// (args, id, bp, ...) are skipped whole.
std::size_t ChromeTraceReader::parse_event(std::string_view s, std::size_t i, Event& ev) const {
  ++i;
  for (;;) {
    i = skip_space(s, i);
    if (i >= s.size()) return kIncomplete;
    if (s[i] == '}') return i + 1;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] != '"') fail(s, i, "expected a key or '}' in a trace event");
    const std::size_t key_end = json_string_end(s, i);
    if (key_end == kIncomplete) return kIncomplete;
    const std::string_view key = string_body(s, i, key_end);
    i = skip_space(s, key_end);
    if (i >= s.size()) return kIncomplete;
    if (s[i] != ':') fail(s, i, "expected ':' after a key in a trace event");
    i = skip_space(s, i + 1);
    if (i >= s.size()) return kIncomplete;
    i = parse_field(s, i, key, ev);
    if (i == kIncomplete) return kIncomplete;
    i = skip_space(s, i);
    if (i >= s.size()) return kIncomplete;
    if (s[i] != ',' && s[i] != '}') fail(s, i, "expected ',' or '}' after a value in a trace event");
  }
}

// The value of `key` at s[i]: kept when it is one the summary needs.
std::size_t ChromeTraceReader::parse_field(std::string_view s, std::size_t i, std::string_view key,
                                           Event& ev) const {
  if (s[i] == '}' || s[i] == ',' || s[i] == ']') fail(s, i, "expected a value in a trace event");
  const std::size_t end = json_value_end(s, i);
  if (end == kIncomplete) return kIncomplete;
  const Field f = field_of(key);
  if (f == Field::kOther) return end;
  if (s[i] == '"') {
    const std::string_view body = string_body(s, i, end);
    if (f == Field::kPh) ev.ph = body;
    if (f == Field::kCat) ev.cat = body;
    if (f == Field::kName) {
      ev.name = body;
      ev.name_escaped = body.find('\\') != std::string_view::npos;
    }
    return end;  // a string pid ("Spans") or ts is not a device or a time
  }
  const std::string_view number = s.substr(i, end - i);
  if (f == Field::kPid) ev.pid = number;
  if (f == Field::kTs) ev.ts = number;
  if (f == Field::kDur) ev.dur = number;
  return end;
}

void ChromeTraceReader::on_event(const Event& ev) {
  if (ev.ph != "X") return;
  const GpuActivity gpu = gpu_activity(ev.cat);
  if (gpu == GpuActivity::kNone) {
    if (ev.cat == "user_annotation") {
      if (auto n = step_number(ev.name)) out_.add_step(*n);
    }
    return;
  }
  const auto ts = parse_scaled_decimal(ev.ts, kMicrosecondsToNs);
  const auto dur = parse_scaled_decimal(ev.dur, kMicrosecondsToNs);
  std::int64_t end = 0;
  if (!ts || !dur || *ts < 0 || *dur < 0 || __builtin_add_overflow(*ts, *dur, &end)) {
    out_.skip_launch();
    return;
  }
  std::string_view name = ev.name;
  if (ev.name_escaped) {
    decode_json_string(ev.name, name_buf_);
    name = name_buf_;
  }
  // Kineto puts the device index in a GPU event's pid; -1 when it is not a number.
  const auto device = parse_scaled_decimal(ev.pid, 0);
  out_.add_launch(device.value_or(-1), *ts, end, name, gpu == GpuActivity::kMemory);
}

}  // namespace attune::diagnose::profile
