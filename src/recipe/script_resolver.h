// Internal to ScriptDocument: what a value in a launch script amounts to, found
// without running anything. Expands `$VAR`, `${VAR:-default}`, quotes and
// `$(( ))` integer arithmetic from the script's own assignments; anything that
// depends on the environment, the arguments or a command stays unresolved.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe/value.h"
#include "bash_lexer.h"
#include "script_model.h"

namespace attune::recipe::script {

class Resolver {
 public:
  // `text` and `model` must outlive the resolver.
  Resolver(std::string_view text, const Model& model);

  // The value a piece passes to the program: quotes removed, variables
  // expanded; nullopt when some part is not known from the script.
  std::optional<std::string> expand(const Piece& p) const;
  // expand() as a Value; unresolved text becomes a String of the raw text
  // without its surrounding quotes.
  Value value(const Piece& p) const;
  Value value(const Assignment& a) const;

  // The assignment that a use of `name` at byte `pos` reads: the last one that
  // ends before `pos`, else (unless `pos` lies in an assignment of `name`
  // itself, as in TP=${TP:-1}) the first one in the file.
  const Assignment* lookup(std::string_view name, size_t pos) const;
  const Assignment* lookup_before(std::string_view name, size_t pos) const;

 private:
  enum class Mode { Word, DoubleQuoted, Literal };
  struct Cursor {
    size_t at;
    size_t end;
    size_t pos;  // where the expression is used, for variable lookup
    int depth;
  };

  std::optional<std::string> expand(size_t begin, size_t end, Mode mode, int depth) const;
  std::optional<std::string> expand_word(size_t begin, size_t end, int depth) const;
  std::optional<std::string> expand_double(size_t begin, size_t end, int depth) const;
  std::optional<std::string> reference(const bash::VarRef& r, Mode mode, int depth) const;
  std::optional<std::string> variable(std::string_view name, size_t pos, int depth) const;
  std::optional<std::string> unset(const bash::VarRef& r, Mode mode, int depth) const;
  std::optional<std::string> with_operator(const bash::VarRef& r, const std::string& v, Mode mode,
                                           int depth) const;

  std::optional<long long> arith_sum(Cursor& c) const;
  std::optional<long long> arith_product(Cursor& c) const;
  std::optional<long long> arith_unary(Cursor& c) const;
  std::optional<long long> arith_primary(Cursor& c) const;
  std::optional<long long> arith_variable(Cursor& c) const;
  void arith_space(Cursor& c) const;

  // A construct the resolver does not follow wrote `name` after the assignment
  // a read at `pos` would take: the read is known only at run time.
  bool overwritten(std::string_view name, size_t pos) const;

  std::string_view t_;
  std::map<std::string, std::vector<const Assignment*>, std::less<>> by_name_;
  const std::vector<Writer>* writers_;
};

// `'x'` -> `x`, `"x"` -> `x`; anything else unchanged.
std::string strip_quotes(std::string_view s);

}  // namespace attune::recipe::script
