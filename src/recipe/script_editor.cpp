#include "script_editor.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "attune/util/error.h"

namespace attune::recipe::script {

namespace {

constexpr size_t kNone = std::string_view::npos;
constexpr int kMaxFollow = 16;  // assignments followed through TP=${TP:-1} chains

bool is_safe_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_@%+=:,./-").find(c) != kNone;
}

bool has_space(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

std::string single_quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Inside "...": only $ ` " \ are special, and a backslash makes them literal.
std::string double_escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '$' || c == '`' || c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

bool double_safe(std::string_view s) { return s.find_first_of("$`\"\\!") == kNone; }

std::vector<std::string> words_of(const Value& v) {
  if (v.kind != ValueKind::List) return {v.text};
  std::vector<std::string> out;
  for (const Value& item : v.items) out.push_back(item.str());
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::vector<std::string> dash_parts(std::string_view key) {
  std::vector<std::string> parts;
  key.remove_prefix(std::min<size_t>(2, key.size()));
  for (size_t start = 0;;) {
    size_t dash = key.find('-', start);
    parts.emplace_back(key.substr(start, dash == kNone ? kNone : dash - start));
    if (dash == kNone) return parts;
    start = dash + 1;
  }
}

// How related two flags are: shared leading dash-separated parts
// (--overlap-param-gather ~ --overlap-grad-reduce), or at least two shared
// trailing parts (--pipeline-model-parallel-size ~ --tensor-model-parallel-size).
int relatedness(std::string_view a, std::string_view b) {
  auto pa = dash_parts(a), pb = dash_parts(b);
  size_t n = std::min(pa.size(), pb.size());
  size_t prefix = 0, suffix = 0;
  while (prefix < n && pa[prefix] == pb[prefix]) ++prefix;
  while (suffix < n && pa[pa.size() - 1 - suffix] == pb[pb.size() - 1 - suffix]) ++suffix;
  return static_cast<int>(std::max(prefix, suffix >= 2 ? suffix : 0));
}

bool has_default(const bash::VarRef& r) { return r.op == ":-" || r.op == "-" || r.op == ":=" || r.op == "="; }

}  // namespace

std::string shell_quote(std::string_view s) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), is_safe_char)) return std::string(s);
  return single_quoted(s);
}

