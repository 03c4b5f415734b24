// ScriptDocument: a Megatron-LM bash launch script as a Document.
//
// Megatron-LM has no config file: a recipe is a bash script that collects
// flags in arrays (MODEL_ARGS=( --num-layers 32 ... )) or on the command line
// and runs `torchrun ... pretrain_gpt.py <flags>`. This document reads those
// flags without running anything (a small lexer records the byte offsets of
// every word) and edits them by splicing bytes, so the rest of the script stays
// byte-identical.
//
// Key paths:
//   --micro-batch-size   a flag (`--micro_batch_size` finds the same flag);
//                        a bare flag reads as Bool true, several value words
//                        as a List.
//   env.NAME             an exported variable (`export NAME=value`).
//   var.NAME             a plain shell variable (`GPUS_PER_NODE=8`).
// Values are resolved through the script's own variables (`${TP:-1}`,
// `$(($A*$B))`); what depends on the environment or arguments stays the raw
// text as a String (Entry::runtime). A flag may occur several times: find()
// and entries() report the one the program reads (argparse keeps the last on
// the command line; an array's flags stand where it is expanded), set() and
// remove() change all.
// set() edits a value where the script defines it: `--tensor-model-parallel-size
// ${TP}` with `TP=${TP:-1}` becomes `TP=${TP:-2}`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/recipe/document.h"

namespace attune::recipe {

class ScriptDocument : public Document {
 public:
  // Throws InputError (file:line:column) for an unterminated quote, array,
  // `$(` or `${`. A script without any flag is still a valid document.
  static std::unique_ptr<ScriptDocument> parse(const std::string& name, std::string text);

  Format format() const override { return Format::Script; }
  const std::string& name() const override { return name_; }
  const std::string& text() const override { return text_; }

  std::vector<Entry> entries() const override;
  std::optional<Entry> find(std::string_view path) const override;
  // Every occurrence of a flag, in file order (argparse takes the last one; the
  // gate must see a flag given twice with different values).
  std::vector<Entry> occurrences(std::string_view flag) const;
  // Every flag occurrence and every assignment of a variable, in file order.
  std::vector<Entry> written() const override;
  // Byte ranges of every word and operator bash reads, in order: what is
  // neither a comment, nor blanks, nor a line break.
  // Each command line that passes flags or expands an argument array: its
  // first byte and its first word (the program it runs), in file order.
  std::vector<std::pair<size_t, std::string>> commands() const;
  // The bytes of every construct that writes a variable in a way the reader
  // does not follow (`read`, `printf -v`, `let`, `${X:=d}`, `eval`, ...).
  std::vector<std::pair<size_t, size_t>> untracked_writes() const;
  const std::vector<std::pair<size_t, size_t>>& words() const;
  // Values are written as their text, quoted for bash when needed. Throws
  // InputError for a path that is not --flag, env.NAME or var.NAME, or for a
  // value that bash would split where it goes (whitespace in an argument
  // array, which `${ARGS[@]}` expands unquoted).
  void set(std::string_view path, const Value& value) override;
  bool remove(std::string_view path) override;
  std::unique_ptr<Document> clone() const override;

 private:
  struct Index;  // what the scan found; immutable, so clones share it

  ScriptDocument(std::string name, std::string text, std::shared_ptr<const Index> index);
  // Applies an edit to the text and rescans; the document is unchanged if either throws.
  template <typename Edit>
  bool edit(Edit&& make_splices);

  std::string name_;
  std::string text_;
  std::shared_ptr<const Index> index_;
};

}  // namespace attune::recipe
