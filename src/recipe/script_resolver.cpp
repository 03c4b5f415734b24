#include "script_resolver.h"

#include <cctype>
#include <charconv>
#include <limits>

namespace attune::recipe::script {

namespace {

// Deep enough for chains like A=$B, B=${C:-1}; stops cycles (A=$B, B=$A).
constexpr int kMaxDepth = 32;

std::optional<long long> to_integer(std::string_view s) {
  while (!s.empty() && bash::is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && bash::is_blank(s.back())) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  long long v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<long long> apply_op(char op, long long a, long long b) {
  long long out = 0;
  switch (op) {
    case '+': return __builtin_add_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    case '-': return __builtin_sub_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    case '*': return __builtin_mul_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    default: break;
  }
  if (b == 0 || (a == std::numeric_limits<long long>::min() && b == -1)) return std::nullopt;
  return op == '/' ? a / b : a % b;
}

}  // namespace

std::string strip_quotes(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

Resolver::Resolver(std::string_view text, const Model& model) : t_(text), writers_(&model.writers) {
  for (const Assignment& a : model.assignments) by_name_[a.name].push_back(&a);
}

bool Resolver::overwritten(std::string_view name, size_t pos) const {
  const Assignment* a = lookup_before(name, pos);
  size_t after = a ? a->value_end : 0;
  for (const Writer& w : *writers_) {
    if ((w.name.empty() || w.name == name) && w.end <= pos && w.begin >= after) return true;
  }
  return false;
}

std::optional<std::string> Resolver::expand(const Piece& p) const {
  try {
    if (p.ctx == Quote::None) return expand(p.begin, p.end, Mode::Word, 0);
    Mode mode = p.ctx == Quote::Double ? Mode::DoubleQuoted : Mode::Literal;
    auto r = expand(p.begin, p.end, mode, 0);
    // Inside a quoted array element quotes are literal, but "--split '99,1,0'"
    // means the value 99,1,0: strip the one level the author wrote.
    if (r) return strip_quotes(*r);
    return r;
  } catch (const bash::LexError&) {
    return std::nullopt;  // cannot happen on lexed text; stay unresolved if it does
  }
}

Value Resolver::value(const Piece& p) const {
  if (auto r = expand(p)) return Value::parse(*r);
  return Value::string(strip_quotes(t_.substr(p.begin, p.end - p.begin)));
}

Value Resolver::value(const Assignment& a) const {
  return value(Piece{a.value_begin, a.value_end, Quote::None, a.value_begin, a.value_end, a.value_begin,
                     a.value_end});
}

const Assignment* Resolver::lookup_before(std::string_view name, size_t pos) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  const Assignment* found = nullptr;
  for (const Assignment* a : it->second) {
    if (a->value_end <= pos) found = a;
  }
  return found;
}

const Assignment* Resolver::lookup(std::string_view name, size_t pos) const {
  if (const Assignment* a = lookup_before(name, pos)) return a;
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  for (const Assignment* a : it->second) {
    if (a->name_begin <= pos && pos < a->value_end) return nullptr;  // self-reference: the environment's
  }
  return it->second.front();
}

std::optional<std::string> Resolver::expand(size_t begin, size_t end, Mode mode, int depth) const {
  if (depth > kMaxDepth) return std::nullopt;
  switch (mode) {
    case Mode::Word: return expand_word(begin, end, depth);
    case Mode::DoubleQuoted: return expand_double(begin, end, depth);
    case Mode::Literal: break;
  }
  return std::string(t_.substr(begin, end - begin));
}

std::optional<std::string> Resolver::expand_word(size_t begin, size_t end, int depth) const {
  std::string out;
  for (size_t j = begin; j < end;) {
    char c = t_[j];
    if (c == '\'') {
      size_t close = bash::skip_single_quoted(t_, j);
      out.append(t_.substr(j + 1, close - j - 2));
      j = close;
    } else if (c == '"') {
      size_t close = bash::skip_double_quoted(t_, j);
      auto inner = expand_double(j + 1, close - 1, depth);
      if (!inner) return std::nullopt;
      out += *inner;
      j = close;
    } else if (c == '\\') {
      if (j + 1 < end && t_[j + 1] != '\n') out.push_back(t_[j + 1]);
      j += 2;
    } else if (c == '$') {
      bash::VarRef r = bash::parse_ref(t_, j);
      auto v = reference(r, Mode::Word, depth);
      if (!v) return std::nullopt;
      out += *v;
      j = r.end;
    } else if (c == '`') {
      return std::nullopt;  // command output: never run
    } else {
      out.push_back(c);
      ++j;
    }
  }
  return out;
}

std::optional<std::string> Resolver::expand_double(size_t begin, size_t end, int depth) const {
  std::string out;
  for (size_t j = begin; j < end;) {
    char c = t_[j];
    char next = j + 1 < end ? t_[j + 1] : '\0';
    if (c == '\\' && (next == '$' || next == '`' || next == '"' || next == '\\' || next == '\n')) {
      if (next != '\n') out.push_back(next);
      j += 2;
    } else if (c == '$') {
      bash::VarRef r = bash::parse_ref(t_, j, true);
      auto v = reference(r, Mode::DoubleQuoted, depth);
      if (!v) return std::nullopt;
      out += *v;
      j = r.end;
    } else if (c == '`') {
      return std::nullopt;
    } else {
      out.push_back(c);
      ++j;
    }
  }
  return out;
}

std::optional<std::string> Resolver::reference(const bash::VarRef& r, Mode mode, int depth) const {
  switch (r.kind) {
    case bash::RefKind::Literal: return std::string("$");
    case bash::RefKind::Var: {
      if (overwritten(r.name, r.begin)) return std::nullopt;
      if (!lookup(r.name, r.begin)) return unset(r, mode, depth);
      auto v = variable(r.name, r.begin, depth + 1);
      if (!v) return std::nullopt;
      return with_operator(r, *v, mode, depth);
    }
    case bash::RefKind::Positional: return unset(r, mode, depth);
    case bash::RefKind::Arith: {
      Cursor c{r.operand_begin, r.operand_end, r.begin, depth + 1};
      auto v = arith_sum(c);
      arith_space(c);
      if (!v || c.at != c.end) return std::nullopt;
      return std::to_string(*v);
    }
    default: return std::nullopt;  // $(...), $@, ${#x}: not known without running
  }
}

std::optional<std::string> Resolver::variable(std::string_view name, size_t pos, int depth) const {
  if (overwritten(name, pos)) return std::nullopt;
  const Assignment* a = lookup(name, pos);
  if (!a || depth > kMaxDepth) return std::nullopt;
  return expand(a->value_begin, a->value_end, Mode::Word, depth);
}

// A variable the script does not set: only a default makes it known.
std::optional<std::string> Resolver::unset(const bash::VarRef& r, Mode mode, int depth) const {
  if (r.op == ":-" || r.op == "-" || r.op == ":=" || r.op == "=") {
    return expand(r.operand_begin, r.operand_end, mode, depth + 1);
  }
  if (r.op == ":+" || r.op == "+") return std::string();
  return std::nullopt;
}

std::optional<std::string> Resolver::with_operator(const bash::VarRef& r, const std::string& v, Mode mode,
                                                   int depth) const {
  bool use_operand = false;
  if (r.op == ":-" || r.op == ":=") use_operand = v.empty();
  else if (r.op == ":+") use_operand = !v.empty();
  else if (r.op == "+") use_operand = true;
  if (!use_operand) return r.op == ":+" ? std::string() : v;
  return expand(r.operand_begin, r.operand_end, mode, depth + 1);
}

void Resolver::arith_space(Cursor& c) const {
  while (c.at < c.end && (bash::is_blank(t_[c.at]) || t_[c.at] == '\n')) ++c.at;
}

std::optional<long long> Resolver::arith_sum(Cursor& c) const {
  auto v = arith_product(c);
  for (arith_space(c); v && c.at < c.end && (t_[c.at] == '+' || t_[c.at] == '-'); arith_space(c)) {
    char op = t_[c.at++];
    auto rhs = arith_product(c);
    v = rhs ? apply_op(op, *v, *rhs) : std::nullopt;
  }
  return v;
}

std::optional<long long> Resolver::arith_product(Cursor& c) const {
  auto v = arith_unary(c);
  for (arith_space(c); v && c.at < c.end && (t_[c.at] == '*' || t_[c.at] == '/' || t_[c.at] == '%');
       arith_space(c)) {
    char op = t_[c.at++];
    if (op == '*' && c.at < c.end && t_[c.at] == '*') return std::nullopt;  // ** is not supported
    auto rhs = arith_unary(c);
    v = rhs ? apply_op(op, *v, *rhs) : std::nullopt;
  }
  return v;
}

std::optional<long long> Resolver::arith_unary(Cursor& c) const {
  arith_space(c);
  if (c.at < c.end && (t_[c.at] == '-' || t_[c.at] == '+')) {
    char op = t_[c.at++];
    auto v = arith_unary(c);
    return v && op == '-' ? apply_op('-', 0, *v) : v;
  }
  return arith_primary(c);
}

std::optional<long long> Resolver::arith_primary(Cursor& c) const {
  arith_space(c);
  if (c.at >= c.end) return std::nullopt;
  char ch = t_[c.at];
  if (ch == '(') {
    ++c.at;
    auto v = arith_sum(c);
    arith_space(c);
    if (!v || c.at >= c.end || t_[c.at] != ')') return std::nullopt;
    ++c.at;
    return v;
  }
  if (std::isdigit(static_cast<unsigned char>(ch))) {
    size_t start = c.at;
    while (c.at < c.end && std::isalnum(static_cast<unsigned char>(t_[c.at]))) ++c.at;
    return to_integer(t_.substr(start, c.at - start));
  }
  return arith_variable(c);
}

// `$A`, `${A:-2}` or a bare `A` inside $(( )).
std::optional<long long> Resolver::arith_variable(Cursor& c) const {
  std::optional<std::string> text;
  if (t_[c.at] == '$') {
    bash::VarRef r = bash::parse_ref(t_, c.at);
    if (r.end > c.end) return std::nullopt;
    text = reference(r, Mode::Word, c.depth);
    c.at = r.end;
  } else if (bash::is_name_start(t_[c.at])) {
    size_t start = c.at;
    while (c.at < c.end && bash::is_name_char(t_[c.at])) ++c.at;
    text = variable(t_.substr(start, c.at - start), c.pos, c.depth + 1);
  }
  return text ? to_integer(*text) : std::nullopt;
}

}  // namespace attune::recipe::script
