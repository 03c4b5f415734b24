#include "attune/recipe/toml_document.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <tuple>

#include <toml++/toml.h>

namespace attune::recipe {

namespace {

using Type = TomlDocument::Type;
using Node = TomlDocument::Node;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Position of the '=' before a value, or npos when the value is not a key's
// (an array item, or a [[header]] table).
size_t equals_before(const std::string& text, size_t begin) {
  size_t p = begin;
  while (p > 0 && is_blank(text[p - 1])) --p;
  return p > 0 && text[p - 1] == '=' ? p - 1 : std::string::npos;
}

// toml++ reports 1-based lines and columns counted in code points (a UTF-8
// byte order mark is skipped without a column); edits need byte offsets.
class LineMap {
 public:
  explicit LineMap(std::string_view text) : text_(text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
    if (text.substr(0, 3) == "\xEF\xBB\xBF") bom_ = 3;
  }

  size_t offset(const toml::source_position& p) const {
    if (p.line == 0 || p.line > starts_.size()) return text_.size();
    size_t pos = starts_[p.line - 1] + (p.line == 1 ? bom_ : 0);
    for (toml::source_index col = 1; col < p.column && pos < text_.size() && text_[pos] != '\n'; ++col) {
      ++pos;
      while (pos < text_.size() && (static_cast<unsigned char>(text_[pos]) & 0xC0) == 0x80) ++pos;
    }
    return pos;
  }

 private:
  std::string_view text_;
  std::vector<size_t> starts_;
  size_t bom_ = 0;
};

Type scalar_type(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return Type::String;
    case toml::node_type::integer: return Type::Int;
    case toml::node_type::floating_point: return Type::Float;
    case toml::node_type::boolean: return Type::Bool;
    default: return Type::Date;  // date, time, date_time
  }
}

std::vector<PathPart> with_part(std::vector<PathPart> parts, PathPart p) {
  parts.push_back(std::move(p));
  return parts;
}

bool holds_table(const toml::array& a) {
  return std::any_of(a.begin(), a.end(), [](const toml::node& n) { return n.is_table(); });
}

// Walks the toml++ tree and records every node with its byte range.
class Indexer {
 public:
  explicit Indexer(std::string_view text) : text_(text), lines_(text) {}

  std::vector<Node> run(const toml::table& root) {
    Node top;
    top.type = Type::Table;
    top.end = text_.size();
    nodes_.push_back(top);
    members(root, {}, false);
    std::stable_sort(nodes_.begin(), nodes_.end(), [](const Node& a, const Node& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.parts.size() < b.parts.size();
    });
    mark_headers();
    return std::move(nodes_);
  }

 private:
  void members(const toml::table& t, const std::vector<PathPart>& parts, bool in_brackets) {
    for (auto&& [key, child] : t) add(child, with_part(parts, {std::string(key.str()), -1}), in_brackets, true);
  }

  Node located(const toml::node& n, std::vector<PathPart> parts, bool in_brackets) const {
    Node out;
    out.path = join_key_path(parts);
    out.parts = std::move(parts);
    out.begin = lines_.offset(n.source().begin);
    out.end = std::max(out.begin, lines_.offset(n.source().end));
    out.line = static_cast<int>(n.source().begin.line);
    out.column = static_cast<int>(n.source().begin.column);
    out.in_brackets = in_brackets;
    return out;
  }

  void add(const toml::node& n, std::vector<PathPart> parts, bool in_brackets, bool entry) {
    Node out = located(n, parts, in_brackets);
    if (const toml::table* t = n.as_table()) {
      out.type = t->is_inline() ? Type::InlineTable : Type::Table;
      nodes_.push_back(std::move(out));
      members(*t, parts, in_brackets || t->is_inline());
    } else if (const toml::array* a = n.as_array(); a && holds_table(*a)) {
      // [[x]] (or an inline array of tables): its tables are indexed x[0].key.
      out.type = Type::TableArray;
      nodes_.push_back(std::move(out));
      for (size_t i = 0; i < a->size(); ++i) {
        const toml::node& item = *a->get(i);
        bool header_table = item.is_table() && !item.as_table()->is_inline();
        add(item, with_part(parts, {"", static_cast<int>(i)}), in_brackets || !header_table, true);
      }
    } else if (a) {
      scalar_array(*a, std::move(out), parts, entry);
    } else {
      out.type = scalar_type(n);
      out.quote = out.type == Type::String ? (text_[out.begin] == '\'' ? '\'' : '"') : 0;
      out.value = value_of(n, out);
      out.entry = entry;
      nodes_.push_back(std::move(out));
    }
  }

