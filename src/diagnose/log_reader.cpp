#include "attune/diagnose/log_reader.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "attune/util/chunked_file.h"
#include "attune/util/error.h"
#include "attune/util/input_file.h"

namespace attune::diagnose {
namespace {

constexpr std::size_t kWrapColumns = 80;     // terminals / viewers hard-wrap at 80
constexpr std::size_t kDedupWindow = 64;     // rank copies of a line arrive close together
constexpr std::size_t kDedupBuckets = 4096;  // power of 2

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

std::size_t count_digits(std::string_view s, std::size_t from) {
  std::size_t n = 0;
  while (from + n < s.size() && is_digit(s[from + n])) ++n;
  return n;
}

int parse_int(std::string_view digits) {
  int v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// "[rank3]:" / "[default3]:" (tag = "[rank" / "[default"), one optional space after.
bool strip_rank_tag(std::string_view& s, std::string_view tag, int& rank) {
  if (!starts_with(s, tag)) return false;
  const std::size_t n = count_digits(s, tag.size());
  const std::size_t end = tag.size() + n;
  if (n == 0 || n > 7 || s.substr(end, 2) != "]:") return false;
  rank = parse_int(s.substr(tag.size(), n));
  s.remove_prefix(end + 2);
  if (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return true;
}

// srun --label: only digits, then ": ", at the start of the line.
bool strip_srun_label(std::string_view& s, int& rank) {
  const std::size_t n = count_digits(s, 0);
  if (n == 0 || n > 6 || s.substr(n, 2) != ": ") return false;
  rank = parse_int(s.substr(0, n));
  s.remove_prefix(n + 2);
  return true;
}

// NeMo-Run: "task/0 [default3]:" — a word ending in "/digits", then the tag.
bool strip_nemo_task(std::string_view& s, int& rank) {
  const std::size_t space = s.substr(0, 64).find(' ');
  if (space == std::string_view::npos || space < 3) return false;
  const std::size_t slash = s.substr(0, space).rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  if (count_digits(s, slash + 1) != space - slash - 1) return false;
  std::string_view rest = s.substr(space + 1);
  if (!strip_rank_tag(rest, "[default", rank)) return false;
  s = rest;
  return true;
}

// Viewer line numbers "[80746] " carry no rank.
bool strip_viewer_number(std::string_view& s) {
  if (s.empty() || s.front() != '[') return false;
  const std::size_t n = count_digits(s, 1);
  if (n == 0 || s.substr(1 + n, 2) != "] ") return false;
  s.remove_prefix(n + 3);
  return true;
}

bool strip_one_prefix(std::string_view& s, int& rank) {
  if (s.empty()) return false;
  const char c = s.front();
  if (c == '[') {
    return strip_rank_tag(s, "[rank", rank) || strip_rank_tag(s, "[default", rank) ||
           strip_viewer_number(s);
  }
  if (is_digit(c)) return strip_srun_label(s, rank);
  if (starts_with(s, "stdout: ") || starts_with(s, "stderr: ")) {
    s.remove_prefix(8);
    return true;
  }
  return strip_nemo_task(s, rank);
}

// Prefixes nest ("[80746] 3: [rank3]: ..."); the outermost rank wins.
int strip_prefixes(std::string_view& s, int rank) {
  for (int i = 0; i < 6; ++i) {
    int found = -1;
    if (!strip_one_prefix(s, found)) break;
    if (rank < 0) rank = found;
  }
  return rank;
}

// "Characters" for the 80-column test are UTF-8 code points (progress bars use █).
bool is_hard_wrapped(std::string_view s) {
  if (s.size() < kWrapColumns || s.size() > 4 * kWrapColumns) return false;
  std::size_t points = 0;
  for (unsigned char c : s) points += (c & 0xC0) != 0x80;
  return points == kWrapColumns;
}

// The last non-empty CR-separated part: what a terminal would finally show.
std::string_view last_cr_segment(std::string_view s) {
  while (!s.empty()) {
    const std::size_t cr = s.rfind('\r');
    if (cr == std::string_view::npos) return s;
    if (cr + 1 < s.size()) return s.substr(cr + 1);
    s.remove_suffix(1);
  }
  return s;
}

// A progress bar's refresh (tqdm's "n/N [elapsed<left, rate]"), by its rate.
bool is_bar_refresh(std::string_view s) {
  return s.find('/') != std::string_view::npos &&
         (s.find("it/s") != std::string_view::npos || s.find("s/it") != std::string_view::npos);
}

// The refreshes a bar wrote before the last CR-separated part: on a file,
// tqdm and Lightning keep one physical line until something else prints a
// newline (a quiet run's whole training), and each refresh is a step's
// position and rate. A terminal shows only the last; a reader of the file
// sees them all.
std::vector<std::string_view> earlier_bar_refreshes(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t cr = s.find('\r', start);
    if (cr == std::string_view::npos) break;
    const std::string_view part = s.substr(start, cr - start);
    if (is_bar_refresh(part)) out.push_back(part);
    start = cr + 1;
  }
  // The last non-empty part is read as the line itself.
  if (!out.empty() && out.back().data() == last_cr_segment(s).data()) out.pop_back();
  return out;
}

// Where an escape sequence starting at s[i] == ESC ends (one past it).
std::size_t skip_escape(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size()) return s.size();
  const char kind = s[i + 1];
  std::size_t j = i + 2;
  if (kind == '[') {  // CSI: parameters/intermediates, then a final byte @..~
    while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
    return j < s.size() ? j + 1 : s.size();
  }
  if (kind == ']') {  // OSC (terminal titles): up to BEL or ESC backslash
    while (j < s.size() && s[j] != '\a' && s[j] != '\x1b') ++j;
    if (j < s.size() && s[j] == '\x1b') ++j;
    return j < s.size() ? j + 1 : s.size();
  }
  return j;  // two-byte escapes such as ESC ( B
}

void strip_ansi(std::string_view s, std::string& out) {
  out.clear();
  std::size_t i = 0;
  while (i < s.size()) {
    const void* esc = std::memchr(s.data() + i, '\x1b', s.size() - i);
    if (esc == nullptr) {
      out.append(s.substr(i));
      break;
    }
    const std::size_t e = static_cast<const char*>(esc) - s.data();
    out.append(s.substr(i, e - i));
    i = skip_escape(s, e);
  }
}

// A record glued to a progress bar: "...7][E ProcessGroupNCCL...", "...[E1130 ...",
// "... [rank3]: ...", "...00:00]{'loss': ...}". Returns where the record starts
// (the '[' or '{'), and in `cut` where the text before it ends.
bool is_glue_at(std::string_view s, std::size_t p, std::size_t& cut) {
  const std::string_view rest = s.substr(p);
  cut = p;
  if (rest[0] == '{') return s[p - 1] == ']' && rest.size() > 1 && rest[1] == '\'';
  if (rest.size() < 3) return false;
  const char lvl = rest[1];
  if ((lvl == 'E' || lvl == 'W' || lvl == 'I') &&
      (is_digit(rest[2]) || starts_with(rest.substr(2), " ProcessGroupNCCL"))) {
    return true;
  }
  if (starts_with(rest.substr(1), "ProcessGroupNCCL")) return true;
  if (s[p - 1] == ' ' && starts_with(rest, "[rank")) {
    const std::size_t n = count_digits(rest, 5);
    if (n > 0 && rest.substr(5 + n, 2) == "]:") {
      cut = p - 1;
      return true;
    }
  }
  return false;
}

// Candidates are found with memchr: lines are long and brackets few.
std::size_t find_glue(std::string_view s, std::size_t from, std::size_t& cut) {
  const char* base = s.data();
  const char* end = base + s.size();
  const char* square = from < s.size() ? static_cast<const char*>(std::memchr(base + from, '[', s.size() - from)) : nullptr;
  const char* curly = from < s.size() ? static_cast<const char*>(std::memchr(base + from, '{', s.size() - from)) : nullptr;
  while (square || curly) {
    const bool take_square = square && (!curly || square < curly);
    const char* at = take_square ? square : curly;
    if (is_glue_at(s, static_cast<std::size_t>(at - base), cut)) return static_cast<std::size_t>(at - base);
    const char* next = at + 1;
    const char c = take_square ? '[' : '{';
    const char* found = next < end ? static_cast<const char*>(std::memchr(next, c, static_cast<std::size_t>(end - next))) : nullptr;
    (take_square ? square : curly) = found;
  }
  return std::string_view::npos;
}

// 64-bit hash for dedup, which only needs to tell recent lines apart. The
// bulk is XXH3's accumulate step: four lanes, each adding a 32x32->64-bit
// product of its input word with a key, so it runs as SIMD even on plain
// SSE2 (a chain of 64-bit multiplies was a tenth of the reader's time).
std::uint64_t hash_text(std::string_view s) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  constexpr std::uint64_t kKey[4] = {0xBE4BA423396CFEB8ull, 0x1CAD21F72C81017Cull, 0xDB979083E96DD4DEull,
                                     0x1F67B3B7A4A44072ull};
  std::uint64_t a0 = 0x9E3779B1ull, a1 = 0x85EBCA77ull, a2 = 0xC2B2AE3Dull, a3 = 0x27D4EB2Full;
  auto word = [&s](std::size_t at) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + at, 8);
    return w;
  };
  auto product = [](std::uint64_t x) { return (x & 0xFFFFFFFFull) * (x >> 32); };
  std::size_t i = 0;
  for (; i + 32 <= s.size(); i += 32) {
    const std::uint64_t w0 = word(i), w1 = word(i + 8), w2 = word(i + 16), w3 = word(i + 24);
    a0 += product(w0 ^ kKey[0]) + w1;
    a1 += product(w1 ^ kKey[1]) + w0;
    a2 += product(w2 ^ kKey[2]) + w3;
    a3 += product(w3 ^ kKey[3]) + w2;
  }
  std::uint64_t h = s.size() * kMul;
  for (std::uint64_t a : {a0, a1, a2, a3}) {
    h = (h ^ a) * kMul;
    h ^= h >> 32;
  }
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * kMul;
  return h ^ (h >> 29);
}

