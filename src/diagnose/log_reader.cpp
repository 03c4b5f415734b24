#include "attune/diagnose/log_reader.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "attune/util/chunked_file.h"

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

}  // namespace

class LogReader::Normaliser {
 public:
  explicit Normaliser(Callback cb) : cb_(std::move(cb)) {}

  void physical(std::string_view raw);
  void finish();

 private:
  struct Seen {
    std::size_t size = 0;
    int rank = -1;
  };

  void logical(std::string_view s, long line, int rank);
  void emit(std::string_view s, long line, int rank);
  bool is_other_rank_copy(std::string_view s, int rank);

  Callback cb_;
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
    s = last_cr_segment(s);
    rank = strip_prefixes(s, rank);
  }
  if (is_hard_wrapped(s)) {
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

void LogReader::Normaliser::finish() {
  if (!has_pending_) return;
  has_pending_ = false;
  logical(pending_, pending_line_, pending_rank_);
}

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

LogReader::LogReader(Callback on_line) : norm_(std::make_unique<Normaliser>(std::move(on_line))) {}

LogReader::~LogReader() = default;

void LogReader::feed(std::string_view bytes) {
  if (!partial_.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) {
      partial_.append(bytes);
      return;
    }
    const std::size_t n = static_cast<const char*>(nl) - bytes.data();
    partial_.append(bytes.substr(0, n));
    norm_->physical(partial_);
    partial_.clear();
    bytes.remove_prefix(n + 1);
  }
  // Complete lines are normalised in place, straight from the caller's buffer.
  while (!bytes.empty()) {
    const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
    if (nl == nullptr) break;
    const std::size_t n = static_cast<const char*>(nl) - bytes.data();
    norm_->physical(bytes.substr(0, n));
    bytes.remove_prefix(n + 1);
  }
  partial_.assign(bytes);
}

void LogReader::finish() {
  if (!partial_.empty()) {
    norm_->physical(partial_);
    partial_.clear();
  }
  norm_->finish();
}

void LogReader::read_file(const std::string& path) {
  read_file_chunks(path, "log file", [this](std::string_view chunk) { feed(chunk); });
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
