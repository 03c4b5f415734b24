// Internal to ScriptDocument: turns "set this flag/variable to that value" into
// the fewest byte splices on a launch script. It edits a value where the script
// really defines it (the `TP=${TP:-1}` a `--tensor-model-parallel-size ${TP}`
// reads), keeps continuations valid when lines go, and quotes every new value
// so that it can never become shell code.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe/value.h"
#include "script_model.h"
#include "script_resolver.h"

namespace attune::recipe::script {

// Replace bytes [begin, end) with `text` (begin == end inserts).
struct Splice {
  size_t begin = 0;
  size_t end = 0;
  std::string text;
};

class Editor {
 public:
  // `name` is the file name for errors; `text` and `model` must outlive the editor.
  Editor(const std::string& name, std::string_view text, const Model& model);

  // Bool false removes the flag; Bool true on a bare flag changes nothing.
  std::vector<Splice> set_flag(std::string_view flag, const Value& v) const;
  std::vector<Splice> remove_flag(std::string_view flag) const;  // empty when absent
  // A scalar assignment (`var.NAME`) or export (`env.NAME`).
  std::vector<Splice> set_variable(std::string_view name, bool exported, const Value& v) const;
  std::vector<Splice> remove_variable(std::string_view name, bool exported) const;

 private:
  // Where a value is written: a plain word on a command line or in an
  // assignment, a word in an argument array (split again when expanded), inside
  // "..." (a default such as "${X:-"v"}"), or a field of a quoted array element.
  enum class Ctx { Word, ArrayWord, InDouble, SplitDouble, SplitSingle };
  struct SoleRef {
    bash::VarRef ref;
    bool in_double;  // the reference sits inside "..."
  };

  std::vector<const Flag*> occurrences(std::string_view key) const;
  void edit_occurrence(const Flag& f, const Value& v, std::vector<Splice>& out) const;
  void edit_value(const Flag& f, const Piece& p, const std::string& literal, std::vector<Splice>& out) const;
  void edit_assignment(const Assignment& a, const std::string& literal, const std::string& key,
                       std::vector<Splice>& out, int depth) const;
  void replace_values(const Flag& f, const std::vector<std::string>& words, std::vector<Splice>& out) const;
  void remove_occurrence(const Flag& f, std::vector<Splice>& out) const;

  Splice insert_flag(std::string_view flag, const std::string& key, const Value& v) const;
  std::optional<Splice> insert_near_relative(const std::string& key, const std::string& line) const;
  std::optional<Splice> insert_in_last_array(const std::string& line) const;
  std::optional<Splice> insert_in_command(const std::string& key, const std::string& line) const;
  const Flag& command_anchor(int cmd, const std::string& key, size_t first_line) const;
  Splice insert_after_flag(const Flag& f, const std::string& line) const;
  Splice insert_before_close(const ArrayDef& arr, const std::string& line) const;
  Splice insert_variable(std::string_view name, bool exported, const std::string& literal) const;
  Splice insert_after_header(const std::string& line) const;

  static Ctx context(const Flag& f, const Piece& p);
  std::optional<SoleRef> sole_reference(const Piece& p) const;
  bool is_literal(const Piece& p) const;
  std::string render(std::string_view word, Ctx ctx, std::string_view original, const std::string& key,
                     size_t at) const;
  std::string render_all(const std::vector<std::string>& words, Ctx ctx, const std::string& key, size_t at) const;
  const Assignment* insertion_anchor(bool exported) const;

  // Layout helpers.
  size_t line_start(size_t pos) const;
  size_t line_end(size_t pos) const;
  std::string indent_of(size_t line_begin) const;
  bool continues(size_t line_begin) const;  // the line ends with `\`
  bool blank(size_t begin, size_t end) const;
  bool trailer(size_t begin, size_t end, bool* continuation) const;
  Splice insert_line_after(size_t line_begin, const std::string& line) const;
  Splice remove_words(size_t begin, size_t end, bool on_command) const;
  Splice remove_line(size_t line_begin, size_t line_end, bool last_of_command) const;
  Splice remove_inside(const Piece& first, const Piece& last) const;
  std::string_view raw(const Piece& p) const { return t_.substr(p.begin, p.end - p.begin); }
  [[noreturn]] void fail(size_t at, const std::string& key, const std::string& message) const;

  const std::string& name_;
  std::string_view t_;
  const Model& m_;
  Resolver resolver_;
};

// Applies splices given in any order; identical duplicates (two flags that read
// the same variable) count once. Throws std::logic_error when two overlap.
std::string apply_splices(std::string_view text, std::vector<Splice> splices);

// `s` as one literal bash word: unchanged when it holds only safe characters,
// otherwise single-quoted (with ' written as '\'').
std::string shell_quote(std::string_view s);

}  // namespace attune::recipe::script
