#include "attribution.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "attune/recipe/script_document.h"

namespace attune::gate {

namespace {

constexpr std::size_t kMaxDiffCells = 16'000'000;  // beyond this the middle is one changed block

struct Line {
  std::size_t begin = 0;
  std::size_t end = 0;  // past its '\n' (or the end of the text)
};

std::vector<Line> lines_of(std::string_view t) {
  std::vector<Line> out;
  std::size_t at = 0;
  while (at < t.size()) {
    const std::size_t nl = t.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? t.size() : nl + 1;
    out.push_back({at, end});
    at = end;
  }
  return out;
}

// A byte range of one side that differs from the other side.
struct Region {
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct Regions {
  std::vector<Region> original, candidate;
};

std::string_view text_of(std::string_view t, const Line& l) { return t.substr(l.begin, l.end - l.begin); }

// Two lines that replace each other: the bytes between their common prefix and suffix.
void pair_lines(std::string_view a, const Line& la, std::string_view b, const Line& lb, Regions& out) {
  const std::string_view x = text_of(a, la), y = text_of(b, lb);
  std::size_t p = 0;
  while (p < x.size() && p < y.size() && x[p] == y[p]) ++p;
  std::size_t s = 0;
  while (s < x.size() - p && s < y.size() - p && x[x.size() - 1 - s] == y[y.size() - 1 - s]) ++s;
  if (p + s < x.size()) out.original.push_back({la.begin + p, la.end - s});
  if (p + s < y.size()) out.candidate.push_back({lb.begin + p, lb.end - s});
}

// Lines [a0, a1) of the original replaced by [b0, b1) of the candidate.
void hunk(std::string_view a, const std::vector<Line>& la, std::size_t a0, std::size_t a1, std::string_view b,
          const std::vector<Line>& lb, std::size_t b0, std::size_t b1, Regions& out) {
  if (a1 - a0 == b1 - b0) {
    for (std::size_t k = 0; k < a1 - a0; ++k) pair_lines(a, la[a0 + k], b, lb[b0 + k], out);
    return;
  }
  if (a1 > a0) out.original.push_back({la[a0].begin, la[a1 - 1].end});
  if (b1 > b0) out.candidate.push_back({lb[b0].begin, lb[b1 - 1].end});
}

// A line diff (longest common subsequence of the lines between the common
// prefix and suffix), as the changed byte regions of each side.
Regions changed_regions(std::string_view a, std::string_view b) {
  const std::vector<Line> la = lines_of(a), lb = lines_of(b);
  std::size_t lo = 0;
  while (lo < la.size() && lo < lb.size() && text_of(a, la[lo]) == text_of(b, lb[lo])) ++lo;
  std::size_t ha = la.size(), hb = lb.size();
  while (ha > lo && hb > lo && text_of(a, la[ha - 1]) == text_of(b, lb[hb - 1])) --ha, --hb;
  Regions out;
  const std::size_t n = ha - lo, m = hb - lo;
  if (n == 0 && m == 0) return out;
  if (n * m > kMaxDiffCells || n == 0 || m == 0) {
    hunk(a, la, lo, ha, b, lb, lo, hb, out);
    return out;
  }
  // lcs[i][j]: common lines of a[lo+i..ha) and b[lo+j..hb).
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = text_of(a, la[lo + i]) == text_of(b, lb[lo + j]) ? lcs[i + 1][j + 1] + 1
                                                                    : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::size_t i = 0, j = 0, si = 0, sj = 0;
  while (i < n || j < m) {
    if (i < n && j < m && text_of(a, la[lo + i]) == text_of(b, lb[lo + j])) {
      hunk(a, la, lo + si, lo + i, b, lb, lo + sj, lo + j, out);
      si = ++i;
      sj = ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      ++j;
    } else {
      ++i;
    }
  }
  hunk(a, la, lo + si, lo + n, b, lb, lo + sj, lo + m, out);
  return out;
}

// One script as the attribution reads it: each setting as written, by path
// (value and text of every occurrence, in order), and the words bash reads.
struct ScriptSide {
  using Written = std::vector<std::pair<std::string, std::string>>;
  explicit ScriptSide(const recipe::ScriptDocument& d) : doc(d), entries(d.written()) {
    for (const auto& e : entries) by_path[e.path].emplace_back(e.value.str(), e.raw);
    for (const auto& [begin, end] : d.words()) words.push_back({begin, end});
  }
  // Whether `path` is not written the same way in `other`.
  bool differs(const std::string& path, const ScriptSide& other) const {
    const auto o = other.by_path.find(path);
    return o == other.by_path.end() || o->second != by_path.at(path);
  }
  const recipe::ScriptDocument& doc;
  std::vector<recipe::Entry> entries;
  std::map<std::string, Written> by_path;
  std::vector<Region> words;  // sorted, disjoint
};

// The bytes of every setting of `mine` that is not written the same in
// `other`, and of every literal one: re-quoting a word without expansions
// passes the same word.
std::vector<Region> changed_spans(const ScriptSide& mine, const ScriptSide& other) {
  std::vector<Region> out;
  for (const auto& e : mine.entries) {
    const bool literal = e.raw.find_first_of("$`") == std::string::npos;
    if (e.end > e.begin && (literal || mine.differs(e.path, other))) out.push_back({e.begin, e.end});
  }
  return out;
}

// The 1-based line of `lines` that holds byte `at`.
int line_of(const std::vector<Line>& lines, std::size_t at) {
  const auto l = std::upper_bound(lines.begin(), lines.end(), at, [](std::size_t x, const Line& y) { return x < y.begin; });
  return static_cast<int>(l - lines.begin());
}

// Sorted, disjoint: the union of `spans`.
std::vector<Region> merged(std::vector<Region> spans) {
  std::sort(spans.begin(), spans.end(), [](const Region& x, const Region& y) { return x.begin < y.begin; });
  std::vector<Region> out;
  for (const Region& r : spans) {
    if (!out.empty() && r.begin <= out.back().end) out.back().end = std::max(out.back().end, r.end);
    else out.push_back(r);
  }
  return out;
}

bool covered(const std::vector<Region>& spans, std::size_t at) {
  auto it = std::upper_bound(spans.begin(), spans.end(), at, [](std::size_t x, const Region& r) { return x < r.begin; });
  return it != spans.begin() && at < std::prev(it)->end;
}

// Lines (1-based) of `t` holding a byte of `regions` that bash reads (a word
// or operator, not a comment, blank or line break) and no span covers.
std::set<int> uncovered_lines(std::string_view t, const std::vector<Region>& regions, const std::vector<Region>& spans,
                              const std::vector<Region>& words) {
  const std::vector<Region> cover = merged(spans);
  const std::vector<Line> lines = lines_of(t);
  std::set<int> out;
  for (const Region& r : regions) {
    for (std::size_t at = r.begin; at < r.end && at < t.size(); ++at) {
      if (!covered(words, at) || covered(cover, at)) continue;
      out.insert(line_of(lines, at));
    }
  }
  return out;
}

// Where a YAML stream's first document ends: the next `---` or `...` line
// after its content begins (the loaders read the first document only).
std::size_t first_document_end(std::string_view t) {
  bool content = false;
  for (const Line& l : lines_of(t)) {
    const std::string_view s = text_of(t, l);
    const bool marker = (s.starts_with("---") || s.starts_with("...")) &&
                        (s.size() == 3 || s[3] == ' ' || s[3] == '\t' || s[3] == '\n' || s[3] == '\r');
    if (marker && content) return l.begin;
    const std::size_t first = s.find_first_not_of(" \t\r\n");
    if (!marker && first != std::string_view::npos && s[first] != '#' && s[first] != '%') content = true;
  }
  return t.size();
}

std::string line_text(std::string_view t, int line) {
  const std::vector<Line> ls = lines_of(t);
  if (line < 1 || static_cast<std::size_t>(line) > ls.size()) return "";
  std::string s(text_of(t, ls[static_cast<std::size_t>(line - 1)]));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const std::size_t first = s.find_first_not_of(" \t");
  s = first == std::string::npos ? "" : s.substr(first);
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

// Offsets of every `$name` and `${name...}` inside the words bash reads.
std::vector<std::size_t> uses_of(std::string_view t, const std::vector<Region>& words, std::string_view name) {
  std::vector<std::size_t> out;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const Region& w : words) {
    for (std::size_t at = t.find('$', w.begin); at != std::string_view::npos && at < w.end; at = t.find('$', at + 1)) {
      std::size_t p = at + 1 + (at + 1 < t.size() && t[at + 1] == '{' ? 1 : 0);
      if (t.compare(p, name.size(), name) != 0) continue;
      if (p + name.size() < t.size() && name_char(t[p + name.size()])) continue;
      out.push_back(at);
    }
  }
  return out;
}

// Whether offset `at` lies inside double quotes of the word `w` it is in.
bool double_quoted(std::string_view t, const Region& w, std::size_t at) {
  return std::count(t.begin() + static_cast<std::ptrdiff_t>(w.begin), t.begin() + static_cast<std::ptrdiff_t>(at), '"') % 2 == 1;
}

// A variable whose value changed is followed only where the model reads it:
// in a flag's value or another assignment (a bare word-split there, or any
// use in a test, branch, loop or command, may add, drop or select flags the
// model cannot see). Uses by `echo` only print.
std::vector<RefusalReason> unfollowed_variables(const ScriptSide& original, const ScriptSide& candidate) {
  std::vector<RefusalReason> out;
  const std::string_view t = candidate.doc.text();
  std::vector<Region> read;
  for (const auto& e : candidate.entries) read.push_back({e.begin, e.end});
  read = merged(std::move(read));
  const std::vector<Line> lines = lines_of(t);
  for (const auto& [path, written] : candidate.by_path) {
    if (path.rfind("var.", 0) != 0 && path.rfind("env.", 0) != 0) continue;
    if (!candidate.differs(path, original)) continue;
    const std::string name = path.substr(4);
    const bool splits = std::any_of(written.begin(), written.end(), [](const auto& w) {
      return w.first.find_first_of(" \t\n") != std::string::npos;
    });
    for (std::size_t at : uses_of(t, candidate.words, name)) {
      const int line = line_of(lines, at);
      const std::string text = line_text(t, line);
      const auto w = std::prev(std::upper_bound(candidate.words.begin(), candidate.words.end(), at,
                                                [](std::size_t x, const Region& r) { return x < r.begin; }));
      std::string why;
      if (!covered(read, at)) {
        if (text.rfind("echo ", 0) == 0) continue;
        why = "reads it in a construct attune does not follow (a test, a branch, a loop or a command may add, drop or "
              "select flags)";
      } else if (splits && !double_quoted(t, *w, at)) {
        why = "expands it unquoted, so bash splits its new value into more words than the model reads";
      } else {
        continue;
      }
      out.push_back({"unattributed_change", fmt::format("{}:{}", candidate.doc.name(), line),
                     fmt::format("{} changed, and line {} ('{}') {}", name, line, text, why)});
      break;
    }
  }
  return out;
}

// A changed byte inside a construct that writes a variable the reader does not
// follow (`${TP:=2}` in a flag, a `read`): what later reads of it get changes
// in a way no setting shows.
void untracked_writes_changed(const recipe::ScriptDocument& d, const std::vector<Region>& changed, const char* side,
                              std::vector<RefusalReason>& out) {
  const std::vector<Line> lines = lines_of(d.text());
  for (const auto& [begin, end] : d.untracked_writes()) {
    for (const Region& r : changed) {
      if (r.end <= begin || end <= r.begin) continue;
      const int line = line_of(lines, std::max(begin, r.begin));
      out.push_back({"unattributed_change", fmt::format("{}:{}", d.name(), line),
                     fmt::format("line {} of the {} changes a construct that writes a variable as a side effect ('{}'); "
                                 "what later reads of it get is not a setting attune follows",
                                 line, side, line_text(d.text(), line))});
      return;
    }
  }
}

// The launch's command lines, each with its program: a line break or `;`
// inserted into a command makes its tail a command of its own, and the
// program no longer receives those flags although every value is the same.
void commands_changed(const recipe::ScriptDocument& a, const recipe::ScriptDocument& b, std::vector<RefusalReason>& out) {
  const auto ca = a.commands(), cb = b.commands();
  for (std::size_t i = 0; i < std::max(ca.size(), cb.size()); ++i) {
    if (i < ca.size() && i < cb.size() && ca[i].second == cb[i].second) continue;
    const bool in_b = i < cb.size();
    const recipe::ScriptDocument& d = in_b ? b : a;
    const int line = line_of(lines_of(d.text()), in_b ? cb[i].first : ca[i].first);
    out.push_back({"unattributed_change", fmt::format("{}:{}", d.name(), line),
                   fmt::format("the launch's command lines differ at line {} of the {} ('{}'): a command split, "
                               "joined, added or removed changes which program receives which flags",
                               line, in_b ? "candidate" : "original", line_text(d.text(), line))});
    return;
  }
}

std::vector<RefusalReason> script_changes(const ScriptSide& original, const ScriptSide& candidate, const Regions& regions) {
  std::vector<RefusalReason> out;
  commands_changed(original.doc, candidate.doc, out);
  const std::string_view a = original.doc.text(), b = candidate.doc.text();
  untracked_writes_changed(candidate.doc, regions.candidate, "candidate", out);
  untracked_writes_changed(original.doc, regions.original, "original", out);
  for (int line : uncovered_lines(b, regions.candidate, changed_spans(candidate, original), candidate.words)) {
    out.push_back({"unattributed_change", fmt::format("{}:{}", candidate.doc.name(), line),
                   fmt::format("line {} changed ('{}'), but no setting attune reads changed there: the edit reaches "
                               "the training through a construct the reader does not model",
                               line, line_text(b, line))});
  }
  for (int line : uncovered_lines(a, regions.original, changed_spans(original, candidate), original.words)) {
    out.push_back({"unattributed_change", fmt::format("{}:{}", original.doc.name(), line),
                   fmt::format("line {} of the original was changed or removed ('{}'), but no setting attune reads "
                               "changed there",
                               line, line_text(a, line))});
  }
  for (auto& r : unfollowed_variables(original, candidate)) out.push_back(std::move(r));
  return out;
}

// A change at or past the end of the first document of either side.
std::vector<RefusalReason> yaml_changes(const recipe::Document& original, const recipe::Document& candidate,
                                        const Regions& regions) {
  std::vector<RefusalReason> out;
  auto check = [&](const recipe::Document& d, const std::vector<Region>& changed, const char* side) {
    const std::string_view t = d.text();
    const std::size_t end = first_document_end(t);
    for (const Region& r : changed) {
      if (r.end <= end) continue;
      const std::size_t at = std::max(r.begin, end);
      const int line = line_of(lines_of(t), at);
      out.push_back({"unattributed_change", fmt::format("{}:{}", d.name(), line),
                     fmt::format("line {} of the {} lies in a second YAML document ('{}'), which attune does not read "
                                 "but a loader of the whole stream would",
                                 line, side, line_text(t, line))});
      return;
    }
  };
  check(candidate, regions.candidate, "candidate");
  check(original, regions.original, "original");
  return out;
}

// A recipe kept as a command line: every changed byte is an override's (its
// flag, its value, the list's separators around it). A change anywhere else
// in the wrapper (the launcher's own arguments, the environment, the working
// directory) reaches the run without being a setting the gate compares.
bool inside_overrides(const recipe::Document& d, Region r) {
  const std::string_view t = d.text();
  auto separator = [&](std::size_t i) { return t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n' || t[i] == ','; };
  auto skip_separators = [&](std::size_t at) {
    for (bool moved = true; moved && at < r.end;) {
      moved = false;
      while (at < r.end && separator(at)) ++at, moved = true;
      if (at + 1 < r.end && t[at] == '-' && t[at + 1] == ' ') at += 2, moved = true;  // "- " of a block list
    }
    return at;
  };
  while (r.end > r.begin && separator(r.end - 1)) --r.end;
  const std::vector<recipe::Entry> entries = d.entries();
  // The region, separators aside, is a run of whole or partial overrides.
  for (std::size_t at = skip_separators(r.begin); at < r.end; at = skip_separators(at)) {
    const auto e = std::find_if(entries.begin(), entries.end(),
                                [&](const recipe::Entry& x) { return x.begin < x.end && x.begin <= at && at < x.end; });
    if (e == entries.end()) return false;
    at = e->end;
  }
  return true;
}

std::vector<RefusalReason> command_changes(const recipe::Document& original, const recipe::Document& candidate,
                                           const Regions& regions) {
  std::vector<RefusalReason> out;
  auto check = [&](const recipe::Document& d, const std::vector<Region>& changed, const char* side) {
    const std::string_view t = d.text();
    for (const Region& r : changed) {
      if (inside_overrides(d, r)) continue;
      const int line = line_of(lines_of(t), r.begin);
      out.push_back({"unattributed_change", fmt::format("{}:{}", d.name(), line),
                     fmt::format("line {} of the {} changed outside the command's overrides ('{}'): only a "
                                 "`--section.key value` of the training command is a setting attune compares",
                                 line, side, line_text(t, line))});
      return;
    }
  };
  check(candidate, regions.candidate, "candidate");
  check(original, regions.original, "original");
  return out;
}

}  // namespace

std::vector<RefusalReason> unattributed_changes(const recipe::Document& original, const recipe::Document& candidate) {
  if (original.text() == candidate.text()) return {};
  const Regions regions = changed_regions(original.text(), candidate.text());
  const auto* sa = dynamic_cast<const recipe::ScriptDocument*>(&original);
  const auto* sb = dynamic_cast<const recipe::ScriptDocument*>(&candidate);
  if (sa && sb) return script_changes(ScriptSide(*sa), ScriptSide(*sb), regions);
  if (original.format() == recipe::Format::Yaml) return yaml_changes(original, candidate, regions);
  if (original.format() == recipe::Format::Command) return command_changes(original, candidate, regions);
  return {};  // TOML: the reader parses every byte, and every leaf is compared
}

}  // namespace attune::gate
