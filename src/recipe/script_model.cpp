#include "script_model.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "attune/util/error.h"

namespace attune::recipe::script {

namespace {

using bash::Token;
using bash::TokenKind;

// `--name` or `--name=value`, where the name is a plain word (no quotes or
// expansions, so a value never starts inside a quote opened in the name).
bool is_flag_text(std::string_view s) {
  if (s.size() <= 2 || !s.starts_with("--") || !std::isalnum(static_cast<unsigned char>(s[2]))) return false;
  std::string_view name = s.substr(0, s.find('='));
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// Words after which a flag takes no more values: another option (`-m`), the
// training script itself, or an expansion that brings in its own flags.
bool ends_values(std::string_view s) {
  bool short_option = s.size() > 1 && s[0] == '-' && std::isalpha(static_cast<unsigned char>(s[1]));
  bool expands_array = s.find("[@]}") != std::string_view::npos || s.find("[*]}") != std::string_view::npos;
  return s == "--" || short_option || expands_array || s.ends_with(".py");
}

bool is_assignment_word(std::string_view w) {
  if (w.empty() || !bash::is_name_start(w[0])) return false;
  size_t i = 1;
  while (i < w.size() && bash::is_name_char(w[i])) ++i;
  if (i < w.size() && w[i] == '+') ++i;
  return i < w.size() && w[i] == '=';
}

bool is_redirect(std::string_view op) {
  return std::isdigit(static_cast<unsigned char>(op[0])) || op[0] == '<' || op[0] == '>' || op.starts_with("&>");
}

// Commands whose `--words` are text or tests, not options of a launcher.
bool takes_no_flags(std::string_view command) {
  return command == "echo" || command == "printf" || command == "[" || command == "[[" || command == "test";
}

std::string_view leading_name(std::string_view w) {
  if (w.empty() || !bash::is_name_start(w[0])) return {};
  size_t i = 1;
  while (i < w.size() && bash::is_name_char(w[i])) ++i;
  return w.substr(0, i);
}

bool is_name_word(std::string_view w) { return !w.empty() && leading_name(w).size() == w.size(); }

// The variables a builtin writes from its arguments (`words[0]` is the builtin);
// {""} when it may write any; empty when it writes none the script reads.
std::vector<std::string> written_by(const std::vector<std::string_view>& words) {
  if (words.empty()) return {};
  std::string_view cmd = words[0];
  bool nameref = cmd == "declare" && words.size() > 1 && words[1] == "-n";
  if (cmd == "eval" || cmd == "source" || cmd == "." || nameref) return {""};
  std::vector<std::string> out;
  if (cmd == "read" || cmd == "unset" || cmd == "mapfile" || cmd == "readarray" || cmd == "let") {
    for (size_t i = 1; i < words.size(); ++i) {
      std::string_view name = leading_name(words[i]);
      if (!name.empty()) out.emplace_back(name);
    }
  } else if (cmd == "printf") {
    for (size_t i = 1; i + 1 < words.size(); ++i) {
      if (words[i] == "-v") out.emplace_back(leading_name(words[i + 1]));
    }
  } else if (cmd == "getopts" && words.size() > 2) {
    out.emplace_back(leading_name(words[2]));
  } else if (std::string_view name = leading_name(cmd); !name.empty() && cmd.size() > name.size() &&
                                                       cmd[name.size()] == '[' &&
                                                       (cmd.find("]=") != std::string_view::npos ||
                                                        cmd.find("]+=") != std::string_view::npos)) {
    out.emplace_back(name);  // ARR[i]=value
  }
  return out;
}

// `${X:=d}` and `${X=d}` assign X when it is unset.
void default_assignments(std::string_view t, size_t begin, size_t end, std::vector<Writer>& out) {
  for (size_t j = t.find("${", begin); j != std::string_view::npos && j + 2 < end; j = t.find("${", j + 2)) {
    std::string_view name = leading_name(t.substr(j + 2, end - j - 2));
    size_t op = j + 2 + name.size();
    if (name.empty() || op >= end) continue;
    if (t[op] == '=' || (t[op] == ':' && op + 1 < end && t[op + 1] == '=')) {
      size_t close = t.find('}', op);
      out.push_back(Writer{std::string(name), j, close == std::string_view::npos ? end : close + 1});
    }
  }
}

// A word that is one variable's value, quoted or not (`$EXTRA`, "${EXTRA}"):
// not an array, a positional parameter (attune passes the script none) or text.
bool scalar_expansion(std::string_view w) {
  if (w.size() > 2 && w.front() == '"' && w.back() == '"') w = w.substr(1, w.size() - 2);
  if (w.size() < 2 || w[0] != '$') return false;
  std::string_view name = w.substr(1);
  if (name.size() > 2 && name.front() == '{' && name.back() == '}') name = name.substr(1, name.size() - 2);
  return !name.empty() && is_name_word(name);
}

class Parser {
 public:
  Parser(const std::string& name, std::string_view t, const std::vector<Token>& toks)
      : name_(name), t_(t), toks_(toks) {}

  Model run() {
    while (!at_end()) statement();
    return std::move(m_);
  }

 private:
  enum class CaseMode { Pattern, Body };
  using Item = std::optional<Piece>;  // nullopt: a break that ends a flag's values

  bool at_end() const { return i_ >= toks_.size(); }
  const Token& tok() const { return toks_[i_]; }
  std::string_view text(const Token& k) const { return t_.substr(k.begin, k.end - k.begin); }
  bool is_word() const { return !at_end() && tok().kind == TokenKind::Word; }
  bool is_op(std::string_view op) const {
    return !at_end() && tok().kind == TokenKind::Op && text(tok()) == op;
  }

  void statement() {
    if (!cases_.empty() && cases_.back() == CaseMode::Pattern) return case_pattern();
    if (!is_word()) return separator();
    simple_command();
  }

  void separator() {
    std::string_view op = text(tok());
    if (op == "(" && i_ + 1 < toks_.size() && toks_[i_ + 1].kind == TokenKind::Op && text(toks_[i_ + 1]) == "(" &&
        toks_[i_ + 1].begin == tok().end) {
      return arithmetic_command();
    }
    if (tok().kind == TokenKind::Op && (op == ";;" || op == ";&" || op == ";;&") && !cases_.empty()) {
      cases_.back() = CaseMode::Pattern;
    }
    ++i_;
  }

  // `(( TP = 4 ))`: every name in it may be assigned.
  void arithmetic_command() {
    size_t begin = tok().begin;
    i_ += 2;
    while (!at_end() && tok().kind != TokenKind::Newline && !is_op(")")) {
      if (is_word()) {
        std::string_view w = text(tok());
        for (size_t j = 0; j < w.size();) {
          std::string_view name = leading_name(w.substr(j));
          if (name.empty()) {
            ++j;
            continue;
          }
          m_.writers.push_back(Writer{std::string(name), begin, tok().end});
          j += name.size();
        }
      }
      ++i_;
    }
  }

  // Skips `a|b)` of a case clause, or ends the case at `esac`.
  void case_pattern() {
    while (!at_end() && tok().kind == TokenKind::Newline) ++i_;
    if (at_end()) return;
    if (is_word() && text(tok()) == "esac") {
      cases_.pop_back();
      --depth_;
      ++i_;
      return;
    }
    while (!at_end() && !is_op(")")) ++i_;
    if (!at_end()) ++i_;
    cases_.back() = CaseMode::Body;
  }

  void simple_command() {
    size_t begin = tok().begin;
    std::vector<Assignment> prefix;
    while (is_word()) {
      std::string_view w = text(tok());
      if (prefix.empty() && keyword(w)) continue;
      if (!is_assignment_word(w)) break;
      assignment(false, tok().begin, prefix);
    }
    if (!is_word()) {
      m_.assignments.insert(m_.assignments.end(), prefix.begin(), prefix.end());
      return;
    }
    std::string_view w = text(tok());
    if (w == "export" || w == "declare" || w == "local" || w == "readonly" || w == "typeset") {
      return declaration(w == "export");
    }
    // Assignments before a command only set its environment: not script variables.
    command(prefix.empty() ? begin : tok().begin);
  }

  // Consumes a reserved word at command start; false when `w` is none.
  bool keyword(std::string_view w) {
    if (w == "if" || w == "while" || w == "until" || w == "{") {
      ++depth_;
    } else if (w == "fi" || w == "done" || w == "}") {
      --depth_;
    } else if (w == "esac") {
      if (!cases_.empty()) cases_.pop_back();
      --depth_;
    } else if (w == "case") {
      return case_header();
    } else if (w == "for" || w == "select") {
      return loop_header();
    } else if (w == "function") {
      i_ += 2;  // the name follows
      return true;
    } else if (w != "then" && w != "else" && w != "elif" && w != "do" && w != "!" && w != "time") {
      return false;
    }
    ++i_;
    return true;
  }

  bool case_header() {
    while (!at_end() && !(is_word() && text(tok()) == "in")) ++i_;
    if (!at_end()) ++i_;
    cases_.push_back(CaseMode::Pattern);
    ++depth_;
    return true;
  }

  // `for x in a b c` lists words, not options.
  bool loop_header() {
    ++depth_;
    if (i_ + 1 < toks_.size() && toks_[i_ + 1].kind == TokenKind::Word && is_name_word(text(toks_[i_ + 1]))) {
      m_.writers.push_back(Writer{std::string(text(toks_[i_ + 1])), tok().begin, toks_[i_ + 1].end});
    }
    while (!at_end() && tok().kind != TokenKind::Newline && !is_op(";")) ++i_;
    return true;
  }

  void declaration(bool exported) {
    size_t stmt = tok().begin;
    ++i_;
    while (is_word()) {
      if (is_assignment_word(text(tok()))) {
        assignment(exported, stmt, m_.assignments);
        stmt = is_word() ? tok().begin : stmt;
      } else {
        ++i_;  // an option such as -x, or a name without a value
      }
    }
  }

  void assignment(bool exported, size_t stmt, std::vector<Assignment>& sink) {
    const Token& k = tok();
    std::string_view w = text(k);
    size_t eq = w.find('=');
    bool append = w[eq - 1] == '+';
    std::string name(w.substr(0, eq - (append ? 1 : 0)));
    ++i_;
    if (eq + 1 == w.size() && is_op("(") && tok().begin == k.end) return array(name, stmt);
    sink.push_back(Assignment{name, stmt, k.begin, k.begin + eq + 1, k.end, exported, depth_});
  }

  void array(const std::string& name, size_t stmt) {
    size_t open = tok().begin;
    ++i_;
    std::vector<Item> items;
    while (!at_end() && !is_op(")")) {
      const Token& k = tok();
      if (k.kind != TokenKind::Word || k.after_continuation) items.push_back(std::nullopt);
      if (k.kind == TokenKind::Word) {
        for (const Piece& p : pieces(k, true)) items.push_back(p);
      }
      ++i_;
    }
    if (at_end()) {
      bash::LineIndex lines(t_);
      throw InputError({name_, lines.line(open), lines.column(open)}, "", "unterminated array (missing ')')");
    }
    int index = static_cast<int>(m_.arrays.size());
    m_.arrays.push_back(ArrayDef{name, stmt, open, tok().begin, depth_, false});
    ++i_;
    size_t before = m_.flags.size();
    collect_flags(items, index, -1);
    m_.arrays.back().has_flags = m_.flags.size() > before;
  }

  void command(size_t begin) {
    bool scan = !takes_no_flags(text(tok()));
    bool expands = false;
    size_t end = tok().end;
    std::vector<Item> items;
    std::vector<std::string_view> words;
    std::vector<std::pair<size_t, size_t>> expansions;
    bool after_entry = false;
    while (!at_end() && tok().kind != TokenKind::Newline) {
      const Token& k = tok();
      if (k.kind == TokenKind::Op && !is_redirect(text(k))) break;
      if (k.kind == TokenKind::Op || k.after_continuation) items.push_back(std::nullopt);
      if (k.kind == TokenKind::Op) {
        ++i_;
        if (is_word()) ++i_;  // the redirection target or heredoc delimiter
        continue;
      }
      expands = expands || text(k).find("[@]}") != std::string_view::npos;
      if (after_entry && scalar_expansion(text(k))) expansions.emplace_back(k.begin, k.end);
      after_entry = after_entry || text(k).ends_with(".py") || text(k).ends_with(".py\"");
      words.push_back(text(k));
      items.push_back(pieces(k, false).front());
      end = k.end;
      ++i_;
    }
    for (const std::string& name : written_by(words)) m_.writers.push_back(Writer{name, begin, end});
    int index = static_cast<int>(m_.commands.size());
    size_t before = m_.flags.size();
    if (scan) collect_flags(items, -1, index);
    if (m_.flags.size() > before || expands) m_.commands.push_back(Command{begin, end, std::move(expansions)});
  }

  std::vector<Piece> pieces(const Token& k, bool split) const {
    Quote q = split ? bash::whole_quote(t_, k.begin, k.end) : Quote::None;
    if (q == Quote::None) return {Piece{k.begin, k.end, q, k.begin, k.end, k.begin, k.end}};
    std::vector<Piece> out;
    auto fields = bash::split_quoted(t_, k.begin, k.end);
    for (auto [b, e] : fields) {
      out.push_back(Piece{b, e, q, k.begin, k.end, fields.front().first, fields.back().second});
    }
    return out;
  }

  void collect_flags(const std::vector<Item>& items, int array, int command) {
    int current = -1;
    for (const Item& item : items) {
      if (!item) {
        current = -1;
        continue;
      }
      std::string_view s = t_.substr(item->begin, item->end - item->begin);
      if (is_flag_text(s)) {
        current = start_flag(*item, s, array, command);
      } else if (ends_values(s)) {
        current = -1;
      } else if (current >= 0) {
        m_.flags[static_cast<size_t>(current)].values.push_back(*item);
      }
    }
  }

  // Records a flag; returns its index, or -1 when it cannot take more values.
  int start_flag(const Piece& p, std::string_view s, int array, int command) {
    Flag f;
    f.flag = p;
    f.array = array;
    f.command = command;
    size_t eq = s.find('=');
    f.name = std::string(s.substr(0, eq));
    f.key = normalise_flag(f.name);
    f.name_end = p.begin + f.name.size();
    if (eq != std::string_view::npos) {
      f.eq_form = true;
      Piece v = p;
      v.begin = p.begin + eq + 1;
      f.values.push_back(v);
    }
    m_.flags.push_back(std::move(f));
    return m_.flags.back().eq_form ? -1 : static_cast<int>(m_.flags.size() - 1);
  }

  const std::string& name_;
  std::string_view t_;
  const std::vector<Token>& toks_;
  size_t i_ = 0;
  int depth_ = 0;
  std::vector<CaseMode> cases_;
  Model m_;
};

}  // namespace

std::string normalise_flag(std::string_view flag) {
  std::string out(flag);
  for (size_t i = 2; i < out.size(); ++i) {
    if (out[i] == '_') out[i] = '-';
  }
  return out;
}

const Assignment* effective_assignment(const Model& model, std::string_view name, bool exported) {
  const Assignment* top = nullptr;
  const Assignment* any = nullptr;
  for (const Assignment& a : model.assignments) {
    if (a.name != name || a.exported != exported) continue;
    if (a.depth == 0) top = &a;
    any = &a;
  }
  return top ? top : any;
}

namespace {

// Where an argument array's flags stand on the command line: its first
// expansion inside a command, else where it is defined.
size_t expansion_pos(const Model& model, std::string_view text, const ArrayDef& a) {
  for (const char* form : {"[@]}", "[*]}"}) {
    std::string ref = "${" + a.name + form;
    for (size_t at = text.find(ref); at != std::string_view::npos; at = text.find(ref, at + 1)) {
      for (const Command& c : model.commands) {
        if (c.begin <= at && at < c.end) return at;
      }
    }
  }
  return a.open;
}

}  // namespace

std::pair<size_t, const Command*> launch_position(const Model& model, std::string_view text, const Flag& f) {
  size_t at = f.array >= 0 ? expansion_pos(model, text, model.arrays[static_cast<size_t>(f.array)]) : f.flag.begin;
  for (const Command& c : model.commands) {
    if (c.begin <= at && at < c.end) return {at, &c};
  }
  return {at, nullptr};
}

const Flag* effective_flag(const Model& model, std::string_view text, std::string_view key) {
  const Flag* only = nullptr;
  int count = 0;
  for (const Flag& f : model.flags) {
    if (f.key == key && count++ == 0) only = &f;
  }
  if (count <= 1) return only;
  const Flag* best = nullptr;
  std::pair<size_t, size_t> best_pos{0, 0};
  for (const Flag& f : model.flags) {
    if (f.key != key) continue;
    size_t at = f.array >= 0 ? expansion_pos(model, text, model.arrays[static_cast<size_t>(f.array)]) : f.flag.begin;
    std::pair<size_t, size_t> pos{at, f.flag.begin};
    if (!best || pos >= best_pos) {
      best = &f;
      best_pos = pos;
    }
  }
  return best;
}

Model scan(const std::string& name, std::string_view text) {
  std::vector<Token> toks = bash::tokenize(name, text);
  Model m = Parser(name, text, toks).run();
  for (const Token& t : toks) {
    if (t.kind != TokenKind::Newline) m.words.emplace_back(t.begin, t.end);
    if (t.kind == TokenKind::Word) default_assignments(text, t.begin, t.end, m.writers);
  }
  return m;
}

}  // namespace attune::recipe::script