std::string apply_splices(std::string_view text, std::vector<Splice> splices) {
  std::stable_sort(splices.begin(), splices.end(),
                   [](const Splice& a, const Splice& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  std::string out;
  size_t cursor = 0;
  const Splice* previous = nullptr;
  for (const Splice& s : splices) {
    bool same = previous && s.begin == previous->begin && s.end == previous->end && s.text == previous->text;
    if (same && s.begin != s.end) continue;  // two flag occurrences that read the same variable
    if (s.begin < cursor) {
      // Removing `--a 1 --a 2` takes the blank between them twice: join the deletions.
      if (!s.text.empty() || !previous->text.empty()) throw std::logic_error("overlapping script edits");
      cursor = std::max(cursor, s.end);
      continue;
    }
    out.append(text.substr(cursor, s.begin - cursor));
    out += s.text;
    cursor = s.end;
    previous = &s;
  }
  out.append(text.substr(cursor));
  return out;
}

Editor::Editor(const std::string& name, std::string_view text, const Model& model)
    : name_(name), t_(text), m_(model), resolver_(text, model) {}

// ---- flags ------------------------------------------------------------------

std::vector<const Flag*> Editor::occurrences(std::string_view key) const {
  std::vector<const Flag*> out;
  for (const Flag& f : m_.flags) {
    if (f.key == key) out.push_back(&f);
  }
  return out;
}

std::vector<Splice> Editor::set_flag(std::string_view flag, const Value& v) const {
  std::string key = normalise_flag(flag);
  bool remove = v.kind == ValueKind::Bool && !v.as_bool().value_or(true);
  auto occ = occurrences(key);
  if (occ.empty()) {
    if (remove) return {};
    return {insert_flag(flag, key, v)};
  }
  std::vector<Splice> out;
  for (const Flag* f : occ) {
    if (remove) remove_occurrence(*f, out);
    else edit_occurrence(*f, v, out);
  }
  return out;
}

std::vector<Splice> Editor::remove_flag(std::string_view flag) const {
  std::vector<Splice> out;
  for (const Flag* f : occurrences(normalise_flag(flag))) remove_occurrence(*f, out);
  return out;
}

void Editor::edit_occurrence(const Flag& f, const Value& v, std::vector<Splice>& out) const {
  if (f.values.empty()) {
    if (v.kind == ValueKind::Bool) return;  // a bare flag already means true
    out.push_back(Splice{f.flag.end, f.flag.end, " " + render_all(words_of(v), context(f, f.flag), f.name, f.flag.begin)});
    return;
  }
  if (v.kind != ValueKind::List && f.values.size() == 1) return edit_value(f, f.values[0], v.text, out);
  replace_values(f, words_of(v), out);
}

void Editor::replace_values(const Flag& f, const std::vector<std::string>& words, std::vector<Splice>& out) const {
  const Piece& first = f.values.front();
  const Piece& last = f.values.back();
  bool same_element = first.ctx != Quote::None && last.word_begin == first.word_begin;
  bool all_plain = std::all_of(f.values.begin(), f.values.end(), [](const Piece& p) { return p.ctx == Quote::None; });
  if (!same_element && !all_plain) fail(first.begin, f.name, "its values are spread over several quoted array elements");
  std::string text = render_all(words, context(f, first), f.name, first.begin);
  if (f.eq_form || words.empty()) {
    // --flag=a becomes --flag a b; an empty list leaves the bare flag.
    size_t from = f.eq_form ? f.name_end : f.flag.end;
    out.push_back(Splice{from, last.end, words.empty() ? "" : " " + text});
    return;
  }
  out.push_back(Splice{first.begin, last.end, text});
}

void Editor::edit_value(const Flag& f, const Piece& p, const std::string& literal, std::vector<Splice>& out) const {
  auto sole = sole_reference(p);
  const Assignment* a = sole && sole->ref.kind == bash::RefKind::Var ? resolver_.lookup(sole->ref.name, p.begin) : nullptr;
  if (a) return edit_assignment(*a, literal, f.name, out, 0);
  out.push_back(Splice{p.begin, p.end, render(literal, context(f, p), raw(p), f.name, p.begin)});
}

Editor::Ctx Editor::context(const Flag& f, const Piece& p) {
  if (p.ctx == Quote::Double) return Ctx::SplitDouble;
  if (p.ctx == Quote::Single) return Ctx::SplitSingle;
  return f.array >= 0 ? Ctx::ArrayWord : Ctx::Word;
}

// Edits the assignment a value reads: its literal, the default of a
// self-referencing `TP=${TP:-1}` (or the earlier assignment that one reads),
// else the whole value.
void Editor::edit_assignment(const Assignment& a, const std::string& literal, const std::string& key,
                             std::vector<Splice>& out, int depth) const {
  Piece v{a.value_begin, a.value_end, Quote::None, a.value_begin, a.value_end, a.value_begin, a.value_end};
  if (is_literal(v)) {
    out.push_back(Splice{v.begin, v.end, render(literal, Ctx::Word, raw(v), key, v.begin)});
    return;
  }
  auto sole = sole_reference(v);
  bool self = sole && sole->ref.kind == bash::RefKind::Var && sole->ref.name == a.name;
  if (self && depth < kMaxFollow) {
    if (const Assignment* prior = resolver_.lookup_before(a.name, a.name_begin)) {
      return edit_assignment(*prior, literal, key, out, depth + 1);
    }
  }
  bool default_used = sole && has_default(sole->ref) &&
                      (self || sole->ref.kind == bash::RefKind::Positional ||
                       !resolver_.lookup(sole->ref.name, sole->ref.begin));
  if (default_used) {
    size_t b = sole->ref.operand_begin, e = sole->ref.operand_end;
    Ctx ctx = sole->in_double ? Ctx::InDouble : Ctx::Word;
    out.push_back(Splice{b, e, render(literal, ctx, t_.substr(b, e - b), key, b)});
    return;
  }
  out.push_back(Splice{v.begin, v.end, shell_quote(literal)});
}

// The value is exactly one `$X`, `${X}` or `${X:-default}` (optionally in "...").
std::optional<Editor::SoleRef> Editor::sole_reference(const Piece& p) const {
  if (p.ctx == Quote::Single) return std::nullopt;
  size_t b = p.begin, e = p.end;
  bool in_double = p.ctx == Quote::Double;
  if (p.ctx == Quote::None && bash::whole_quote(t_, b, e) == Quote::Double) {
    ++b;
    --e;
    in_double = true;
  }
  if (b >= e || t_[b] != '$') return std::nullopt;
  bash::VarRef r = bash::parse_ref(t_, b, in_double);
  bool plain_op = r.op.empty() || has_default(r);
  bool variable = r.kind == bash::RefKind::Var || r.kind == bash::RefKind::Positional;
  if (r.end != e || !variable || !plain_op) return std::nullopt;
  return SoleRef{r, in_double};
}

bool Editor::is_literal(const Piece& p) const {
  for (size_t j = p.begin; j < p.end;) {
    char c = t_[j];
    if (c == '\'' && p.ctx == Quote::None) j = bash::skip_single_quoted(t_, j);
    else if (c == '\\') j += 2;
    else if (c == '$' || c == '`') return false;
    else ++j;
  }
  return true;
}

std::string Editor::render(std::string_view word, Ctx ctx, std::string_view original, const std::string& key,
                           size_t at) const {
  // Arrays are expanded unquoted (${ARGS[@]}): bash would split the value or drop it.
  bool split_later = ctx == Ctx::ArrayWord || ctx == Ctx::SplitDouble || ctx == Ctx::SplitSingle;
  if (split_later && (word.empty() || has_space(word))) {
    fail(at, key, "a value in an argument array cannot be empty or contain whitespace: bash splits the array when it expands it");
  }
  switch (ctx) {
    case Ctx::Word:
    case Ctx::ArrayWord: {
      size_t n = original.size();
      if (n >= 2 && bash::whole_quote(original, 0, n) == Quote::Single) return single_quoted(word);
      if (n >= 2 && bash::whole_quote(original, 0, n) == Quote::Double && double_safe(word)) {
        return "\"" + std::string(word) + "\"";
      }
      return shell_quote(word);
    }
    case Ctx::InDouble: return double_escaped(word);
    case Ctx::SplitDouble: {
      bool inner_quotes = original.size() >= 2 && original.front() == '\'' && original.back() == '\'';
      if (inner_quotes && word.find('\'') == kNone) return "'" + double_escaped(word) + "'";
      return double_escaped(word);
    }
    case Ctx::SplitSingle:
      if (word.find('\'') != kNone) fail(at, key, "a value inside a single-quoted array element cannot contain a quote");
      return std::string(word);
  }
  return std::string(word);
}

std::string Editor::render_all(const std::vector<std::string>& words, Ctx ctx, const std::string& key,
                               size_t at) const {
  std::vector<std::string> out;
  for (const auto& w : words) out.push_back(render(w, ctx, "", key, at));
  return joined(out);
}

// ---- removal ----------------------------------------------------------------

void Editor::remove_occurrence(const Flag& f, std::vector<Splice>& out) const {
  const Piece& first = f.flag;
  const Piece& last = f.values.empty() ? f.flag : f.values.back();
  bool starts_element = first.ctx == Quote::None || first.begin == first.first_begin;
  bool ends_element = last.ctx == Quote::None || last.end == last.last_end;
  bool same_element = first.ctx != Quote::None && last.word_begin == first.word_begin;
  if (same_element && !(starts_element && ends_element)) {
    out.push_back(remove_inside(first, last));
    return;
  }
  if (!starts_element || !ends_element) fail(first.begin, f.name, "its values are spread over several quoted array elements");
  size_t b = first.ctx == Quote::None ? first.begin : first.word_begin;
  size_t e = last.ctx == Quote::None ? last.end : last.word_end;
  out.push_back(remove_words(b, e, f.command >= 0));
}

// Part of a quoted element ("--fp8-format hybrid --fp8-param-gather"): drop the
// pieces and the blank that separated them from their neighbour.
Splice Editor::remove_inside(const Piece& first, const Piece& last) const {
  size_t b = first.begin, e = last.end;
  auto space = [&](size_t i) { return bash::is_blank(t_[i]) || t_[i] == '\n'; };
  if (first.begin == first.first_begin) {
    while (e + 1 < last.word_end && space(e)) ++e;
  } else {
    while (b > first.word_begin + 1 && space(b - 1)) --b;
  }
  return Splice{b, e, ""};
}

// Removes [begin, end); when nothing else is on the line, the whole line, so a
// `\` continuation chain stays intact.
Splice Editor::remove_words(size_t begin, size_t end, bool on_command) const {
  size_t ls = line_start(begin), le = line_end(end);
  bool continuation = false;
  if (blank(ls, begin) && trailer(end, le, &continuation)) return remove_line(ls, le, on_command && !continuation);
  // Take the blank after the words when more words follow, else the one before.
  size_t after = end;
  while (after < le && bash::is_blank(t_[after])) ++after;
  bool ignored = false;
  if (!trailer(after, le, &ignored)) return Splice{begin, after, ""};
  while (begin > ls && bash::is_blank(t_[begin - 1])) --begin;
  return Splice{begin, end, ""};
}

// `last_of_command`: the line ended a command, so the `\` on the line before
// must go too or the command would swallow the next line.
Splice Editor::remove_line(size_t ls, size_t le, bool last_of_command) const {
  if (last_of_command && ls > 0) {
    size_t k = ls - 1;
    while (k > 0 && bash::is_blank(t_[k - 1])) --k;
    if (k > 0 && t_[k - 1] == '\\') {
      size_t s = k - 1;
      while (s > 0 && bash::is_blank(t_[s - 1])) --s;
      return Splice{s, le, ""};
    }
  }
  if (le < t_.size()) return Splice{ls, le + 1, ""};
  return ls > 0 ? Splice{ls - 1, le, ""} : Splice{ls, le, ""};
}

// ---- insertion of an absent flag -------------------------------------------

Splice Editor::insert_flag(std::string_view flag, const std::string& key, const Value& v) const {
  std::string line(flag);
  std::vector<std::string> words;
  if (v.kind != ValueKind::Bool) words = words_of(v);
  if (!words.empty()) line += " " + render_all(words, Ctx::Word, std::string(flag), kNone);
  auto in_array = insert_near_relative(key, line);
  if (!in_array) in_array = insert_in_last_array(line);
  if (in_array) {
    render_all(words, Ctx::ArrayWord, std::string(flag), kNone);  // throws for what bash would split
    return *in_array;
  }
  if (auto s = insert_in_command(key, line)) return *s;
  fail(kNone, std::string(flag), "cannot add a flag: the script has no argument array and no command line with flags");
}

std::optional<Splice> Editor::insert_near_relative(const std::string& key, const std::string& line) const {
  const Flag* best = nullptr;
  int best_score = 0;
  for (const Flag& f : m_.flags) {
    if (f.array < 0) continue;
    int score = relatedness(key, f.key);
    // On a tie prefer an array that is always set over one inside an `if`.
    bool better = score > best_score ||
                  (score > 0 && score == best_score && m_.arrays[static_cast<size_t>(best->array)].depth > 0 &&
                   m_.arrays[static_cast<size_t>(f.array)].depth == 0);
    if (better) {
      best = &f;
      best_score = score;
    }
  }
  if (!best) return std::nullopt;
  return insert_after_flag(*best, line);
}

Splice Editor::insert_after_flag(const Flag& f, const std::string& line) const {
  const ArrayDef& arr = m_.arrays[static_cast<size_t>(f.array)];
  const Piece& last = f.values.empty() ? f.flag : f.values.back();
  size_t end = last.ctx == Quote::None ? last.end : last.word_end;
  size_t ls = line_start(end), le = line_end(end);
  if (arr.close >= ls && arr.close < le) return Splice{end, end, " " + line};  // a one-line array
  std::string indent = ls == line_start(arr.open) ? indent_of(ls) + "    " : indent_of(ls);
  return insert_line_after(ls, indent + line + (continues(ls) ? " \\" : ""));
}

// The last argument array with flags that is always defined before the launch.
std::optional<Splice> Editor::insert_in_last_array(const std::string& line) const {
  size_t launch = m_.commands.empty() ? kNone : m_.commands.back().begin;
  const ArrayDef* pick = nullptr;
  for (int pass = 0; pass < 3 && !pick; ++pass) {
    for (const ArrayDef& arr : m_.arrays) {
      bool ok = arr.has_flags && (pass == 2 || arr.stmt_begin < launch) && (pass > 0 || arr.depth == 0);
      if (ok) pick = &arr;
    }
  }
  if (!pick) return std::nullopt;
  return insert_before_close(*pick, line);
}

Splice Editor::insert_before_close(const ArrayDef& arr, const std::string& line) const {
  size_t cls = line_start(arr.close);
  if (!blank(cls, arr.close)) {
    char before = t_[arr.close - 1];
    return Splice{arr.close, arr.close, (before == '(' || bash::is_blank(before) ? "" : " ") + line};
  }
  // Take the indentation of the last element line (skipping comments and blanks).
  size_t open_line = line_start(arr.open);
  size_t prev = line_start(cls - 1);
  auto skippable = [&](size_t l) {
    size_t first = t_.find_first_not_of(" \t\r", l);
    return first >= line_end(l) || t_[first] == '#';
  };
  while (prev > open_line && skippable(prev)) prev = line_start(prev - 1);
  std::string indent = prev == open_line ? indent_of(prev) + "    " : indent_of(prev);
  return Splice{cls, cls, indent + line + (prev != open_line && continues(prev) ? " \\" : "") + "\n"};
}

// No arrays: add a continuation line to the command line that passes flags.
std::optional<Splice> Editor::insert_in_command(const std::string& key, const std::string& line) const {
  int cmd = -1;
  for (const Flag& f : m_.flags) cmd = std::max(cmd, f.command);
  if (cmd < 0) return std::nullopt;
  const Command& c = m_.commands[static_cast<size_t>(cmd)];
  size_t first_line = line_start(c.begin);
  const Flag& anchor = command_anchor(cmd, key, first_line);
  const Piece& last = anchor.values.empty() ? anchor.flag : anchor.values.back();
  size_t ls = line_start(last.end);
  std::string indent = indent_of(ls);
  if (continues(ls)) {
    if (ls == first_line) indent = indent_of(std::min(line_end(ls) + 1, t_.size()));
    return insert_line_after(ls, (indent.empty() ? "    " : indent) + line + " \\");
  }
  // The anchor's line ends the command: continue it, or add the flag inline
  // when the command is one line or more follows it (`;;`, `| tee log`).
  if (ls != first_line && blank(c.end, line_end(c.end))) {
    return Splice{c.end, c.end, " \\\n" + (indent.empty() ? "    " : indent) + line};
  }
  return Splice{c.end, c.end, " " + line};
}

// The flag of command `cmd` to add a new flag after: its closest relative,
// else the first flag after the launcher's own line (which may carry torchrun
// options before the training script), else the first flag.
const Flag& Editor::command_anchor(int cmd, const std::string& key, size_t first_line) const {
  const Flag* anchor = nullptr;
  const Flag* first = nullptr;
  const Flag* below = nullptr;
  int best = 0;
  for (const Flag& f : m_.flags) {
    if (f.command != cmd) continue;
    if (!first) first = &f;
    if (!below && line_start(f.flag.begin) != first_line) below = &f;
    int score = relatedness(key, f.key);
    if (score > best) best = score, anchor = &f;
  }
  return anchor ? *anchor : below ? *below : *first;
}

// ---- variables and exports -------------------------------------------------

std::vector<Splice> Editor::set_variable(std::string_view name, bool exported, const Value& v) const {
  std::string key = (exported ? "env." : "var.") + std::string(name);
  std::string literal = joined(words_of(v));
  std::vector<Splice> out;
  if (const Assignment* a = effective_assignment(m_, name, exported)) edit_assignment(*a, literal, key, out, 0);
  else out.push_back(insert_variable(name, exported, literal));
  return out;
}

std::vector<Splice> Editor::remove_variable(std::string_view name, bool exported) const {
  std::vector<Splice> out;
  for (const Assignment& a : m_.assignments) {
    if (a.name != name || a.exported != exported) continue;
    size_t end = a.value_end;
    size_t semi = t_.find_first_not_of(" \t", end);
    if (semi != kNone && t_[semi] == ';' && t_.substr(semi, 2) != ";;") end = semi + 1;
    out.push_back(remove_words(a.stmt_begin, end, false));
  }
  return out;
}

// Exports go after the last export; variables after the last top-level
// variable set before the first argument array.
const Assignment* Editor::insertion_anchor(bool exported) const {
  size_t limit = m_.arrays.empty() ? kNone : m_.arrays.front().stmt_begin;
  const Assignment* top = nullptr;
  const Assignment* any = nullptr;
  for (const Assignment& a : m_.assignments) {
    if (a.exported != exported) continue;
    if (!exported && a.stmt_begin > limit) continue;
    if (a.depth == 0) top = &a;
    any = &a;
  }
  if (top || exported) return top ? top : any;
  return insertion_anchor(true);
}

Splice Editor::insert_variable(std::string_view name, bool exported, const std::string& literal) const {
  std::string line = (exported ? "export " : "") + std::string(name) + "=" + shell_quote(literal);
  const Assignment* anchor = insertion_anchor(exported);
  if (!anchor) return insert_after_header(line);
  return insert_line_after(line_start(anchor->value_end), indent_of(line_start(anchor->stmt_begin)) + line);
}

// After the shebang and the comment block that opens the script.
Splice Editor::insert_after_header(const std::string& line) const {
  size_t after = 0;
  for (size_t pos = 0; pos < t_.size();) {
    size_t le = line_end(pos);
    size_t first = t_.find_first_not_of(" \t\r", pos);
    if (first < le && t_[first] == '#') after = le;
    else if (first < le) break;
    pos = le + 1;
  }
  if (after == 0) return Splice{0, 0, line + "\n"};
  if (after < t_.size()) return Splice{after + 1, after + 1, line + "\n"};
  return Splice{after, after, "\n" + line};
}

// ---- layout helpers ----------------------------------------------------------

size_t Editor::line_start(size_t pos) const {
  if (pos == 0) return 0;
  size_t nl = t_.rfind('\n', pos - 1);
  return nl == kNone ? 0 : nl + 1;
}

size_t Editor::line_end(size_t pos) const {
  size_t nl = t_.find('\n', pos);
  return nl == kNone ? t_.size() : nl;
}

std::string Editor::indent_of(size_t line_begin) const {
  size_t end = line_begin;
  while (end < t_.size() && (t_[end] == ' ' || t_[end] == '\t')) ++end;
  return std::string(t_.substr(line_begin, end - line_begin));
}

bool Editor::continues(size_t line_begin) const {
  size_t end = line_end(line_begin);
  while (end > line_begin && bash::is_blank(t_[end - 1])) --end;
  return end > line_begin && t_[end - 1] == '\\';
}

bool Editor::blank(size_t begin, size_t end) const {
  for (size_t i = begin; i < end; ++i) {
    if (!bash::is_blank(t_[i])) return false;
  }
  return true;
}

// What follows on the line is nothing, a `\` continuation or a comment.
bool Editor::trailer(size_t begin, size_t end, bool* continuation) const {
  while (begin < end && bash::is_blank(t_[begin])) ++begin;
  if (begin == end || t_[begin] == '#') return true;
  *continuation = t_[begin] == '\\' && blank(begin + 1, end);
  return *continuation;
}

Splice Editor::insert_line_after(size_t line_begin, const std::string& line) const {
  size_t le = line_end(line_begin);
  if (le < t_.size()) return Splice{le + 1, le + 1, line + "\n"};
  return Splice{le, le, "\n" + line};
}

void Editor::fail(size_t at, const std::string& key, const std::string& message) const {
  SourceLocation where{name_, 0, 0};
  if (at != kNone) {
    bash::LineIndex lines(t_);
    where.line = lines.line(at);
    where.column = lines.column(at);
  }
  throw InputError(where, key, message);
}

}  // namespace attune::recipe::script
