// YamlDocument: a YAML recipe (Hydra/OmegaConf, NeMo, HyperPod, Megatron CI,
// Automodel, Axolotl) held as its exact bytes plus an index of every leaf
// setting. yaml-cpp parses and validates the file; the byte ranges of values
// come from yaml-cpp's marks plus our own scan of the text, so an edit splices
// only the changed bytes and the rest of the file (comments, blank lines,
// quoting, CRLF, a missing final newline) stays byte-identical.
//
// Reading:
//  - Paths are dotted (`model.optim.lr`, `MODEL_ARGS.--lr`, `scale_config.1.x`);
//    a sequence of scalars is one List leaf (`betas`), a sequence holding maps is
//    indexed (`callbacks[2].tp_comm_overlap`). Empty maps (`{}`, kind Null, text
//    "{}"), empty lists and nulls are leaves too.
//  - A value that is exactly `${path}` (OmegaConf) is resolved: `${.x}` relative
//    to the containing map, `${a.b}` absolute, retried without its first segment
//    (`${recipes.trainer.x}` in HyperPod). Entry.raw keeps the interpolation.
//  - Aliases and merge keys (`<<: *base`) give the anchored values; their
//    Entry.raw/line are where the value is actually written (the anchor).
//
// Writing (set/remove): the file is re-parsed after every edit; an edit that
// would not parse, or would not read back as the requested value, throws and
// leaves the document unchanged.
//  - A scalar keeps its quoting, booleans keep the file's capitalisation, and a
//    plain value that would change type or break YAML is double-quoted.
//  - A list replaces a flow list in flow style; a block list is rewritten item by
//    item in block style at the same indentation.
//  - A value that comes from an anchor is never edited at the anchor (other keys
//    share it). A key that comes from a merge key gets an explicit override line
//    in the merging map; a map that is an alias (`k: *a`) becomes
//    `k: {<<: *a, key: value}`; a scalar or list alias is replaced by the literal.
//    Overriding deeper inside merged content is refused with an InputError.
//    Setting the anchored value itself (`size: &sz 8`) edits it in place, so
//    its aliases follow, as the file says.
//  - A missing key is added after its map's last child with the map's
//    indentation (nested maps created as needed; `, key: value` in flow maps).
//    List items are never added; a path through a scalar is an InputError.
//  - remove() deletes the key's lines (its whole subtree); a key that only
//    comes from an anchor or merge key cannot be removed here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe/document.h"

namespace attune::recipe {

struct YamlIndex;  // the byte ranges and values of every node (yaml_document.cpp)

class YamlDocument : public Document {
 public:
  // Throws InputError (file:line:col) for malformed YAML, duplicate keys, or a
  // top level that is not a mapping.
  static std::unique_ptr<YamlDocument> parse(const std::string& name, std::string text);

  Format format() const override { return Format::Yaml; }
  const std::string& name() const override { return name_; }
  const std::string& text() const override { return text_; }

  std::vector<Entry> entries() const override;
  std::optional<Entry> find(std::string_view path) const override;
  void set(std::string_view path, const Value& value) override;
  bool remove(std::string_view path) override;
  std::unique_ptr<Document> clone() const override;

 private:
  YamlDocument(std::string name, std::string text, std::shared_ptr<const YamlIndex> index);
  // Re-parses `new_text` and adopts it; with `expect`, also checks that `path`
  // reads back as that value. Throws (document unchanged) otherwise.
  void commit(std::string new_text, const std::string& path, const Value* expect);

  std::string name_;
  std::string text_;
  // Immutable once built, so clones share it; every edit builds a new one.
  std::shared_ptr<const YamlIndex> index_;
};

// An integer as PyYAML's YAML 1.1 resolver reads it, which every YAML loader of
// the frameworks attune reads uses (safe_load: Axolotl, Megatron's CI YAML,
// AutoModel; OmegaConf: NeMo, HyperPod, Bridge): `500_000`, octal `010`,
// `0x10`, `0b11`, base 60 `1:30`. nullopt when it is no integer to YAML 1.1.
std::optional<long long> yaml11_integer(std::string_view text);

}  // namespace attune::recipe