  // One leaf holding a List; its items are indexed too (not as entries) so
  // that `x[1]` can be set or removed.
  void scalar_array(const toml::array& a, Node out, const std::vector<PathPart>& parts, bool entry) {
    out.type = Type::Array;
    out.entry = entry;
    out.value = value_of(a, out);
    if (!a.empty()) {
      const toml::node& first = *a.get(0);
      out.item_type = first.is_array() ? Type::Array : scalar_type(first);
      out.item_quote = out.item_type == Type::String ? text_[lines_.offset(first.source().begin)] : 0;
    }
    nodes_.push_back(std::move(out));
    for (size_t i = 0; i < a.size(); ++i) add(*a.get(i), with_part(parts, {"", static_cast<int>(i)}), true, false);
  }

  Value value_of(const toml::node& n, const Node& where) const {
    std::string raw(text_.substr(where.begin, where.end - where.begin));
    switch (n.type()) {
      case toml::node_type::string: return Value::string(std::string(n.as_string()->get()));
      case toml::node_type::integer: return Value{ValueKind::Int, raw, {}};
      case toml::node_type::floating_point: return Value{ValueKind::Float, raw, {}};
      case toml::node_type::boolean: return Value{ValueKind::Bool, raw, {}};
      case toml::node_type::array: {
        std::vector<Value> items;
        for (const toml::node& item : *n.as_array()) items.push_back(value_of(item, located(item, {}, true)));
        return Value::list(std::move(items));
      }
      default: return Value::string(raw);  // dates and times keep their text
    }
  }

  // A [header] line starts at '['; toml++ gives the implicit super-tables of
  // [a.b.c] the same position, so the deepest table there owns the header.
  void mark_headers() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      Node& n = nodes_[i];
      if (n.type != Type::Table || n.parts.empty() || n.in_brackets || text_[n.begin] != '[') continue;
      bool deeper_follows = false;
      for (size_t j = i + 1; j < nodes_.size() && nodes_[j].begin == n.begin; ++j) {
        if (nodes_[j].type == Type::Table) deeper_follows = true;
      }
      n.header = !deeper_follows;
    }
  }

  std::string_view text_;
  LineMap lines_;
  std::vector<Node> nodes_;
};

// ---- Writing values as TOML text -------------------------------------------

std::string basic_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// A 'literal' string cannot hold a quote or control characters other than tab.
bool literal_ok(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return ch == '\'' || (c < 0x20 && ch != '\t') || c == 0x7F;
  });
}

std::string quoted(std::string_view s, char quote) {
  if (quote == '\'' && literal_ok(s)) return "'" + std::string(s) + "'";
  return basic_string(s);
}

bool bare_key(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// TOML dotted key for parts[from..]; all of them are keys, not indices.
std::string toml_key(const std::vector<PathPart>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += '.';
    out += bare_key(parts[i].key) ? parts[i].key : basic_string(parts[i].key);
  }
  return out;
}

