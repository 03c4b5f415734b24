// Document: a recipe file held as its exact bytes plus an index of its settings.
// Each format (YAML, TOML, Megatron launch script, a torchtitan command line
// kept in an attune wrapper) has its own Document. Reading
// gives every leaf setting by key path; writing changes only the bytes of the
// changed value (or inserts one line where a key must be added), so an unchanged
// document saves byte-identical and `diff` shows exactly the edits.
//
// Key paths: YAML/TOML use dotted paths with list indices, e.g.
// `model.optim.lr`, `callbacks[2].tp_comm_overlap`, `MODEL_ARGS.--micro-batch-size`.
// Launch scripts use the flag itself, `--micro-batch-size`, and `env.NAME` for
// exported environment variables.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe/value.h"
#include "attune/util/error.h"

namespace attune::recipe {

enum class Format { Yaml, Toml, Script, Command };
std::string to_string(Format f);

struct Entry {
  std::string path;  // key path
  Value value;       // resolved value (variables/interpolations expanded where possible)
  std::string raw;   // the value's text exactly as written (e.g. "${TP_SIZE}", "'bf16'")
  int line = 0;      // 1-based line of the value in the file (0 if not in the file)
  // The bytes of text() that write this setting, its key or flag through its
  // value: what an edit of it may change. begin == end: none of its own (a
  // value reached through a YAML alias is written at its anchor).
  size_t begin = 0;
  size_t end = 0;
  // The value depends on what only the run knows (the environment, the
  // script's arguments, a command's output, an interpolation that does not
  // resolve in the file): `value` is then its text, not what the framework reads.
  bool runtime = false;
  // A YAML plain scalar that YAML loaders read differently (`042`: octal 34 to
  // PyYAML's YAML 1.1, 42 to YAML 1.2; `1e-4`: a string to PyYAML, a number to
  // OmegaConf; `yes`, `1_000`, `0x10`, `1:30`): which value the framework
  // sees depends on its loader.
  bool loader_dependent = false;
};

// Whether YAML 1.1 (PyYAML's safe_load), YAML 1.2 and OmegaConf type the plain
// scalar `text` differently (see Entry::loader_dependent).
bool yaml_loader_dependent(std::string_view text);

class Document {
 public:
  virtual ~Document() = default;

  virtual Format format() const = 0;
  // Name used in error messages (the file path given by the user).
  virtual const std::string& name() const = 0;
  // Current bytes of the document, including any edits made through set().
  virtual const std::string& text() const = 0;

  // Every leaf setting in file order.
  virtual std::vector<Entry> entries() const = 0;
  // One setting, or nullopt when the file does not set it.
  virtual std::optional<Entry> find(std::string_view path) const = 0;
  // Every place the file writes a setting, each occurrence on its own (a
  // script's flag given twice, each assignment of a variable): with their
  // bytes, what the gate holds a candidate's changed bytes against.
  virtual std::vector<Entry> written() const { return entries(); }

  // Sets `path` to `value`, changing only that value's bytes; adds the key in
  // its section (with the file's indentation) when absent. For a script, a
  // Bool false removes a bare flag and Bool true adds one. Throws InputError
  // when the edit cannot be made (e.g. the path crosses a scalar).
  virtual void set(std::string_view path, const Value& value) = 0;
  // Removes a setting. Returns false when it was not present.
  virtual bool remove(std::string_view path) = 0;

  virtual std::unique_ptr<Document> clone() const = 0;
};

// Parses `text` in the format that `name` and the content indicate.
// Throws InputError with file:line:column for malformed input.
std::unique_ptr<Document> parse_document(const std::string& name, std::string text);
// Which format a file is, from its name and first bytes.
Format detect_format(const std::string& name, std::string_view text);

}  // namespace attune::recipe
