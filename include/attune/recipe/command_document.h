// CommandDocument: a recipe that is a command line. torchtitan's Python-config
// generation starts from a named config (`--module llama3 --config llama3_8b`)
// and takes its settings as `--section.key value` overrides; a user keeps
// that command in an attune wrapper:
//
//   framework: torchtitan
//   hardware: {gpu: h100, nodes: 1, gpus_per_node: 8}
//   launch:
//     command: [torchrun, -m, torchtitan.train, --module, llama3, --config, llama3_8b,
//               --training.steps, "200", activation-checkpoint:full]
//
// The document is that wrapper file. Its settings are the named config's
// values (skills/torchtitan_configs.yaml: data with no bytes of their own)
// under the command's overrides, each the bytes of its list elements. Keys are
// the overrides' paths with underscores (`--parallelism.tensor-parallel-degree`
// is parallelism.tensor_parallel_degree; `--compile.enable` true,
// `--compile.no-enable` false; the `activation-checkpoint:MODE` subcommand is
// activation_checkpoint.mode), the spelling the lever catalog and the gate use
// for torchtitan's TOML keys. set() rewrites an override's value in place or
// appends `--key value` to the list; remove() drops an override; every other
// byte of the wrapper stays as it is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/recipe/document.h"

namespace attune::recipe {

class CommandDocument : public Document {
 public:
  // Parses the wrapper `text`; InputError naming the file, line and key when
  // it has no launch.command, the command names no --module and --config, or
  // the named config is not one attune knows.
  static std::unique_ptr<CommandDocument> parse(const std::string& name, std::string text);
  // Whether `text` (an attune wrapper) keeps its recipe as a torchtitan
  // command line: no config file, a launch.command that names --module.
  static bool holds_command_recipe(std::string_view text);

  Format format() const override { return Format::Command; }
  const std::string& name() const override { return name_; }
  const std::string& text() const override { return text_; }
  std::vector<Entry> entries() const override;
  std::optional<Entry> find(std::string_view path) const override;
  void set(std::string_view path, const Value& value) override;
  bool remove(std::string_view path) override;
  std::unique_ptr<Document> clone() const override;

  // The command as the document says it now (the elements of launch.command).
  std::vector<std::string> argv() const;
  // The bytes of the command list: every edit stays inside them.
  std::pair<std::size_t, std::size_t> command_bytes() const;
  // "llama3/llama3_8b".
  const std::string& named_config() const { return named_; }

 private:
  struct Element {
    std::string text;          // the argument
    std::size_t begin = 0;     // its bytes in the wrapper (quotes included)
    std::size_t end = 0;
    int line = 0;
    char quote = 0;            // '"', '\'' or 0 for a plain scalar
  };
  struct Override {
    std::string key;           // section.key, underscores
    Value value;
    std::size_t first = 0;     // index of its first element
    std::size_t count = 1;     // elements it takes (flag and value: 2)
    bool flag = false;         // a bare boolean flag (--x.y / --x.no-y)
  };

  CommandDocument() = default;
  void index();  // elements, overrides and the named config from text_
  std::string element_text(const std::string& arg, char quote) const;
  void replace_text(std::string text);

  std::string name_;
  std::string text_;
  std::vector<Element> elements_;
  std::vector<Override> overrides_;
  std::size_t program_ = 0;    // index of the first argument of torchtitan.train
  std::size_t list_begin_ = 0, list_end_ = 0;
  bool flow_ = true;           // [a, b] rather than a block list
  std::string indent_;         // a block list's "  - " prefix
  std::string named_;
  std::vector<std::pair<std::string, Value>> base_;  // the named config's values
};

}  // namespace attune::recipe