// What TOML makes of `text` as a bare value, or nothing if it is not one.
std::optional<toml::node_type> toml_value_type(std::string_view text) {
  if (text.empty() || is_blank(text.front()) || is_blank(text.back()) ||
      text.find_first_of("\r\n#") != std::string_view::npos) {
    return std::nullopt;
  }
  try {
    toml::table t = toml::parse("v = " + std::string(text));
    if (t.size() != 1 || !t.get("v")) return std::nullopt;
    return t.get("v")->type();
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

bool is_date_type(std::optional<toml::node_type> t) {
  return t == toml::node_type::date || t == toml::node_type::time || t == toml::node_type::date_time;
}

// The value's own text when TOML reads it as a number (1e-4, 1_000, inf),
// otherwise a canonical spelling (.5 -> 0.5, 007 -> 7).
std::optional<std::string> number_text(const Value& v) {
  auto t = toml_value_type(v.text);
  if (t == toml::node_type::integer || t == toml::node_type::floating_point) return v.text;
  if (auto i = v.as_int()) return std::to_string(*i);
  if (auto d = v.as_double()) return Value::number(*d).text;
  return std::nullopt;
}

std::string render(Type old_type, char old_quote, Type item_type, char item_quote, const Value& v);

std::string render_list(const Value& v, Type item_type, char item_quote) {
  std::string out = "[";
  for (size_t i = 0; i < v.items.size(); ++i) {
    if (i) out += ", ";
    out += render(item_type, item_quote, Type::Table, 0, v.items[i]);
  }
  return out + "]";
}

// TOML text for `v`, in the type the old value had when the new text allows
// it (the caller's kinds come from Value::parse on user text, so "8" is Int
// even where the file holds a string).
std::string render(Type old_type, char old_quote, Type item_type, char item_quote, const Value& v) {
  if (v.kind == ValueKind::List) {
    return old_type == Type::Array ? render_list(v, item_type, item_quote) : render_list(v, Type::Table, 0);
  }
  if (old_type == Type::String) return quoted(v.text, old_quote);
  if ((old_type == Type::Int || old_type == Type::Float) && v.as_double()) return *number_text(v);
  if (old_type == Type::Bool && v.as_bool()) return *v.as_bool() ? "true" : "false";
  if (old_type == Type::Date && is_date_type(toml_value_type(v.text))) return v.text;
  if (v.kind == ValueKind::Bool && v.as_bool()) return *v.as_bool() ? "true" : "false";
  if (v.kind == ValueKind::Int || v.kind == ValueKind::Float) {
    if (auto n = number_text(v)) return *n;
  }
  return quoted(v.text, '"');
}

bool contains_null(const Value& v) {
  if (v.kind == ValueKind::List) return std::any_of(v.items.begin(), v.items.end(), contains_null);
  return v.is_null();
}

// The type with its article, for messages: "an integer", "a list".
std::string type_name(Type t) {
  switch (t) {
    case Type::String: return "a string";
    case Type::Int: return "an integer";
    case Type::Float: return "a float";
    case Type::Bool: return "a boolean";
    case Type::Date: return "a date";
    case Type::Array: return "a list";
    case Type::Table: return "a table";
    case Type::InlineTable: return "an inline table";
    case Type::TableArray: return "an array of tables";
  }
  return "a value";
}

bool is_table_like(Type t) { return t == Type::Table || t == Type::InlineTable || t == Type::TableArray; }

}  // namespace

// ---- Parsing and lookup ------------------------------------------------------

std::unique_ptr<TomlDocument> TomlDocument::parse(const std::string& name, std::string text) {
  std::unique_ptr<TomlDocument> doc(new TomlDocument(name, std::move(text)));
  doc->reindex();
  return doc;
}

void TomlDocument::reindex() {
  toml::table root;
  try {
    root = toml::parse(text_, name_);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw InputError({name_, static_cast<int>(at.line), static_cast<int>(at.column)}, "",
                     std::string(e.description()));
  }
  std::vector<Node> nodes = Indexer(text_).run(root);
  std::map<std::string, size_t> by_path;
  for (size_t i = 0; i < nodes.size(); ++i) by_path.emplace(nodes[i].path, i);
  nodes_ = std::move(nodes);
  by_path_ = std::move(by_path);
}

const TomlDocument::Node* TomlDocument::node(const std::string& path) const {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : &nodes_[it->second];
}

const TomlDocument::Node* TomlDocument::node(const std::vector<PathPart>& parts, size_t count) const {
  return node(join_key_path(std::vector<PathPart>(parts.begin(), parts.begin() + count)));
}

std::vector<PathPart> TomlDocument::parse_path(std::string_view path) const {
  try {
    return parse_key_path(path);
  } catch (const std::invalid_argument& e) {
    throw InputError({name_}, std::string(path), e.what());
  }
}

Entry TomlDocument::entry_of(const Node& n) const {
  // From the start of its line: the key (or the table header's key) is before the value.
  const size_t line_start = text_.rfind('\n', n.begin == 0 ? 0 : n.begin - 1);
  return Entry{n.path, n.value, text_.substr(n.begin, n.end - n.begin), n.line,
               line_start == std::string::npos ? 0 : line_start + 1, n.end};
}

std::vector<Entry> TomlDocument::entries() const {
  std::vector<Entry> out;
  for (const Node& n : nodes_) {
    if (n.entry) out.push_back(entry_of(n));
  }
  return out;
}

std::optional<Entry> TomlDocument::find(std::string_view path) const {
  std::vector<PathPart> parts;
  try {
    parts = parse_key_path(path);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a malformed path names nothing in the file
  }
  const Node* n = node(join_key_path(parts));
  if (!n || !n->entry) return std::nullopt;
  return entry_of(*n);
}

std::unique_ptr<Document> TomlDocument::clone() const {
  return std::unique_ptr<Document>(new TomlDocument(*this));
}

// ---- Text geometry -----------------------------------------------------------

size_t TomlDocument::line_start(size_t pos) const {
  size_t nl = pos == 0 ? std::string::npos : text_.rfind('\n', pos - 1);
  return nl == std::string::npos ? 0 : nl + 1;
}

size_t TomlDocument::line_end(size_t pos) const {
  size_t nl = text_.find('\n', pos);
  return nl == std::string::npos ? text_.size() : nl;
}

std::string TomlDocument::newline() const {
  size_t nl = text_.find('\n');
  return nl != std::string::npos && nl > 0 && text_[nl - 1] == '\r' ? "\r\n" : "\n";
}

std::string TomlDocument::separator(size_t from, size_t to) const {
  int compact = 0, spaced = 0;
  for (const Node& n : nodes_) {
    if (n.parts.empty() || n.begin < from || n.begin >= to) continue;
    size_t eq = equals_before(text_, n.begin);
    if (eq == std::string::npos) continue;
    bool tight = eq > 0 && !is_blank(text_[eq - 1]) && !is_blank(text_[eq + 1]);
    (tight ? compact : spaced)++;
  }
  if (compact + spaced == 0 && (from > 0 || to < text_.size())) return separator(0, text_.size());
  return compact > spaced ? "=" : " = ";
}

size_t TomlDocument::section_begin(const Node* owner) const {
  return owner->parts.empty() ? 0 : line_start(owner->begin);
}

size_t TomlDocument::section_end(const Node* owner) const {
  size_t from = section_begin(owner);
  for (const Node& n : nodes_) {
    if (n.header && line_start(n.begin) > from) return line_start(n.begin);
    if (n.header && owner->parts.empty()) return line_start(n.begin);
  }
  return text_.size();
}

// ---- Editing -------------------------------------------------------------------

void TomlDocument::splice(size_t begin, size_t end, std::string_view with, const std::string& path) {
  std::string before = text_;
  text_.replace(begin, end - begin, with);
  try {
    reindex();  // leaves nodes_ as they were when it throws
  } catch (const InputError& e) {
    text_ = std::move(before);
    throw InputError({name_}, path, "the edit would make invalid TOML (" + e.message() + ")");
  }
}

void TomlDocument::set(std::string_view path, const Value& value) {
  std::vector<PathPart> parts = parse_path(path);
  std::string key(path);
  if (contains_null(value)) throw InputError({name_}, key, "TOML has no null; remove the key instead");
  if (const Node* n = node(join_key_path(parts))) return replace_value(*n, value, key);
  insert_value(parts, value, key);
}

void TomlDocument::replace_value(const Node& n, const Value& value, const std::string& path) {
  if (is_table_like(n.type)) {
    throw InputError({name_, n.line, n.column}, path,
                     "is " + type_name(n.type) + "; set the keys inside it instead");
  }
  splice(n.begin, n.end, render(n.type, n.quote, n.item_type, n.item_quote, value), path);
}

void TomlDocument::check_crossing(const Node& anc, const std::vector<PathPart>& parts, size_t depth,
                                  const std::string& path) const {
  SourceLocation at{name_, anc.line, anc.column};
  std::string what = anc.parts.empty() ? "the top level" : "'" + anc.path + "'";
  bool index_next = parts[depth].index >= 0;
  if (index_next && (anc.type == Type::Array || anc.type == Type::TableArray)) {
    throw InputError(at, path, what + " has no element [" + std::to_string(parts[depth].index) + "]");
  }
  if (!is_table_like(anc.type)) {
    throw InputError(at, path, what + " is " + type_name(anc.type) + ", not a " + (index_next ? "list" : "table"));
  }
  if (anc.type == Type::TableArray) {
    throw InputError(at, path, what + " is an array of tables; index it, e.g. " + anc.path + "[0]");
  }
  if (index_next) throw InputError(at, path, what + " is a table, not a list");
  for (size_t i = depth + 1; i < parts.size(); ++i) {
    if (parts[i].index >= 0) throw InputError(at, path, "cannot create list elements; only keys can be added");
  }
}

void TomlDocument::insert_value(const std::vector<PathPart>& parts, const Value& value, const std::string& path) {
  size_t depth = parts.size() - 1;
  while (depth > 0 && !node(parts, depth)) --depth;
  const Node& anc = *node(parts, depth);
  check_crossing(anc, parts, depth, path);

  if (anc.type == Type::InlineTable || anc.in_brackets) {
    // Inline tables cannot be extended elsewhere: add the member inside { }.
    size_t d = depth;
    while (node(parts, d)->type != Type::InlineTable) --d;
    return insert_inline(*node(parts, d), parts, value, path);
  }
  bool parent_indexed = std::any_of(parts.begin(), parts.end() - 1, [](const PathPart& p) { return p.index >= 0; });
  bool dotted = text_[anc.begin] != '[';
  bool has_section = anc.parts.empty() || anc.header || dotted;
  if (!parent_indexed && (depth + 1 < parts.size() || !has_section)) return append_table(parts, value, path);

  // The nearest table with its own [header] (or the root) holds the new line.
  size_t d = depth;
  while (d > 0 && !node(parts, d)->header) --d;
  insert_in_section(node(parts, d), parts, value, path);
}

void TomlDocument::insert_inline(const Node& table, const std::vector<PathPart>& parts, const Value& value,
                                 const std::string& path) {
  size_t p = table.end - 1;  // the closing '}'
  while (p > table.begin + 1 && is_blank(text_[p - 1])) --p;
  std::string member = toml_key(parts, table.parts.size()) + separator(table.begin + 1, table.end) +
                       render(Type::Table, 0, Type::Table, 0, value);
  if (text_[p - 1] == '{') return splice(p, table.end - 1, member, path);  // `{ }` becomes `{k = v}`
  splice(p, p, ", " + member, path);
}

const TomlDocument::Node* TomlDocument::last_key_value(size_t from, size_t to) const {
  const Node* last = nullptr;
  for (const Node& n : nodes_) {
    if (n.parts.empty() || n.in_brackets || n.begin < from || n.begin >= to) continue;
    if (equals_before(text_, n.begin) == std::string::npos) continue;
    if (!last || n.end > last->end) last = &n;
  }
  return last;
}

std::string TomlDocument::indent_of(size_t line_begin) const {
  size_t end = line_begin;
  while (end < text_.size() && is_blank(text_[end])) ++end;
  return text_.substr(line_begin, end - line_begin);
}

void TomlDocument::insert_in_section(const Node* owner, const std::vector<PathPart>& parts, const Value& value,
                                     const std::string& path) {
  size_t from = section_begin(owner), to = section_end(owner);
  bool root = owner->parts.empty();
  const Node* last = last_key_value(from, to);
  // After the line where the section's last value ends, so the comments and
  // blank lines before the next header stay there. A table without keys takes
  // it under its header; a root without keys just before the first header.
  size_t pos = last ? line_end(last->end) : root ? to : line_end(owner->begin);
  size_t indent_line = last ? line_start(last->begin) : root ? to : line_start(owner->begin);
  std::string nl = newline();
  std::string lead, tail = nl;
  if (!last && root && to < text_.size()) tail += nl;  // keep a blank line before that header
  if (pos < text_.size() && text_[pos] == '\n') {
    ++pos;
  } else if (pos == text_.size() && !text_.empty() && text_.back() != '\n') {
    lead = nl;  // the last line had no line end
  }
  std::string line = lead + indent_of(indent_line) + toml_key(parts, owner->parts.size()) + separator(from, to) +
                     render(Type::Table, 0, Type::Table, 0, value) + tail;
  splice(pos, pos, line, path);
}

void TomlDocument::append_table(const std::vector<PathPart>& parts, const Value& value, const std::string& path) {
  std::string nl = newline();
  std::string add;
  if (!text_.empty() && text_.back() != '\n') add += nl;
  if (!text_.empty()) add += nl;
  std::vector<PathPart> table(parts.begin(), parts.end() - 1);
  add += "[" + toml_key(table, 0) + "]" + nl + toml_key(parts, parts.size() - 1) + separator(0, text_.size()) +
         render(Type::Table, 0, Type::Table, 0, value) + nl;
  splice(text_.size(), text_.size(), add, path);
}

// ---- Removing ----------------------------------------------------------------

size_t TomlDocument::member_start(const Node& n) const {
  size_t d = n.parts.size() - 1;
  while (d > 0 && node(n.parts, d)->type != Type::InlineTable) --d;
  const Node* container = node(n.parts, d);
  // Inline tables hold no comments or line breaks, so only blanks and the
  // comma lie between the previous member's value and this member's key.
  size_t p = container->begin + 1;
  for (const Node& m : nodes_) {
    if (m.begin > container->begin && m.end <= n.begin && m.type != Type::Table) p = std::max(p, m.end);
  }
  while (p < n.begin && (is_blank(text_[p]) || text_[p] == ',')) ++p;
  return p;
}

std::pair<size_t, size_t> TomlDocument::member_span(const Node& n) const {
  size_t start = n.parts.back().index >= 0 ? n.begin : member_start(n);
  size_t stop = n.end;
  size_t after = stop;
  while (after < text_.size() && is_blank(text_[after])) ++after;
  if (after < text_.size() && text_[after] == ',') {
    stop = after + 1;
    while (stop < text_.size() && is_blank(text_[stop])) ++stop;
  } else {
    size_t before = start;  // the last member takes the comma before it
    while (before > 0 && is_blank(text_[before - 1])) --before;
    if (before > 0 && text_[before - 1] == ',') start = before - 1;
  }
  // A member alone on its line (a multi-line array) takes the line with it.
  size_t ls = line_start(start), le = line_end(stop);
  auto blank = [&](size_t b, size_t e) {
    return std::all_of(text_.begin() + b, text_.begin() + e, [](char c) { return is_blank(c) || c == '\r'; });
  };
  if (blank(ls, start) && blank(stop, le)) return {ls, std::min(le + 1, text_.size())};
  return {start, stop};
}

bool TomlDocument::remove(std::string_view path) {
  std::vector<PathPart> parts = parse_path(path);
  const Node* n = node(join_key_path(parts));
  if (!n || n->parts.empty()) return false;
  std::string key(path);
  bool key_value = equals_before(text_, n->begin) != std::string::npos;
  if (!n->in_brackets && !key_value) {
    throw InputError({name_, n->line, n->column}, key,
                     "is " + type_name(n->type) + "; remove the keys inside it instead");
  }
  size_t begin, end;
  if (n->in_brackets) {
    std::tie(begin, end) = member_span(*n);
  } else {
    begin = line_start(n->begin);
    end = std::min(line_end(n->end) + 1, text_.size());
  }
  splice(begin, end, "", key);
  return true;
}

}  // namespace attune::recipe
