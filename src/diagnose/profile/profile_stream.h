// ProfileStreamReader: the streaming front of read_profile. Bytes arrive in
// chunks of any size; the first byte that is not a space or byte-order mark
// picks the format ('{' or '[' → Chrome trace JSON, anything else → nsys
// stats text/CSV, split into lines here). Public to the library's tests so
// they can feed a trace in tiny chunks and check that chunk boundaries do
// not matter.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "attune/diagnose/profile.h"
#include "chrome_trace_reader.h"
#include "nsys_stats_reader.h"
#include "profile_builder.h"

namespace attune::diagnose::profile {

class ProfileStreamReader {
 public:
  explicit ProfileStreamReader(std::string name_for_errors);

  void feed(std::string_view bytes);
  // Throws InputError for an empty, truncated or unrecognised profile.
  ProfileSummary finish();

 private:
  enum class Format { kUnknown, kChromeTrace, kNsysText };

  void start(Format format);
  void feed_lines(std::string_view bytes);
  void deliver_line(std::string_view line);

  std::string file_;
  ProfileBuilder builder_;
  Format format_ = Format::kUnknown;
  std::string leading_;  // spaces / BOM bytes seen before the format is known
  std::unique_ptr<ChromeTraceReader> chrome_;
  std::unique_ptr<NsysStatsReader> nsys_;
  std::string partial_line_;
  long line_number_ = 0;
};

}  // namespace attune::diagnose::profile
