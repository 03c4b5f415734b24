// TomlDocument: a TOML recipe (e.g. a torchtitan train config) held as its
// exact bytes. toml++ parses and validates the text; every node is then located
// by byte offsets so that set()/remove() splice only the bytes of one value (or
// insert/delete one line) and everything else -- comments, spacing, key order,
// CRLF line ends -- stays byte-identical.
//
// Key paths: `[training] local_batch_size` is `training.local_batch_size`,
// dotted keys and inline tables nest the same way, arrays of tables are indexed
// (`x[0].key`). An array of scalars is one leaf holding a List value.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/recipe/document.h"
#include "attune/recipe/key_path.h"
#include "attune/recipe/value.h"

namespace attune::recipe {

class TomlDocument : public Document {
 public:
  // Parses `text`; throws InputError (file:line:column) when it is not valid TOML.
  static std::unique_ptr<TomlDocument> parse(const std::string& name, std::string text);

  Format format() const override { return Format::Toml; }
  const std::string& name() const override { return name_; }
  const std::string& text() const override { return text_; }

  std::vector<Entry> entries() const override;
  std::optional<Entry> find(std::string_view path) const override;

  // Replaces an existing value in the TOML type the old value had (a string
  // stays a string, keeping its quote style); adds a missing key after the
  // last key of its table, or appends a new [table] when the table is absent.
  // Throws InputError for null values, paths that cross a scalar, or edits
  // that would leave the file invalid (the document is then unchanged).
  void set(std::string_view path, const Value& value) override;
  // Deletes the key's line (or the member of an inline table/array).
  bool remove(std::string_view path) override;

  std::unique_ptr<Document> clone() const override;

  // TOML type of a node, as far as editing needs to know it.
  enum class Type { String, Int, Float, Bool, Date, Array, Table, InlineTable, TableArray };

  // One node of the parsed tree, located in text_ by byte offsets.
  struct Node {
    std::string path;               // canonical key path (join_key_path form)
    std::vector<PathPart> parts;
    Type type = Type::Table;
    size_t begin = 0, end = 0;      // value bytes [begin, end); a [header] for tables
    int line = 0, column = 0;       // 1-based position of `begin`
    bool entry = false;             // a leaf reported by entries()
    bool in_brackets = false;       // member of an inline table or an inline array
    bool header = false;            // table defined by its own [header] line
    char quote = 0;                 // strings: '"' or '\''
    Type item_type = Type::Table;   // arrays of scalars: type of the first item
    char item_quote = 0;            // ... and its quote when it is a string
    Value value;                    // leaves only
  };

 private:
  TomlDocument(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {}

  void reindex();  // parses text_ and rebuilds nodes_ (strong guarantee)
  // Replaces bytes [begin, end) with `with`, re-parses, and rolls back on failure.
  void splice(size_t begin, size_t end, std::string_view with, const std::string& path);

  const Node* node(const std::string& path) const;
  const Node* node(const std::vector<PathPart>& parts, size_t count) const;
  Entry entry_of(const Node& n) const;
  std::vector<PathPart> parse_path(std::string_view path) const;

  void replace_value(const Node& n, const Value& value, const std::string& path);
  void insert_value(const std::vector<PathPart>& parts, const Value& value, const std::string& path);
  void insert_inline(const Node& table, const std::vector<PathPart>& parts, const Value& value,
                     const std::string& path);
  void insert_in_section(const Node* owner, const std::vector<PathPart>& parts, const Value& value,
                         const std::string& path);
  void append_table(const std::vector<PathPart>& parts, const Value& value, const std::string& path);
  void check_crossing(const Node& ancestor, const std::vector<PathPart>& parts, size_t depth,
                      const std::string& path) const;

  // Bytes from a [header] line (or the file start, for the root) to the next one.
  size_t section_begin(const Node* owner) const;
  size_t section_end(const Node* owner) const;
  const Node* last_key_value(size_t from, size_t to) const;  // ends last among those in [from, to)
  std::string indent_of(size_t line_begin) const;
  std::string separator(size_t from, size_t to) const;  // " = " or "=" as the lines there use
  std::string newline() const;
  size_t line_start(size_t pos) const;
  size_t line_end(size_t pos) const;  // position of the '\n' ending pos's line, or size
  // Bytes to delete for a member of an inline table or array, with one comma.
  std::pair<size_t, size_t> member_span(const Node& n) const;
  size_t member_start(const Node& n) const;

  std::string name_;
  std::string text_;
  std::vector<Node> nodes_;  // sorted by position in text_
  std::map<std::string, size_t> by_path_;
};

}  // namespace attune::recipe
