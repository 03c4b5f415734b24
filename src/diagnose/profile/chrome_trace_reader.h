// ChromeTraceReader: a streaming reader of PyTorch profiler (Kineto) Chrome
// traces. Traces run to gigabytes, so bytes arrive in chunks and only the
// unfinished tail of one event is ever kept; each complete event is parsed in
// place and reduced to what the summary needs: GPU activity (ph "X", cat
// kernel / gpu_memcpy / gpu_memset; pid = device, ts/dur in µs) and
// ProfilerStep#N annotations (cat user_annotation). Everything else — CPU ops,
// flows, args, deviceProperties — is skipped without being decoded. Also
// accepts the Chrome "array format" (a bare [ events ]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "json_scan.h"
#include "profile_builder.h"

namespace attune::diagnose::profile {

class ChromeTraceReader {
 public:
  ChromeTraceReader(ProfileBuilder& out, std::string name_for_errors);

  // Bytes in any split; throws InputError (with the line) on malformed JSON.
  void feed(std::string_view bytes);
  // End of input: throws InputError if the trace is truncated or has no
  // traceEvents array.
  void finish();

 private:
  enum class State : std::uint8_t { kBegin, kKeyOrEnd, kColon, kValue, kSkipValue, kEvents, kDone };

  // The fields of one event that matter, as views into the buffer; numbers
  // are converted only for the few events that need them.
  struct Event {
    std::string_view ph, cat, name;
    std::string_view pid, ts, dur;  // number text; empty when absent or a string
    bool name_escaped = false;
  };

  std::size_t parse(std::string_view s);
  std::size_t step(std::string_view s, std::size_t i);
  std::size_t begin_skip(std::string_view s, std::size_t i, State after);
  std::size_t resume_skip(std::string_view s, std::size_t i);
  std::size_t parse_event(std::string_view s, std::size_t i, Event& ev) const;
  std::size_t parse_field(std::string_view s, std::size_t i, std::string_view key, Event& ev) const;
  void on_event(const Event& ev);
  void drop_consumed(std::size_t n);
  [[noreturn]] void fail(std::string_view s, std::size_t at, const std::string& message) const;

  ProfileBuilder& out_;
  std::string file_;
  State state_ = State::kBegin;
  State after_skip_ = State::kKeyOrEnd;
  bool array_format_ = false;
  bool key_is_events_ = false;
  bool saw_events_ = false;
  ValueSkipper skipper_;
  std::string pending_;        // bytes not yet parsed (the unfinished tail)
  std::size_t retry_at_ = 0;   // re-parse the tail only once it has doubled: linear time
  long long lines_done_ = 0;   // newlines in bytes already parsed and dropped
  std::string name_buf_;       // a decoded name with escapes
};

}  // namespace attune::diagnose::profile
