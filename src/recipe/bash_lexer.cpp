#include "bash_lexer.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "attune/util/error.h"

namespace attune::recipe::bash {

namespace {

bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == '|' || c == '&' || c == ';' || c == '(' || c == ')' ||
         c == '<' || c == '>';
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool is_special_param(char c) {
  return c == '@' || c == '*' || c == '#' || c == '?' || c == '$' || c == '!' || c == '-';
}

[[noreturn]] void unterminated(size_t at, const char* what) { throw LexError{at, what}; }

size_t skip_ansi_quoted(std::string_view t, size_t pos) {  // $'...'
  for (size_t j = pos + 2; j < t.size(); ++j) {
    if (t[j] == '\\') ++j;
    else if (t[j] == '\'') return j + 1;
  }
  unterminated(pos, "unterminated quote");
}

size_t skip_backquoted(std::string_view t, size_t pos) {
  for (size_t j = pos + 1; j < t.size(); ++j) {
    if (t[j] == '\\') ++j;
    else if (t[j] == '`') return j + 1;
  }
  unterminated(pos, "unterminated backquote");
}

size_t skip_comment(std::string_view t, size_t pos) {
  size_t nl = t.find('\n', pos);
  return nl == std::string_view::npos ? t.size() : nl;
}

// Shell code inside `$( ... )` or `$(( ... ))`: balanced parentheses, with
// quotes and comments that may hold unbalanced ones. `dollar` is where errors point.
size_t skip_code_parens(std::string_view t, size_t pos, size_t dollar) {
  int depth = 0;
  size_t j = pos;
  while (j < t.size()) {
    char c = t[j];
    if (c == '(') {
      ++depth;
      ++j;
    } else if (c == ')') {
      ++j;
      if (--depth == 0) return j;
    } else if (c == '\\') {
      j += 2;
    } else if (c == '\'') {
      j = skip_single_quoted(t, j);
    } else if (c == '"') {
      j = skip_double_quoted(t, j);
    } else if (c == '`') {
      j = skip_backquoted(t, j);
    } else if (c == '$' && j + 1 < t.size() && t[j + 1] == '{') {
      j = skip_dollar(t, j);
    } else if (c == '#' && (is_blank(t[j - 1]) || t[j - 1] == '\n')) {
      j = skip_comment(t, j);
    } else {
      ++j;
    }
  }
  unterminated(dollar, "unterminated $(");
}

size_t skip_braced(std::string_view t, size_t pos, size_t dollar) {  // t[pos] == '{'
  int depth = 0;
  size_t j = pos;
  while (j < t.size()) {
    char c = t[j];
    if (c == '{') {
      ++depth;
      ++j;
    } else if (c == '}') {
      ++j;
      if (--depth == 0) return j;
    } else if (c == '\\') {
      j += 2;
    } else if (c == '\'') {
      j = skip_single_quoted(t, j);
    } else if (c == '"') {
      j = skip_double_quoted(t, j);
    } else if (c == '`') {
      j = skip_backquoted(t, j);
    } else if (c == '$') {
      j = skip_dollar(t, j);
    } else {
      ++j;
    }
  }
  unterminated(dollar, "unterminated ${");
}

size_t skip_word(std::string_view t, size_t pos) {
  size_t j = pos;
  while (j < t.size() && !is_meta(t[j])) {
    char c = t[j];
    if (c == '\\') j = std::min(j + 2, t.size());
    else if (c == '\'') j = skip_single_quoted(t, j);
    else if (c == '"') j = skip_double_quoted(t, j);
    else if (c == '$') j = skip_dollar(t, j);
    else if (c == '`') j = skip_backquoted(t, j);
    else ++j;
  }
  return j;
}

// Longest operator at `pos` (after an optional file-descriptor number).
size_t match_op(std::string_view t, size_t pos) {
  static constexpr std::array<std::string_view, 23> kOps = {
      ";;&", ";;", ";&", ";", "||", "|&", "|", "&&", "&>>", "&>", "&", "(", ")",
      "<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">"};
  size_t j = pos;
  while (j < t.size() && is_digit(t[j])) ++j;
  if (j > pos && (j == t.size() || (t[j] != '<' && t[j] != '>'))) return 0;
  for (std::string_view op : kOps) {
    if (t.substr(j, op.size()) == op) return j - pos + op.size();
  }
  return 0;
}

std::string heredoc_delimiter(std::string_view word) {
  std::string out;
  for (char c : word) {
    if (c != '\'' && c != '"' && c != '\\') out.push_back(c);
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view t, size_t begin, std::vector<Token>& out) : t_(t), i_(begin), out_(out) {}

  void run() {
    while (i_ < t_.size()) step();
  }

 private:
  struct Heredoc {
    std::string delim;
    bool strip_tabs;
  };

  void step() {
    char c = t_[i_];
    if (is_blank(c)) {
      ++i_;
    } else if (c == '\\' && i_ + 1 < t_.size() && t_[i_ + 1] == '\n') {
      i_ += 2;
      continuation_ = true;
    } else if (c == '\n') {
      emit(TokenKind::Newline, i_ + 1);
      if (!pending_.empty()) heredoc_bodies();
    } else if (c == '#') {
      i_ = skip_comment(t_, i_);
    } else if (size_t n = match_op(t_, i_)) {
      operator_token(n);
    } else {
      word_token();
    }
  }

  void emit(TokenKind kind, size_t end) {
    out_.push_back(Token{kind, i_, end, continuation_});
    continuation_ = false;
    i_ = end;
  }

  void operator_token(size_t n) {
    std::string_view op = t_.substr(i_, n);
    bool herestring = op.ends_with("<<<");
    want_delimiter_ = !herestring && (op.ends_with("<<") || op.ends_with("<<-"));
    strip_tabs_ = op.ends_with("<<-");
    emit(TokenKind::Op, i_ + n);
  }

  void word_token() {
    size_t end = skip_word(t_, i_);
    if (want_delimiter_) pending_.push_back({heredoc_delimiter(t_.substr(i_, end - i_)), strip_tabs_});
    want_delimiter_ = false;
    emit(TokenKind::Word, end);
  }

  // Lexes each pending heredoc body as script text and skips its end line.
  void heredoc_bodies() {
    std::vector<Heredoc> docs;
    docs.swap(pending_);
    for (const Heredoc& doc : docs) {
      size_t body = i_;
      size_t body_end = find_terminator(doc);
      lex_body(body, body_end);
    }
  }

  // Returns where the body ends and moves i_ past the terminator line.
  size_t find_terminator(const Heredoc& doc) {
    for (size_t line = i_; line < t_.size();) {
      size_t nl = t_.find('\n', line);
      size_t le = nl == std::string_view::npos ? t_.size() : nl;
      std::string_view text = t_.substr(line, le - line);
      if (doc.strip_tabs) text.remove_prefix(std::min(text.find_first_not_of('\t'), text.size()));
      if (text.ends_with('\r')) text.remove_suffix(1);
      if (text == doc.delim) {
        i_ = std::min(le + 1, t_.size());
        return line;
      }
      line = le + 1;
    }
    i_ = t_.size();
    return t_.size();
  }

  void lex_body(size_t begin, size_t end) {
    std::vector<Token> body;
    try {
      Lexer(t_.substr(0, end), begin, body).run();
    } catch (const LexError&) {
      return;  // not shell code after all (e.g. prose with an apostrophe)
    }
    out_.insert(out_.end(), body.begin(), body.end());
    out_.push_back(Token{TokenKind::Newline, end, end, false});
  }

  std::string_view t_;
  size_t i_;
  std::vector<Token>& out_;
  bool continuation_ = false;
  bool want_delimiter_ = false;
  bool strip_tabs_ = false;
  std::vector<Heredoc> pending_;
};

void parse_braced_ref(std::string_view t, VarRef& r) {
  size_t k = r.begin + 2;
  size_t close = r.end - 1;
  if (k < close && is_name_start(t[k])) {
    r.kind = RefKind::Var;
    while (k < close && is_name_char(t[k])) ++k;
  } else if (k < close && is_digit(t[k])) {
    r.kind = RefKind::Positional;
    while (k < close && is_digit(t[k])) ++k;
  } else {
    r.kind = RefKind::Unsupported;  // ${#x}, ${!x}, ${@}: never a plain value
    return;
  }
  r.name = std::string(t.substr(r.begin + 2, k - r.begin - 2));
  if (k == close) return;
  for (std::string_view op : {":-", ":=", ":+", "-", "=", "+"}) {
    if (t.substr(k, op.size()) == op) {
      r.op = std::string(op);
      r.operand_begin = k + op.size();
      r.operand_end = close;
      return;
    }
  }
  r.kind = RefKind::Unsupported;  // ${x%...}, ${x/a/b}, ${x[@]}, ${x:0:2}
}

}  // namespace

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

size_t skip_single_quoted(std::string_view t, size_t pos) {
  size_t close = t.find('\'', pos + 1);
  if (close == std::string_view::npos) unterminated(pos, "unterminated quote");
  return close + 1;
}

size_t skip_double_quoted(std::string_view t, size_t pos) {
  size_t j = pos + 1;
  while (j < t.size()) {
    char c = t[j];
    if (c == '\\') j += 2;
    else if (c == '"') return j + 1;
    else if (c == '$') j = skip_dollar_in_double(t, j);
    else if (c == '`') j = skip_backquoted(t, j);
    else ++j;
  }
  unterminated(pos, "unterminated quote");
}

size_t skip_dollar_in_double(std::string_view t, size_t pos) {
  bool quote_next = pos + 1 < t.size() && (t[pos + 1] == '"' || t[pos + 1] == '\'');
  return quote_next ? pos + 1 : skip_dollar(t, pos);  // "...$" ends with a plain `$`
}

size_t skip_dollar(std::string_view t, size_t pos) {
  if (pos + 1 >= t.size()) return pos + 1;
  char c = t[pos + 1];
  if (c == '(') return skip_code_parens(t, pos + 1, pos);
  if (c == '{') return skip_braced(t, pos + 1, pos);
  if (c == '\'') return skip_ansi_quoted(t, pos);
  if (c == '"') return skip_double_quoted(t, pos + 1);
  if (is_name_start(c)) {
    size_t j = pos + 1;
    while (j < t.size() && is_name_char(t[j])) ++j;
    return j;
  }
  if (is_digit(c) || is_special_param(c)) return pos + 2;
  return pos + 1;
}

Quote whole_quote(std::string_view t, size_t begin, size_t end) {
  if (end - begin < 2) return Quote::None;
  try {
    if (t[begin] == '"' && skip_double_quoted(t, begin) == end) return Quote::Double;
    if (t[begin] == '\'' && skip_single_quoted(t, begin) == end) return Quote::Single;
  } catch (const LexError&) {
    // A quote that closes beyond the text asked about: not one quoted string.
  }
  return Quote::None;
}

std::vector<std::pair<size_t, size_t>> split_quoted(std::string_view t, size_t begin, size_t end) {
  bool dq = t[begin] == '"';
  std::vector<std::pair<size_t, size_t>> fields;
  size_t j = begin + 1;
  size_t close = end - 1;
  while (j < close) {
    if (is_blank(t[j]) || t[j] == '\n') {
      ++j;
      continue;
    }
    size_t start = j;
    while (j < close && !is_blank(t[j]) && t[j] != '\n') {
      if (dq && t[j] == '\\') j = std::min(j + 2, close);
      else if (dq && t[j] == '$') j = std::min(skip_dollar_in_double(t, j), close);
      else if (dq && t[j] == '`') j = std::min(skip_backquoted(t, j), close);
      else ++j;
    }
    fields.emplace_back(start, j);
  }
  return fields;
}

VarRef parse_ref(std::string_view t, size_t pos, bool in_double) {
  VarRef r;
  r.begin = pos;
  r.end = in_double ? skip_dollar_in_double(t, pos) : skip_dollar(t, pos);
  if (r.end == pos + 1) {
    r.kind = RefKind::Literal;  // a lone `$`
    return r;
  }
  char c = t[pos + 1];
  if (c == '(') {
    bool arith = pos + 2 < t.size() && t[pos + 2] == '(' && t[r.end - 2] == ')';
    r.kind = arith ? RefKind::Arith : RefKind::Command;
    r.operand_begin = pos + 3;
    r.operand_end = r.end - 2;
  } else if (c == '{') {
    parse_braced_ref(t, r);
  } else if (is_name_start(c)) {
    r.kind = RefKind::Var;
    r.name = std::string(t.substr(pos + 1, r.end - pos - 1));
  } else if (is_digit(c)) {
    r.kind = RefKind::Positional;
    r.name = std::string(1, c);
  } else {
    r.kind = c == '\'' || c == '"' ? RefKind::Unsupported : RefKind::Special;
  }
  return r;
}

std::vector<Token> tokenize(const std::string& name, std::string_view text) {
  std::vector<Token> out;
  try {
    Lexer(text, 0, out).run();
  } catch (const LexError& e) {
    LineIndex lines(text);
    throw InputError({name, lines.line(e.at), lines.column(e.at)}, "", e.what);
  }
  return out;
}

LineIndex::LineIndex(std::string_view text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

int LineIndex::line(size_t pos) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), pos);
  return static_cast<int>(it - starts_.begin());
}

int LineIndex::column(size_t pos) const {
  size_t start = starts_[static_cast<size_t>(line(pos) - 1)];
  return static_cast<int>(pos - start) + 1;
}

}  // namespace attune::recipe::bash