// Length of the UTF-8 sequence whose lead byte (>= 0x80) is s[i]: 0 when it
// is invalid (overlong, surrogate, past U+10FFFF, a stray continuation
// byte), -1 when s ends inside a sequence valid so far.
int utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  int n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int k = 1; k < n; ++k) {
    if (i + k >= s.size()) return -1;
    const unsigned char b = byte(i + k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return n;
}

// Controls a terminal acts on, which real logs carry: tab, newline, VT, FF,
// CR (progress bars), backspace, bell (ends OSC titles), ESC (colours).
bool is_text_control(unsigned char c) {
  return c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == '\b' || c == '\a' || c == 0x1b;
}

// No fmt here: the fuzz targets link the log path without it.
std::string one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string size_text(std::uint64_t bytes) {
  const auto in = [bytes](int shift) { return one_decimal(static_cast<double>(bytes) / static_cast<double>(1ull << shift)); };
  if (bytes >= (std::uint64_t{1} << 30)) return in(30) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20)) return in(20) + " MiB";
  if (bytes >= (std::uint64_t{1} << 10)) return in(10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// Where to cut s to at most `cap` bytes without splitting a UTF-8 character.
std::size_t utf8_cut(std::string_view s, std::size_t cap) {
  if (s.size() <= cap) return s.size();
  std::size_t n = cap;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

// An over-long physical line with CR progress updates, as the normaliser
// reads it: its first CR-separated part (where rank prefixes sit), its last
// non-empty part (what a terminal finally shows), a CR if it ends in one (the
// next bytes start a new part). False when it has no CR or that exceeds cap.
bool keep_cr_ends(std::string_view s, std::size_t cap, std::string& out) {
  const std::size_t first = s.find('\r');
  if (first == std::string_view::npos) return false;
  std::size_t end = s.size();
  while (end > first && s[end - 1] == '\r') --end;
  out.assign(s.substr(0, first + 1));
  if (end > first + 1) {
    const std::size_t start = s.rfind('\r', end - 1) + 1;
    out.append(s.substr(start, end - start));
    if (end < s.size()) out.push_back('\r');
  }
  return out.size() <= cap;
}

}  // namespace

std::string not_text_reason(std::string_view head) {
  if (head.empty()) return "";
  const auto byte = [&head](std::size_t k) { return static_cast<unsigned char>(head[k]); };
  if (head.size() >= 2 && ((byte(0) == 0xFF && byte(1) == 0xFE) || (byte(0) == 0xFE && byte(1) == 0xFF))) {
    return "not a text log (UTF-16: byte order mark at offset 0): convert it to UTF-8 first, e.g. iconv -f UTF-16 "
           "-t UTF-8";
  }
  if (const void* nul = std::memchr(head.data(), '\0', head.size())) {
    return "not a text log (NUL byte at offset " + std::to_string(static_cast<const char*>(nul) - head.data()) + ")";
  }
  std::size_t bad = 0;
  std::size_t first_bad = 0;
  for (std::size_t i = 0; i < head.size();) {
    const unsigned char c = byte(i);
    int n = 1;
    bool text = true;
    if (c < 0x80) {
      text = (c >= 0x20 && c != 0x7F) || is_text_control(c);
    } else {
      n = utf8_length(head, i);
      if (n < 0) break;  // a character cut by the end of the head
      text = n > 0;
      n = std::max(n, 1);
    }
    if (!text && bad++ == 0) first_bad = i;
    i += static_cast<std::size_t>(n);
  }
  // A few stray bytes pass even in a log of a few lines.
  if (bad <= LogReader::kMinNonTextBytes ||
      static_cast<double>(bad) <= LogReader::kMaxNonTextShare * static_cast<double>(head.size())) {
    return "";
  }
  const double share = static_cast<double>(bad) / static_cast<double>(head.size());
  return "not a text log (" + std::to_string(static_cast<int>(100 * share + 0.5)) + "% of its first " +
         std::to_string(head.size()) + " bytes are invalid UTF-8 or control bytes, the first at offset " +
         std::to_string(first_bad) + "; a log may have at most " +
         std::to_string(static_cast<int>(100 * LogReader::kMaxNonTextShare + 0.5)) + "%)";
}

class LogReader::Normaliser {
 public:
  Normaliser(Callback cb, std::size_t max_line) : cb_(std::move(cb)), max_line_(max_line) {}

  void physical(std::string_view raw);
  void finish();

 private:
  void flush_pending();
  struct Seen {
    std::size_t size = 0;
    int rank = -1;
  };

  void logical(std::string_view s, long line, int rank);
  void emit(std::string_view s, long line, int rank);
  bool is_other_rank_copy(std::string_view s, int rank);

  Callback cb_;
  std::size_t max_line_;  // a logical line of joined 80-column lines is cut here
  long lineno_ = 0;
  std::string ansi_buf_;
  std::string pending_;  // hard-wrapped text waiting for its continuation
  bool has_pending_ = false;
  long pending_line_ = 0;
  int pending_rank_ = -1;
  // The last kDedupWindow ranked lines, a ring; hashes apart so that the scan
  // is one vectorised comparison.
  std::array<std::uint64_t, kDedupWindow> seen_hash_{};
  std::array<Seen, kDedupWindow> seen_{};
  std::size_t seen_next_ = 0;
  std::size_t seen_count_ = 0;
  // How many ring entries fall in each bucket of the hash: a zero means the
  // line is not in the ring, which is the common case, without a scan.
  std::array<std::uint8_t, kDedupBuckets> bucket_count_{};
};

void LogReader::Normaliser::physical(std::string_view raw) {
  ++lineno_;
  std::string_view s = raw;
  if (std::memchr(s.data(), '\x1b', s.size()) != nullptr) {
    strip_ansi(s, ansi_buf_);
    s = ansi_buf_;
  }
  // The prefix sits before the first progress update; the record after the
  // last CR may carry its own.
  int rank = strip_prefixes(s, -1);
  if (std::memchr(s.data(), '\r', s.size()) != nullptr) {
    const std::vector<std::string_view> bars = earlier_bar_refreshes(s);
    // A bar between two halves of a wrapped line ends it: lines leave in
    // the order they were written.
    if (!bars.empty()) flush_pending();
    for (std::string_view bar : bars) logical(bar, lineno_, strip_prefixes(bar, rank));
    s = last_cr_segment(s);
    rank = strip_prefixes(s, rank);
  }
  if (is_hard_wrapped(s)) {
    // A wall of 80-column lines (a banner, a table) is one logical line per
    // max_line_ bytes, so the join cannot grow without bound.
    if (has_pending_ && pending_.size() + s.size() > max_line_) {
      has_pending_ = false;
      logical(pending_, pending_line_, pending_rank_);
    }
    if (!has_pending_) {
      pending_.clear();
      pending_line_ = lineno_;
      pending_rank_ = rank;
      has_pending_ = true;
    }
    pending_.append(s);
    return;
  }
  if (has_pending_) {
    pending_.append(s);
    has_pending_ = false;
    logical(pending_, pending_line_, pending_rank_);
    return;
  }
  logical(s, lineno_, rank);
}

void LogReader::Normaliser::flush_pending() {
  if (!has_pending_) return;
  has_pending_ = false;
  logical(pending_, pending_line_, pending_rank_);
}

void LogReader::Normaliser::finish() { flush_pending(); }

// Splits records glued to progress bars; each piece keeps the line number.
void LogReader::Normaliser::logical(std::string_view s, long line, int rank) {
  std::size_t cut = 0;
  std::size_t at = find_glue(s, 1, cut);
  if (at == std::string_view::npos) {
    emit(s, line, rank);
    return;
  }
  std::size_t start = 0;
  while (at != std::string_view::npos) {
    std::string_view piece = s.substr(start, cut - start);
    if (!piece.empty()) emit(piece, line, start == 0 ? rank : strip_prefixes(piece, rank));
    start = at;
    at = find_glue(s, at + 1, cut);
  }
  std::string_view piece = s.substr(start);
  emit(piece, line, strip_prefixes(piece, rank));
}

// A line already seen from another rank within the window is a copy. Lines
// without a rank cannot be told apart, so they always pass.
bool LogReader::Normaliser::is_other_rank_copy(std::string_view s, int rank) {
  if (rank < 0 || s.empty()) return false;
  const std::uint64_t h = hash_text(s);
  if (bucket_count_[h & (kDedupBuckets - 1)] != 0) {
    for (std::size_t i = 0; i < seen_count_; ++i) {
      if (seen_hash_[i] == h && seen_[i].size == s.size()) return seen_[i].rank != rank;
    }
  }
  if (seen_count_ == kDedupWindow) {
    --bucket_count_[seen_hash_[seen_next_] & (kDedupBuckets - 1)];
  } else {
    ++seen_count_;
  }
  ++bucket_count_[h & (kDedupBuckets - 1)];
  seen_hash_[seen_next_] = h;
  seen_[seen_next_] = Seen{s.size(), rank};
  seen_next_ = (seen_next_ + 1) % kDedupWindow;
  return false;
}

void LogReader::Normaliser::emit(std::string_view s, long line, int rank) {
  if (is_other_rank_copy(s, rank)) return;
  cb_(LogLine{s, line, rank});
}

LogReader::LogReader(Callback on_line) : LogReader(std::move(on_line), Limits{}) {}

LogReader::LogReader(Callback on_line, Limits limits)
    : limits_(limits), norm_(std::make_unique<Normaliser>(std::move(on_line), limits.max_line_bytes)) {}

LogReader::~LogReader() = default;

// A complete physical line, bounded first when it is over the cap.
void LogReader::deliver(std::string_view line) {
  const std::size_t cap = limits_.max_line_bytes;
  if (line.size() <= cap) {
    norm_->physical(line);
    return;
  }
  if (!keep_cr_ends(line, cap, bounded_)) {
    bounded_.assign(line.substr(0, utf8_cut(line, cap)));
    ++truncated_lines_;
  }
  norm_->physical(bounded_);
}

// Bytes of a line whose newline has not come yet. Its CR parts are dropped
// when it grows over the cap, keeping at most half the cap so that the next
// drop is as many bytes away (linear time whatever the feed sizes); a line
// still over the cap is cut, and the rest dropped up to its newline.
void LogReader::append_partial(std::string_view bytes) {
  if (dropping_) return;
  const std::size_t cap = limits_.max_line_bytes;
  partial_.append(bytes);
  if (partial_.size() <= cap) return;
  if (keep_cr_ends(partial_, cap / 2, bounded_)) {
    partial_.swap(bounded_);
    return;
  }
  partial_.resize(utf8_cut(partial_, cap));
  dropping_ = true;
  ++truncated_lines_;
}

void LogReader::feed(std::string_view bytes) {
  if (!partial_.empty() || dropping_) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) {
      append_partial(bytes);
      return;
    }
    const std::size_t n = static_cast<const char*>(nl) - bytes.data();
    append_partial(bytes.substr(0, n));
    deliver(partial_);
    partial_.clear();
    dropping_ = false;
    bytes.remove_prefix(n + 1);
  }
  // Complete lines are normalised in place, straight from the caller's buffer.
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) break;
    const std::size_t n = static_cast<const char*>(nl) - bytes.data();
    deliver(bytes.substr(0, n));
    bytes.remove_prefix(n + 1);
  }
  append_partial(bytes);
}

