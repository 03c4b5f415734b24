// Internal to ScriptDocument: a small bash lexer. Nothing is ever executed; it
// only finds where each word, operator and newline of a launch script lies (byte
// offsets), so flags can be read and edits spliced without touching other bytes.
// It understands just enough bash for training launch scripts: quotes, `$(...)`,
// `$((...))`, `${...}`, backquotes, comments, line continuations and heredocs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attune::recipe::bash {

enum class TokenKind { Word, Op, Newline };

struct Token {
  TokenKind kind = TokenKind::Word;
  size_t begin = 0;
  size_t end = 0;
  // A `\`+newline lies between the previous token and this one. On a command
  // line that ends the value words of the flag before it.
  bool after_continuation = false;
};

// Splits `text` into tokens. Comments are dropped; heredoc bodies are lexed in
// place as script text (an sbatch script builds its srun line inside one), or
// skipped when they do not lex. Throws InputError naming `name`, line and column
// for an unterminated quote, `$(`, `${` or backquote.
std::vector<Token> tokenize(const std::string& name, std::string_view text);

// Raised by the skip_* helpers; tokenize() turns it into an InputError.
struct LexError {
  size_t at;
  std::string what;
};

// Each returns the index just past the construct that starts at `pos`.
size_t skip_single_quoted(std::string_view t, size_t pos);  // t[pos] == '\''
size_t skip_double_quoted(std::string_view t, size_t pos);  // t[pos] == '"'
size_t skip_dollar(std::string_view t, size_t pos);         // t[pos] == '$'
// Inside "...": `$"` and `$'` are a plain `$` followed by a quote.
size_t skip_dollar_in_double(std::string_view t, size_t pos);

bool is_name_start(char c);
bool is_name_char(char c);
bool is_blank(char c);  // space, tab or carriage return

// How a whole word is quoted: one "..." or '...' string, or anything else.
enum class Quote { None, Double, Single };
Quote whole_quote(std::string_view t, size_t begin, size_t end);
// The whitespace-separated fields inside a word that is one quoted string,
// as bash splits an unquoted `${ARR[@]}` whose element is "--fp8-format hybrid".
std::vector<std::pair<size_t, size_t>> split_quoted(std::string_view t, size_t begin, size_t end);

// One `$` expansion, located by parse_ref().
enum class RefKind { Literal, Var, Positional, Special, Arith, Command, Unsupported };
struct VarRef {
  RefKind kind = RefKind::Literal;
  size_t begin = 0;
  size_t end = 0;
  std::string name;   // variable name or positional digits
  std::string op;     // "", ":-", "-", ":=", "=", ":+" or "+"
  size_t operand_begin = 0;  // the word after `op`, or the body of `$(( ))`
  size_t operand_end = 0;
};
VarRef parse_ref(std::string_view t, size_t pos, bool in_double = false);  // t[pos] == '$'

// 1-based line and column of byte offsets.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  int line(size_t pos) const;
  int column(size_t pos) const;

 private:
  std::vector<size_t> starts_;
};

}  // namespace attune::recipe::bash
