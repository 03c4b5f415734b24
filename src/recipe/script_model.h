// Internal to ScriptDocument: what a launch script sets, found from its tokens.
// Flags (`--micro-batch-size 4`) in argument arrays and on command lines, scalar
// variable assignments and exports, and where arrays and launch commands lie.
// Everything is byte offsets into the text, so the editor can splice in place.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bash_lexer.h"

namespace attune::recipe::script {

using bash::Quote;

// One argument as bash would pass it: a whole word, or one whitespace-separated
// field of a quoted array element ("--fp8-format hybrid" gives two pieces).
struct Piece {
  size_t begin = 0;
  size_t end = 0;
  Quote ctx = Quote::None;  // the quotes around the element the piece came from
  size_t word_begin = 0;    // that element (equal to begin/end when ctx is None)
  size_t word_end = 0;
  size_t first_begin = 0;   // first and last piece of that element, to tell
  size_t last_end = 0;      // whether a flag fills the element by itself
};

struct Flag {
  std::string name;  // as written, e.g. --micro_batch_size
  std::string key;   // normalised: --micro-batch-size
  Piece flag;        // the flag's own piece (including `=value` when written so)
  size_t name_end = 0;
  bool eq_form = false;       // --flag=value
  std::vector<Piece> values;  // value words; for --flag=value the part after '='
  int array = -1;             // index into Model::arrays, or -1
  int command = -1;           // index into Model::commands, or -1
};

struct Assignment {
  std::string name;
  size_t stmt_begin = 0;  // `export` or the name
  size_t name_begin = 0;
  size_t value_begin = 0;  // the value word after '=' (may be empty)
  size_t value_end = 0;
  bool exported = false;
  int depth = 0;  // nesting in if/case/loops/braces; 0 at top level
};

struct ArrayDef {
  std::string name;
  size_t stmt_begin = 0;
  size_t open = 0;   // offset of '('
  size_t close = 0;  // offset of ')'
  int depth = 0;
  bool has_flags = false;
};

// A construct that writes a variable in a way the resolver does not follow:
// `read`, `printf -v`, `let`, `(( ))`, `${X:=d}`, `ARR[i]=`, `for X in`,
// `unset`, `mapfile`, `getopts`; `eval` and `source` may write any variable.
// What a read of that variable after it gets is known only at run time.
struct Writer {
  std::string name;  // "" = any variable
  size_t begin = 0;
  size_t end = 0;
};

// A command line that passes flags or expands an argument array.
struct Command {
  size_t begin = 0;
  size_t end = 0;
  // Words after the entry script (`pretrain_gpt.py`) that expand a scalar
  // variable (`$EXTRA_ARGS`): their words may be flags that override any given
  // before them, since argparse keeps the last.
  std::vector<std::pair<size_t, size_t>> expansions;
};

struct Model {
  std::vector<Flag> flags;  // file order; a flag may occur several times
  std::vector<Assignment> assignments;  // scalar assignments and exports
  std::vector<ArrayDef> arrays;
  std::vector<Command> commands;
  std::vector<Writer> writers;
  std::vector<std::pair<size_t, size_t>> words;  // every word and operator token: what bash reads (not comments or blanks)
};

// Scans `text` (named `name` in errors). Throws InputError for unterminated
// quotes, arrays and substitutions.
Model scan(const std::string& name, std::string_view text);

// The occurrence of flag `key` (normalised) that the program reads when the
// script gives it more than once: argparse keeps the last one on the command
// line, and a flag in an argument array stands where the array is expanded.
// nullptr when the script does not give it.
const Flag* effective_flag(const Model& model, std::string_view text, std::string_view key);

// Where a flag stands on the command line that runs it (an array's flags where
// the array is expanded), and that command; nullptr when no command reads it.
std::pair<size_t, const Command*> launch_position(const Model& model, std::string_view text, const Flag& flag);

// `--micro_batch_size` and `--micro-batch-size` name the same flag.
std::string normalise_flag(std::string_view flag);

// The assignment that states a variable's value for the user (what var.NAME and
// env.NAME read and edit): the last one at top level, else the last one inside
// an if/case (02_train.sh sets CHECKPOINT_PATH="$2" inside its option parsing).
const Assignment* effective_assignment(const Model& model, std::string_view name, bool exported);

}  // namespace attune::recipe::script