void LogReader::finish() {
  if (!partial_.empty()) {
    deliver(partial_);
    partial_.clear();
  }
  dropping_ = false;
  norm_->finish();
}

// The type and size are judged before the file is opened, the text before any
// line is delivered (the first kSniffBytes are held until then), the size again
// as gzip decompresses.
void LogReader::read_file(const std::string& path) {
  const std::string what = "log file";
  const std::uint64_t cap = limits_.max_log_bytes;
  const std::uint64_t size = regular_file_size(path, what);
  if (size > cap) {
    throw InputError({path, 0, 0}, "",
                     what + " is " + std::to_string(size) + " bytes (" + size_text(size) + "), over the " +
                         size_text(cap) + " attune reads from one log: give it the log's tail (e.g. tail -c 1G "
                         "FILE > tail.log)");
  }
  std::string head;
  bool judged = false;
  std::uint64_t total = 0;
  auto judge = [&] {
    const std::string why = not_text_reason(head);
    if (!why.empty()) throw InputError({path, 0, 0}, "", why);
    judged = true;
    feed(head);
    std::string().swap(head);
  };
  const std::uint64_t stop = limits_.read_bytes;
  read_file_chunks(path, what, [&](std::string_view chunk) {
    if (stop > 0) {
      if (total >= stop) return;
      if (total + chunk.size() > stop) chunk = chunk.substr(0, static_cast<std::size_t>(stop - total));
    }
    total += chunk.size();
    if (total > cap) {
      throw InputError({path, 0, 0}, "",
                       what + " decompresses to more than " + size_text(cap) +
                           ", the most attune reads from one log: give it the log's tail (e.g. zcat FILE | tail -c "
                           "1G > tail.log)");
    }
    if (!judged) {
      const std::size_t take = std::min(chunk.size(), kSniffBytes - head.size());
      head.append(chunk.substr(0, take));
      chunk.remove_prefix(take);
      if (head.size() < kSniffBytes) return;
      judge();
    }
    feed(chunk);
  });
  if (!judged) judge();
  finish();
}

void LogReader::read_file(const std::string& path, const Callback& on_line) {
  LogReader reader(on_line);
  reader.read_file(path);
}

void LogReader::read_text(std::string_view text, const Callback& on_line) {
  LogReader reader(on_line);
  reader.feed(text);
  reader.finish();
}

}  // namespace attune::diagnose
