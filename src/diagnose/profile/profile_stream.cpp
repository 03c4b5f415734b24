#include "profile_stream.h"

#include <cstring>

#include "attune/util/error.h"

namespace attune::diagnose::profile {
namespace {

constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;  // nsys rows are short; a bound for junk

bool is_leading_byte(char c) {
  return is_json_space(c) || c == '\xEF' || c == '\xBB' || c == '\xBF';  // BOM EF BB BF
}

}  // namespace

ProfileStreamReader::ProfileStreamReader(std::string name_for_errors) : file_(std::move(name_for_errors)) {}

void ProfileStreamReader::start(Format format) {
  format_ = format;
  if (format == Format::kChromeTrace) {
    chrome_ = std::make_unique<ChromeTraceReader>(builder_, file_);
  } else {
    nsys_ = std::make_unique<NsysStatsReader>(builder_, file_);
  }
}

void ProfileStreamReader::feed(std::string_view bytes) {
  if (format_ == Format::kUnknown) {
    std::size_t i = 0;
    while (i < bytes.size() && is_leading_byte(bytes[i])) ++i;
    if (i == bytes.size()) {
      if (leading_.size() < kMaxLineBytes) leading_.append(bytes);
      return;
    }
    start(bytes[i] == '{' || bytes[i] == '[' ? Format::kChromeTrace : Format::kNsysText);
    const std::string leading = std::move(leading_);
    leading_.clear();
    feed(leading);
  }
  if (format_ == Format::kChromeTrace) {
    chrome_->feed(bytes);
  } else {
    feed_lines(bytes);
  }
}

void ProfileStreamReader::feed_lines(std::string_view bytes) {
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) {
      partial_line_.append(bytes);
      if (partial_line_.size() > kMaxLineBytes) {
        throw InputError(SourceLocation{file_, static_cast<int>(line_number_ + 1), 0}, "",
                         "a line longer than 16 MiB: not nsys stats output");
      }
      return;
    }
    const std::size_t n = static_cast<std::size_t>(static_cast<const char*>(nl) - bytes.data());
    if (partial_line_.empty()) {
      deliver_line(bytes.substr(0, n));
    } else {
      partial_line_.append(bytes.substr(0, n));
      deliver_line(partial_line_);
      partial_line_.clear();
    }
    bytes.remove_prefix(n + 1);
  }
}

// CR of CRLF and the BOM of the first line are not content.
void ProfileStreamReader::deliver_line(std::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
  nsys_->line(line, line_number_);
}

ProfileSummary ProfileStreamReader::finish() {
  switch (format_) {
    case Format::kUnknown:
      throw InputError(SourceLocation{file_, 0, 0}, "",
                       "empty profile: expected a PyTorch profiler (Kineto) Chrome trace JSON or "
                       "nsys stats CSV output");
    case Format::kChromeTrace:
      chrome_->finish();
      return builder_.build("chrome_trace");
    case Format::kNsysText:
      break;
  }
  if (!partial_line_.empty()) {
    deliver_line(partial_line_);
    partial_line_.clear();
  }
  return builder_.build(nsys_->finish());
}

}  // namespace attune::diagnose::profile
