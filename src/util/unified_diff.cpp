#include "attune/util/unified_diff.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace attune {

namespace {

struct Line {
  std::string text;
  bool last_without_newline = false;
};

std::vector<Line> lines_of(const std::string& s) {
  std::vector<Line> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back({s.substr(start), true});
      break;
    }
    out.push_back({s.substr(start, nl - start), false});
    start = nl + 1;
  }
  return out;
}

bool same(const Line& a, const Line& b) { return a.text == b.text && a.last_without_newline == b.last_without_newline; }

enum class Op { Keep, Remove, Add };
struct Step {
  Op op;
  std::size_t a, b;  // line indices in before / after
};

// The edit script: common prefix and suffix trimmed, the middle by LCS.
std::vector<Step> script(const std::vector<Line>& a, const std::vector<Line>& b) {
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && same(a[pre], b[pre])) ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && same(a[a.size() - 1 - suf], b[b.size() - 1 - suf])) ++suf;
  const std::size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = same(a[pre + i], b[pre + j]) ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<Step> out;
  for (std::size_t k = 0; k < pre; ++k) out.push_back({Op::Keep, k, k});
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && same(a[pre + i], b[pre + j])) {
      out.push_back({Op::Keep, pre + i++, pre + j++});
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back({Op::Remove, pre + i++, pre + j});  // diff -u prints what goes before what comes
    } else {
      out.push_back({Op::Add, pre + i, pre + j++});
    }
  }
  for (std::size_t k = 0; k < suf; ++k) out.push_back({Op::Keep, a.size() - suf + k, b.size() - suf + k});
  return out;
}

void emit(std::string& out, char mark, const Line& l) {
  out += mark;
  out += l.text;
  out += '\n';
  if (l.last_without_newline) out += "\\ No newline at end of file\n";
}

std::string range(std::size_t start, std::size_t count) {
  // diff -u: an empty range names the line before it.
  if (count == 0) return fmt::format("{},0", start);
  if (count == 1) return fmt::format("{}", start + 1);
  return fmt::format("{},{}", start + 1, count);
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_name,
                         const std::string& after_name, int context) {
  if (before == after) return "";
  const std::vector<Line> a = lines_of(before), b = lines_of(after);
  const std::vector<Step> steps = script(a, b);
  const std::size_t ctx = static_cast<std::size_t>(std::max(0, context));
  std::string out = fmt::format("--- {}\n+++ {}\n", before_name, after_name);
  std::size_t k = 0;
  while (k < steps.size()) {
    while (k < steps.size() && steps[k].op == Op::Keep) ++k;
    if (k == steps.size()) break;
    // A hunk: from ctx lines before this change to ctx lines after the last
    // change that is within 2*ctx lines of the previous one.
    const std::size_t first = k >= ctx ? k - ctx : 0;
    std::size_t last = k;
    for (std::size_t s = k; s < steps.size(); ++s) {
      if (steps[s].op != Op::Keep) last = s;
      else if (s - last > 2 * ctx) break;
    }
    const std::size_t end = std::min(steps.size(), last + ctx + 1);
    std::size_t a_count = 0, b_count = 0;
    for (std::size_t s = first; s < end; ++s) {
      a_count += steps[s].op != Op::Add;
      b_count += steps[s].op != Op::Remove;
    }
    out += fmt::format("@@ -{} +{} @@\n", range(steps[first].a, a_count), range(steps[first].b, b_count));
    for (std::size_t s = first; s < end; ++s) {
      const Step& st = steps[s];
      if (st.op == Op::Keep) emit(out, ' ', a[st.a]);
      else if (st.op == Op::Remove) emit(out, '-', a[st.a]);
      else emit(out, '+', b[st.b]);
    }
    k = end;
  }
  return out;
}

}  // namespace attune
