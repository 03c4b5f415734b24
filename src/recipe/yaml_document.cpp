#include "attune/recipe/yaml_document.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "attune/recipe/key_path.h"
#include "attune/util/text.h"

namespace attune::recipe {

namespace yaml_impl {
namespace {

constexpr size_t npos = std::string::npos;

// ---------------------------------------------------------------------------
// Source: the file's bytes with line bookkeeping and the scanners that find
// where a value ends (yaml-cpp only tells us where a node starts).
// ---------------------------------------------------------------------------

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_space(char c) { return is_blank(c) || c == '\r' || c == '\n'; }
bool is_flow_end(char c) { return c == ',' || c == ']' || c == '}'; }

class Source {
 public:
  explicit Source(const std::string& text) : text_(text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }

  const std::string& text() const { return text_; }
  size_t size() const { return text_.size(); }
  char at(size_t p) const { return p < text_.size() ? text_[p] : '\0'; }
  std::string slice(size_t b, size_t e) const { return text_.substr(b, e - b); }

  int line_of(size_t p) const {  // 1-based
    return static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), p) - starts_.begin());
  }
  size_t line_start(size_t p) const { return starts_[line_of(p) - 1]; }
  int col_of(size_t p) const { return static_cast<int>(p - line_start(p)); }  // 0-based

  // Where p's line ends, before its "\n" or "\r\n".
  size_t line_end(size_t p) const {
    size_t e = text_.find('\n', p);
    if (e == npos) return text_.size();
    return (e > p && text_[e - 1] == '\r') ? e - 1 : e;
  }
  // Just past the newline that ends p's line (or the end of the text).
  size_t next_line(size_t p) const {
    size_t e = text_.find('\n', p);
    return e == npos ? text_.size() : e + 1;
  }

  size_t skip_blank(size_t p) const {
    while (is_blank(at(p))) ++p;
    return p;
  }
  size_t skip_ws_comments(size_t p) const {
    for (;;) {
      while (is_space(at(p))) ++p;
      if (at(p) != '#') return p;
      p = line_end(p);
    }
  }
  bool only_blanks(size_t b, size_t e) const {
    for (size_t i = b; i < e; ++i) {
      if (!is_blank(text_[i])) return false;
    }
    return true;
  }

  // An anchor/alias name or a tag: up to whitespace (or a flow indicator).
  size_t token_end(size_t p, bool in_flow) const {
    ++p;
    while (p < size() && !is_space(text_[p]) && !(in_flow && is_flow_end(text_[p]))) ++p;
    return p;
  }
  // Skips node properties (`&anchor`, `!tag`) and the space after them.
  size_t skip_props(size_t p) const {
    while (at(p) == '&' || at(p) == '!') p = skip_ws_comments(token_end(p, false));
    return p;
  }

  // Plain scalar: to end of line or ` #`; in flow context also to , ] }.
  size_t plain_end(size_t p, bool in_flow) const {
    size_t e = p;
    for (; e < size(); ++e) {
      char c = text_[e];
      if (c == '\n' || c == '\r') break;
      if (c == '#' && e > p && is_blank(text_[e - 1])) break;
      if (in_flow && is_flow_end(c)) break;
    }
    while (e > p && is_blank(text_[e - 1])) --e;
    return e;
  }

  // A plain scalar continued on more-indented lines (`a: one\n  two`).
  size_t multiline_plain_end(size_t p, int owner_col) const {
    size_t end = plain_end(p, false);
    if (at(skip_blank(end)) == '#') return end;
    for (size_t q = next_line(end); q < size(); q = next_line(q)) {
      size_t c = skip_blank(q);
      if (c == line_end(q)) continue;  // blank lines may sit inside the scalar
      if (static_cast<int>(c - q) <= owner_col || at(c) == '#') break;
      end = plain_end(c, false);
      if (at(skip_blank(end)) == '#') break;
    }
    return end;
  }

  // Quoted scalar: past the closing quote ('' and \" are escapes).
  size_t quoted_end(size_t p) const {
    char q = text_[p];
    for (size_t i = p + 1; i < size(); ++i) {
      if (q == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == q) {
        if (q == '\'' && at(i + 1) == '\'') {
          ++i;
        } else {
          return i + 1;
        }
      }
    }
    return size();  // yaml-cpp accepts a quote left open at the end of the file
  }

  // Flow collection: past the matching bracket, skipping quoted scalars and comments.
  size_t bracket_end(size_t p) const {
    int depth = 0;
    char prev = '[';  // last significant character: a quote only opens a scalar after [ { , :
    for (size_t i = p; i < size(); ++i) {
      char c = text_[i];
      if ((c == '"' || c == '\'') && std::strchr("[{,:", prev) != nullptr) {
        i = quoted_end(i) - 1;
      } else if (c == '#' && i > p && is_space(text_[i - 1])) {
        i = line_end(i) - 1;
        continue;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (--depth == 0) return i + 1;
      }
      if (!is_space(c)) prev = c;
    }
    return size();
  }

  // A block (literal/folded scalar, or a block node that starts on a later
  // line): the last non-blank line indented deeper than the owning key. With
  // `dash_ok`, `- ` lines at the key's own column count too (a block sequence
  // may sit at its key's indentation).
  size_t indented_block_end(size_t p, int owner_col, bool dash_ok) const {
    size_t end = line_end(p);
    for (size_t q = next_line(p); q < size(); q = next_line(q)) {
      size_t c = skip_blank(q);
      size_t le = line_end(q);
      if (c == le) continue;
      int indent = static_cast<int>(c - q);
      bool dash = dash_ok && indent == owner_col && at(c) == '-' && is_space(at(c + 1));
      if (indent <= owner_col && !dash) break;
      end = le;
    }
    return end;
  }

  // A plain or quoted key: up to the `:` that ends it.
  size_t key_end(size_t p, bool in_flow) const {
    if (at(p) == '"' || at(p) == '\'') return quoted_end(p);
    size_t e = p;
    for (; e < size(); ++e) {
      char c = text_[e];
      if (c == '\n' || c == '\r') break;
      if (in_flow && is_flow_end(c)) break;
      char n = at(e + 1);
      if (c == ':' && (n == '\0' || is_space(n) || (in_flow && is_flow_end(n)))) break;
    }
    while (e > p && is_blank(text_[e - 1])) --e;
    return e;
  }

 private:
  const std::string& text_;
  std::vector<size_t> starts_;
};

}  // namespace

// ---------------------------------------------------------------------------
// The index: one record per node reachable by a key path.
// ---------------------------------------------------------------------------

enum class Shape { Scalar, BlockScalar, Null, List, EmptyMap, Map, Seq };

struct NodeRec {
  std::string path;
  std::string parent;      // path of the containing map or sequence
  Shape shape = Shape::Null;
  bool own = true;         // false: reached through an alias or merge key, so its bytes belong to an anchor
  bool flow = false;       // Map/Seq/List written in flow style
  bool in_flow = false;    // lies inside a flow collection (changes what needs quoting)
  size_t begin = 0;        // the value's bytes, where it is actually written
  size_t end = 0;
  size_t alias_begin = npos;  // the `*name` token when this own node is an alias
  size_t alias_end = npos;
  size_t elem_pos = npos;     // start of this element in its parent: key, `-`, or flow item
  size_t key_pos = npos;      // map children: the key
  size_t colon_end = npos;    // map children: just past the `:`
  size_t subtree_end = 0;     // own nodes: end of everything written for this node
  int col = 0;                // column of the owning key or `-`
  int child_col = -1;         // block Map: column of its keys
  size_t content_end = 0;     // Map/Seq: end of the last own element
  std::vector<std::pair<size_t, size_t>> elems;  // Map/Seq: own elements (start, end)
  char quote = 0;
  std::vector<char> item_quotes;  // List: quote char of each item
  Value literal;              // as written
  Value value;                // with `${...}` resolved
  std::string raw;
  int line = 0;

  bool leaf() const { return shape != Shape::Map && shape != Shape::Seq; }
  bool is_alias() const { return alias_begin != npos; }
};

}  // namespace yaml_impl

struct YamlIndex {
  std::vector<yaml_impl::NodeRec> nodes;  // file order, parents first; nodes[0] is the root
  std::unordered_map<std::string, size_t> by_path;
  int indent_step = 2;
  bool capital_bools = false;
  std::string eol = "\n";

  const yaml_impl::NodeRec* find(const std::string& path) const {
    auto it = by_path.find(path);
    return it == by_path.end() ? nullptr : &nodes[it->second];
  }
  const yaml_impl::NodeRec& root() const { return nodes[0]; }
};

namespace yaml_impl {
namespace {

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::Scalar: return "a scalar";
    case Shape::BlockScalar: return "a block scalar";
    case Shape::Null: return "null";
    case Shape::List: return "a list";
    case Shape::EmptyMap: return "an empty mapping";
    case Shape::Map: return "a mapping";
    case Shape::Seq: return "a list";
  }
  return "?";
}

// Hydra/OmegaConf spells a value that is entirely one interpolation `${path}`.
std::optional<std::string> interpolation_path(const Value& v) {
  const std::string& t = v.text;
  if (v.kind != ValueKind::String || t.size() < 4 || t.compare(0, 2, "${") != 0 || t.back() != '}') {
    return std::nullopt;
  }
  std::string inner = t.substr(2, t.size() - 3);
  if (inner.find_first_of("${}") != std::string::npos) return std::nullopt;
  return inner;
}

// ---------------------------------------------------------------------------
// Indexer: walks yaml-cpp's tree in file order and records every node.
// ---------------------------------------------------------------------------

// Where a value sits: its path and what owns it.
struct Slot {
  std::string path;
  std::string parent;
  bool own = true;
  bool in_flow = false;
  int col = -1;             // column of the owning key or `-`
  size_t after = 0;         // where the value's text may start (past `:`, `-`, `,`)
  size_t elem_pos = npos;
  size_t key_pos = npos;
  size_t colon_end = npos;
};

struct KeyInfo {
  std::string text;
  bool plain = true;
  size_t pos = 0;
  size_t colon_end = 0;
};

struct ItemScan {  // one list item
  Value value;
  char quote = 0;
  size_t end = 0;  // end of the item where the list is written
};

struct ScalarScan {
  size_t end = 0;
  char quote = 0;
  bool block = false;
  Value literal;
};

struct MergedPair {
  std::string key;
  YAML::Node k, v;
  bool in_flow = false;
};

constexpr int kMaxDepth = 200;  // guards recursive anchors (`a: &x [*x]`)

class Indexer {
 public:
  Indexer(const std::string& name, const std::string& text)
      : name_(name), src_(text), ix_(std::make_shared<YamlIndex>()) {
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) bom_ = 3;  // yaml-cpp's marks skip a BOM
    if (text.find("\r\n") != std::string::npos) ix_->eol = "\r\n";
  }

  std::shared_ptr<YamlIndex> build() {
    YAML::Node root = load();
    if (!root.IsMap()) {
      int line = root.Mark().is_null() ? 0 : root.Mark().line + 1;
      throw InputError({name_, line, 0}, "", "expected a mapping of settings at the top level");
    }
    Slot s;
    walk(root, s, 0);
    detect_indent_step();
    detect_bool_style();
    resolve_all();
    return ix_;
  }

 private:
  YAML::Node load() {
    try {
      return YAML::Load(src_.text());
    } catch (const YAML::Exception& e) {
      int line = e.mark.is_null() ? 0 : e.mark.line + 1;
      int col = e.mark.is_null() ? 0 : e.mark.column + 1;
      throw InputError({name_, line, col}, "", "invalid YAML: " + e.msg);
    }
  }

  NodeRec& rec(size_t i) { return ix_->nodes[i]; }
  SourceLocation loc(size_t pos) const { return {name_, src_.line_of(pos), src_.col_of(pos) + 1}; }

  size_t mark_pos(const YAML::Node& n) const {
    int p = n.Mark().pos;
    return p < 0 ? npos : static_cast<size_t>(p) + bom_;
  }
  size_t value_start(const YAML::Node& n) const { return src_.skip_props(mark_pos(n)); }

  // yaml-cpp hands out an alias as the anchored node itself (same mark), and an
  // anchor always comes first in the file, so a node seen before is an alias.
  bool is_alias(const YAML::Node& n, const Slot& s) const {
    return s.own && !n.IsNull() && seen_.count(mark_pos(n)) > 0;
  }

  size_t new_rec(const Slot& s, Shape shape) {
    NodeRec r;
    r.path = s.path;
    r.parent = s.parent;
    r.shape = shape;
    r.own = s.own;
    r.in_flow = s.in_flow;
    r.col = s.col;
    r.elem_pos = s.elem_pos;
    r.key_pos = s.key_pos;
    r.colon_end = s.colon_end;
    ix_->nodes.push_back(std::move(r));
    ix_->by_path.emplace(s.path, ix_->nodes.size() - 1);
    return ix_->nodes.size() - 1;
  }

  void finish_leaf(size_t r, size_t begin, size_t end, Value literal) {
    NodeRec& x = rec(r);
    x.begin = begin;
    x.end = end;
    x.raw = src_.slice(begin, end);
    x.line = src_.line_of(begin);
    x.literal = std::move(literal);
    x.subtree_end = end;
  }

  size_t walk(const YAML::Node& n, const Slot& s, int depth) {
    if (depth > kMaxDepth) throw InputError({name_, 0, 0}, s.path, "aliases nest too deeply (recursive anchor?)");
    if (is_alias(n, s)) return walk_alias(n, s, depth);
    if (n.IsNull()) return add_null(s);
    size_t v = value_start(n);
    if (s.own) seen_.insert(mark_pos(n));
    if (n.IsScalar()) return add_scalar(n, s, v);
    if (n.IsSequence()) return walk_seq(n, s, v, depth);
    return walk_map(n, s, v, depth);
  }

  // `key: *name`: the values are the anchor's, but the token is ours to replace.
  size_t walk_alias(const YAML::Node& n, const Slot& s, int depth) {
    size_t a = src_.skip_ws_comments(s.after);
    if (src_.at(a) != '*') throw InputError(loc(a), s.path, "cannot locate the alias of this value");
    Slot inner = s;
    inner.own = false;
    size_t r = walk(n, inner, depth + 1);
    NodeRec& x = rec(r);
    x.own = true;
    x.alias_begin = a;
    x.alias_end = src_.token_end(a, s.in_flow);
    x.subtree_end = x.alias_end;
    return r;
  }

  // Past any `&anchor`/`!tag` on the value's line.
  size_t skip_inline_props(size_t p) const {
    for (;;) {
      size_t q = src_.skip_blank(p);
      if (src_.at(q) != '&' && src_.at(q) != '!') return p;
      p = src_.token_end(q, false);
    }
  }
  bool value_absent(size_t p, bool in_flow) const {
    char c = src_.at(p);
    return c == '\0' || c == '\r' || c == '\n' || c == '#' || (in_flow && is_flow_end(c));
  }

  // `key:` with nothing, or an explicit `null` / `~`.
  size_t add_null(const Slot& s) {
    size_t r = new_rec(s, Shape::Null);
    size_t p = skip_inline_props(s.after);
    size_t q = src_.skip_blank(p);
    if (src_.at(q) == '*') {  // alias of a null (yaml-cpp gives nulls no usable mark)
      finish_leaf(r, p, p, Value::null());
      rec(r).alias_begin = q;
      rec(r).alias_end = rec(r).subtree_end = src_.token_end(q, s.in_flow);
    } else if (value_absent(q, s.in_flow)) {
      finish_leaf(r, p, p, Value::null());
    } else {
      size_t e = src_.plain_end(q, s.in_flow);
      finish_leaf(r, q, e, Value::parse(src_.slice(q, e)));
    }
    return r;
  }

  static Value plain_value(const YAML::Node& n) {
    const std::string& tag = n.Tag();
    bool str_tag = tag.size() >= 4 && tag.compare(tag.size() - 4, 4, ":str") == 0;
    return str_tag ? Value::string(n.Scalar()) : Value::parse(n.Scalar());
  }

  ScalarScan scan_scalar(const YAML::Node& n, size_t v, const Slot& s) const {
    char c = src_.at(v);
    if (c == '"' || c == '\'') return {src_.quoted_end(v), c, false, Value::string(n.Scalar())};
    if (!s.in_flow && (c == '|' || c == '>')) {
      return {src_.indented_block_end(v, s.col, false), 0, true, Value::string(n.Scalar())};
    }
    size_t e = src_.plain_end(v, s.in_flow);
    if (!s.in_flow && src_.slice(v, e) != n.Scalar()) e = src_.multiline_plain_end(v, s.col);
    return {e, 0, false, plain_value(n)};
  }

  size_t add_scalar(const YAML::Node& n, const Slot& s, size_t v) {
    ScalarScan sc = scan_scalar(n, v, s);
    size_t r = new_rec(s, sc.block ? Shape::BlockScalar : Shape::Scalar);
    finish_leaf(r, v, sc.end, std::move(sc.literal));
    rec(r).quote = sc.quote;
    return r;
  }

  // The slot of the next sequence item, found from the end of the previous one.
  Slot item_slot(const Slot& s, size_t pos, bool flow, int index) const {
    Slot is;
    is.path = append_index(s.path, index);
    is.parent = s.path;
    is.own = s.own;
    is.in_flow = s.in_flow || flow;
    size_t p = src_.skip_ws_comments(pos);
    bool marker = flow ? (src_.at(p) == '[' || src_.at(p) == ',') : src_.at(p) == '-';
    is.after = marker ? p + 1 : p;
    is.elem_pos = flow ? src_.skip_ws_comments(is.after) : p;
    is.col = flow ? s.col : src_.col_of(p);
    return is;
  }

  ItemScan scan_item(const YAML::Node& n, const Slot& is) {
    if (is_alias(n, is)) {
      Slot inner = is;
      inner.own = false;
      ItemScan anchored = scan_item(n, inner);
      size_t a = src_.skip_ws_comments(is.after);
      return {anchored.value, anchored.quote, src_.token_end(a, is.in_flow)};
    }
    if (n.IsNull()) {
      size_t q = src_.skip_blank(skip_inline_props(is.after));
      if (value_absent(q, is.in_flow)) return {Value::null(), 0, is.after};
      size_t e = src_.plain_end(q, is.in_flow);
      return {Value::parse(src_.slice(q, e)), 0, e};
    }
    size_t v = value_start(n);
    if (is.own) seen_.insert(mark_pos(n));
    ScalarScan sc = scan_scalar(n, v, is);
    return {std::move(sc.literal), sc.quote, sc.end};
  }

  static bool all_scalars(const YAML::Node& n) {
    for (const auto& item : n) {
      if (!item.IsScalar() && !item.IsNull()) return false;
    }
    return true;
  }

  // A sequence of scalars is one setting: a List.
  size_t add_list(const YAML::Node& n, const Slot& s, size_t v) {
    bool flow = src_.at(v) == '[';
    size_t r = new_rec(s, Shape::List);
    std::vector<Value> items;
    std::vector<char> quotes;
    size_t pos = v;
    int i = 0;
    for (const auto& item : n) {
      ItemScan sc = scan_item(item, item_slot(s, pos, flow, i++));
      items.push_back(std::move(sc.value));
      quotes.push_back(sc.quote);
      pos = sc.end;
    }
    finish_leaf(r, v, flow ? src_.bracket_end(v) : pos, Value::list(std::move(items)));
    rec(r).flow = flow;
    rec(r).item_quotes = std::move(quotes);
    return r;
  }

  size_t walk_seq(const YAML::Node& n, const Slot& s, size_t v, int depth) {
    if (all_scalars(n)) return add_list(n, s, v);
    bool flow = src_.at(v) == '[';
    size_t r = new_rec(s, Shape::Seq);
    size_t pos = v;
    int i = 0;
    for (const auto& item : n) {
      Slot is = item_slot(s, pos, flow, i++);
      size_t c = walk(item, is, depth + 1);
      pos = rec(c).subtree_end;
      rec(r).elems.emplace_back(is.elem_pos, pos);
    }
    NodeRec& x = rec(r);
    x.flow = flow;
    x.begin = v;
    x.line = src_.line_of(v);
    x.content_end = pos;
    x.subtree_end = flow ? src_.bracket_end(v) : pos;
    return r;
  }

  KeyInfo locate_key(const YAML::Node& k, bool in_flow) const {
    if (!k.IsScalar()) {
      throw InputError(loc(mark_pos(k) == npos ? 0 : mark_pos(k)), "", "only scalar keys are supported");
    }
    size_t p = value_start(k);
    size_t q = src_.skip_blank(src_.key_end(p, in_flow));
    size_t colon_end = src_.at(q) == ':' ? q + 1 : q;
    return {k.Scalar(), k.Tag() == "?", p, colon_end};
  }
  static bool is_merge(const KeyInfo& k) { return k.plain && k.text == "<<"; }

  // Explicit keys of a map; duplicates are an error (yaml-cpp keeps both).
  std::unordered_set<std::string> explicit_keys(const YAML::Node& n, const Slot& s, bool in_flow) const {
    std::unordered_map<std::string, size_t> first;
    std::unordered_set<std::string> keys;
    for (auto it = n.begin(); it != n.end(); ++it) {
      KeyInfo k = locate_key(it->first, in_flow);
      auto [pos, fresh] = first.emplace(k.text, k.pos);
      if (!fresh && s.own) {
        throw InputError(loc(k.pos), append_key(s.path, k.text),
                         "duplicate key (first defined at line " + std::to_string(src_.line_of(pos->second)) + ")");
      }
      if (!is_merge(k)) keys.insert(k.text);
    }
    return keys;
  }

  Slot key_slot(const Slot& map, const KeyInfo& k, bool in_flow) const {
    Slot c;
    c.path = append_key(map.path, k.text);
    c.parent = map.path;
    c.own = map.own;
    c.in_flow = in_flow;
    c.col = src_.col_of(k.pos);
    c.after = c.colon_end = k.colon_end;
    c.elem_pos = c.key_pos = k.pos;
    return c;
  }

  size_t add_empty_map(const Slot& s, size_t v) {
    size_t r = new_rec(s, Shape::EmptyMap);
    finish_leaf(r, v, src_.bracket_end(v), Value{ValueKind::Null, "{}", {}});
    rec(r).flow = true;
    return r;
  }

  size_t walk_map(const YAML::Node& n, const Slot& s, size_t v, int depth) {
    bool flow = src_.at(v) == '{';
    if (flow && n.size() == 0 && !s.path.empty()) return add_empty_map(s, v);
    bool in_flow = s.in_flow || flow;
    std::unordered_set<std::string> keys = explicit_keys(n, s, in_flow);
    std::unordered_set<std::string> merged;
    size_t r = new_rec(s, Shape::Map);
    size_t last = flow ? v + 1 : v;
    for (auto it = n.begin(); it != n.end(); ++it) {
      KeyInfo k = locate_key(it->first, in_flow);
      if (rec(r).child_col < 0) rec(r).child_col = src_.col_of(k.pos);
      if (is_merge(k)) {
        last = merge_end(k, in_flow);
        merge_into(it->second, s, keys, merged, depth);
      } else {
        last = rec(walk(it->second, key_slot(s, k, in_flow), depth + 1)).subtree_end;
      }
      rec(r).elems.emplace_back(k.pos, last);
    }
    NodeRec& x = rec(r);
    x.flow = flow;
    x.begin = v;
    x.line = src_.line_of(v);
    x.content_end = last;
    x.subtree_end = flow ? src_.bracket_end(v) : last;
    return r;
  }

  // Where a `<<: ...` entry ends in the text.
  size_t merge_end(const KeyInfo& k, bool in_flow) const {
    size_t p = src_.skip_ws_comments(k.colon_end);
    if (src_.at(p) == '*') return src_.token_end(p, in_flow);
    if (src_.at(p) == '[' || src_.at(p) == '{') return src_.bracket_end(p);
    return src_.indented_block_end(k.colon_end, src_.col_of(k.pos), true);
  }

  static std::vector<YAML::Node> merged_maps(const YAML::Node& v) {
    std::vector<YAML::Node> maps;
    if (v.IsMap()) maps.push_back(v);
    if (v.IsSequence()) {
      for (const auto& item : v) {
        if (item.IsMap()) maps.push_back(item);
      }
    }
    return maps;
  }

  // A map's keys with merge semantics applied (explicit keys win, then earlier merges).
  std::vector<MergedPair> effective_pairs(const YAML::Node& m, int depth) const {
    if (depth > kMaxDepth) throw InputError({name_, 0, 0}, "", "merge keys nest too deeply (recursive anchor?)");
    bool flow = src_.at(value_start(m)) == '{';
    std::vector<MergedPair> out;
    std::unordered_set<std::string> have;
    std::vector<YAML::Node> merges;
    for (auto it = m.begin(); it != m.end(); ++it) {
      KeyInfo k = locate_key(it->first, flow);
      if (is_merge(k)) {
        merges.push_back(it->second);
      } else if (have.insert(k.text).second) {
        out.push_back({k.text, it->first, it->second, flow});
      }
    }
    for (const auto& mv : merges) {
      for (const auto& mm : merged_maps(mv)) {
        for (auto& p : effective_pairs(mm, depth + 1)) {
          if (have.insert(p.key).second) out.push_back(std::move(p));
        }
      }
    }
    return out;
  }

  // yaml-cpp 0.7 leaves `<<` as an ordinary key, so merge semantics are ours:
  // merged keys join the map's path unless the map sets them itself.
  void merge_into(const YAML::Node& v, const Slot& map, const std::unordered_set<std::string>& keys,
                  std::unordered_set<std::string>& merged, int depth) {
    Slot anchored = map;
    anchored.own = false;
    for (const auto& m : merged_maps(v)) {
      for (const auto& p : effective_pairs(m, depth + 1)) {
        if (keys.count(p.key) || !merged.insert(p.key).second) continue;
        KeyInfo k = locate_key(p.k, p.in_flow);
        walk(p.v, key_slot(anchored, k, p.in_flow), depth + 1);
      }
    }
  }

  // The file's indentation step: how far nested block maps sit past their key.
  void detect_indent_step() {
    std::map<int, int> votes;
    for (const NodeRec& x : ix_->nodes) {
      if (x.shape != Shape::Map || x.flow || !x.own || x.key_pos == npos || x.child_col <= x.col) continue;
      ++votes[x.child_col - x.col];
    }
    int best = 0;
    for (const auto& [step, n] : votes) {
      if (n > best) {
        best = n;
        ix_->indent_step = step;
      }
    }
  }

  void detect_bool_style() {
    int capital = 0, lower = 0;
    for (const NodeRec& x : ix_->nodes) {
      if (!x.own || x.literal.kind != ValueKind::Bool || x.literal.text.empty()) continue;
      (std::isupper(static_cast<unsigned char>(x.literal.text[0])) ? capital : lower)++;
    }
    ix_->capital_bools = capital > lower;
  }

  // --- interpolation -------------------------------------------------------

  enum State : char { kTodo, kActive, kDone, kFailed };

  void resolve_all() {
    for (NodeRec& x : ix_->nodes) x.value = x.literal;
    std::vector<char> state(ix_->nodes.size(), kTodo);
    for (size_t i = 0; i < ix_->nodes.size(); ++i) {
      if (ix_->nodes[i].leaf()) resolve(i, state);
    }
  }

  // True when node i ends up with a concrete value.
  bool resolve(size_t i, std::vector<char>& state) {
    if (state[i] != kTodo) return state[i] == kDone;
    auto inner = interpolation_path(ix_->nodes[i].literal);
    if (!inner) {
      state[i] = kDone;
      return true;
    }
    state[i] = kActive;  // a cycle reaches an active node and fails
    std::optional<size_t> t = target_of(ix_->nodes[i], *inner);
    bool ok = t && resolve(*t, state);
    if (ok) ix_->nodes[i].value = ix_->nodes[*t].value;
    state[i] = ok ? kDone : kFailed;
    return ok;
  }

  std::optional<size_t> target_of(const NodeRec& x, const std::string& inner) const {
    std::vector<std::vector<PathPart>> candidates;
    try {
      if (inner[0] == '.') {
        candidates.push_back(relative_target(x, inner));
      } else {
        auto parts = parse_key_path(inner);
        candidates.push_back(parts);
        // HyperPod writes `${recipes.x}`, NeMo-1 `${training.x}`: the file is one level down.
        if (parts.size() > 1) candidates.emplace_back(parts.begin() + 1, parts.end());
      }
    } catch (const std::invalid_argument&) {
      return std::nullopt;
    }
    for (const auto& c : candidates) {
      if (c.empty()) continue;
      auto it = ix_->by_path.find(join_key_path(c));
      if (it != ix_->by_path.end() && ix_->nodes[it->second].leaf()) return it->second;
    }
    return std::nullopt;
  }

  // `${.x}` is a sibling, `${..x}` a key of the parent map, and so on.
  static std::vector<PathPart> relative_target(const NodeRec& x, const std::string& inner) {
    size_t dots = inner.find_first_not_of('.');
    if (dots == std::string::npos) return {};
    std::vector<PathPart> parts = x.parent.empty() ? std::vector<PathPart>{} : parse_key_path(x.parent);
    if (dots - 1 > parts.size()) return {};
    parts.resize(parts.size() - (dots - 1));
    for (auto& p : parse_key_path(inner.substr(dots))) parts.push_back(std::move(p));
    return parts;
  }

  const std::string& name_;
  Source src_;
  std::shared_ptr<YamlIndex> ix_;
  size_t bom_ = 0;
  std::unordered_set<size_t> seen_;  // marks of nodes walked in place, to spot aliases
};

std::shared_ptr<const YamlIndex> build_index(const std::string& name, const std::string& text) {
  return Indexer(name, text).build();
}

// ---------------------------------------------------------------------------
// Formatting values the way the file writes them.
// ---------------------------------------------------------------------------

struct Style {
  char quote = 0;          // the old value's quote char
  bool in_flow = false;
  std::string old_bool;    // the old value's spelling when it was a bool
  bool capital = false;    // the file mostly writes True/False
};

// Would this text, written plain, be misread or break the YAML?
bool unsafe_plain(const std::string& s, bool in_flow) {
  if (s.empty() || is_blank(s.front()) || is_blank(s.back())) return true;
  if (std::strchr(",[]{}#&*!|>'\"%@`", s[0]) != nullptr) return true;
  if (std::strchr("-?:", s[0]) != nullptr && (s.size() == 1 || is_space(s[1]))) return true;
  if (s.compare(0, 3, "---") == 0 || s.compare(0, 3, "...") == 0 || s.back() == ':') return true;
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.find("\t#") != std::string::npos) {
    return true;
  }
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return true;
    if (in_flow && std::strchr(",[]{}", c) != nullptr) return true;
  }
  return false;
}

// A string written plain must also stay a string (`true`, `1`, `null`, YAML 1.1 `yes`).
bool needs_quotes(const std::string& s, bool in_flow) {
  if (unsafe_plain(s, in_flow) || Value::parse(s).kind != ValueKind::String) return true;
  static const char* const yaml11[] = {"yes", "no", "on", "off", "y", "n"};
  std::string l = to_lower(s);
  return std::any_of(std::begin(yaml11), std::end(yaml11), [&](const char* w) { return l == w; });
}

std::string double_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string quoted(const std::string& s, char q) {
  bool multiline = s.find_first_of("\r\n") != std::string::npos;
  if (q != '\'' || multiline) return double_quoted(s);  // single quotes cannot escape a newline
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string bool_text(const Value& v, const Style& st) {
  auto b = v.as_bool();
  if (!b) return v.text;
  std::string t = *b ? "true" : "false";
  const std::string& old = st.old_bool;
  auto is_upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  bool upper = old.size() > 1 && std::all_of(old.begin(), old.end(), is_upper);
  bool capital = old.empty() ? st.capital : std::isupper(static_cast<unsigned char>(old[0])) != 0;
  if (upper) return *b ? "TRUE" : "FALSE";
  if (capital) t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
  return t;
}

std::string format_value(const Value& v, const Style& st);

std::string flow_list(const Value& v, bool capital) {
  std::string out = "[";
  for (size_t i = 0; i < v.items.size(); ++i) {
    if (i) out += ", ";
    out += format_value(v.items[i], Style{0, true, "", capital});
  }
  return out + "]";
}

std::string format_value(const Value& v, const Style& st) {
  auto keep_quote = [&](const std::string& s) { return st.quote ? quoted(s, st.quote) : s; };
  switch (v.kind) {
    case ValueKind::List: return flow_list(v, st.capital);
    case ValueKind::Null: {
      static const char* const spellings[] = {"null", "Null", "NULL", "~"};
      bool yaml = std::any_of(std::begin(spellings), std::end(spellings), [&](const char* w) { return v.text == w; });
      return yaml ? v.text : "null";
    }
    case ValueKind::Bool: return keep_quote(bool_text(v, st));
    case ValueKind::Int:
    case ValueKind::Float: return keep_quote(v.text);
    case ValueKind::String:
      if (st.quote) return quoted(v.text, st.quote);
      return needs_quotes(v.text, st.in_flow) ? double_quoted(v.text) : v.text;
  }
  return v.text;
}

std::string key_text(const std::string& key, bool in_flow) {
  return unsafe_plain(key, in_flow) ? double_quoted(key) : key;
}

// ---------------------------------------------------------------------------
// Editor: computes the new text for one set() or remove().
// ---------------------------------------------------------------------------

std::string splice(const std::string& t, size_t b, size_t e, const std::string& with) {
  std::string out;
  out.reserve(t.size() + with.size());
  out.append(t, 0, b).append(with).append(t, e, std::string::npos);
  return out;
}

class Editor {
 public:
  Editor(const YamlIndex& ix, const std::string& text, const std::string& name)
      : ix_(ix), text_(text), src_(text), name_(name) {}

  std::string set(const std::vector<PathPart>& parts, const std::string& path, const Value& v) const {
    const NodeRec* x = ix_.find(path);
    if (x && x->own && x->leaf()) return replace_leaf(*x, v);
    if (x && x->own) {
      fail(*x, path, std::string("is ") + shape_name(x->shape) + " with settings under it; set one of those instead");
    }
    return insert(parts, path, v);
  }

  std::optional<std::string> remove(const std::string& path) const {
    const NodeRec* x = ix_.find(path);
    if (!x || x->path.empty()) return std::nullopt;
    if (!x->own) {
      fail(*x, path, "comes from an anchor or merge key (value at line " + std::to_string(x->line) +
                         "); remove it there, or set it to override it here");
    }
    const NodeRec& parent = *ix_.find(x->parent);
    if (parent.flow) return remove_flow(parent, *x);
    if (x->key_pos != npos) return remove_block_key(parent, *x);
    return remove_block_item(*x);
  }

 private:
  [[noreturn]] void fail(const NodeRec& at, const std::string& path, const std::string& msg) const {
    throw InputError({name_, at.line, 0}, path, msg);
  }

  // Quotes around `${...}` were for the interpolation, not the type: a literal
  // that replaces it is written plain (quoted only if it must be).
  Style style_of(const NodeRec& x, bool keep_quote) const {
    if (interpolation_path(x.literal)) keep_quote = false;
    std::string old_bool = x.literal.kind == ValueKind::Bool ? x.literal.text : "";
    return Style{keep_quote ? x.quote : '\0', x.in_flow, old_bool, ix_.capital_bools};
  }
  Style plain_style(bool in_flow) const { return Style{0, in_flow, "", ix_.capital_bools}; }

  std::string replace_leaf(const NodeRec& x, const Value& v) const {
    if (x.is_alias()) {  // the anchor is shared: replace our `*name` with the literal
      return splice(text_, x.alias_begin, x.alias_end, format_value(v, style_of(x, false)));
    }
    switch (x.shape) {
      case Shape::Scalar: return splice(text_, x.begin, x.end, format_value(v, style_of(x, true)));
      case Shape::Null:
        if (x.begin == x.end) return splice(text_, x.begin, x.end, " " + format_value(v, plain_style(x.in_flow)));
        return splice(text_, x.begin, x.end, format_value(v, plain_style(x.in_flow)));
      case Shape::List: return replace_list(x, v);
      default: return splice(text_, x.begin, x.end, format_value(v, plain_style(x.in_flow)));
    }
  }

  // A flow list stays flow; a block list is rewritten item by item at its indentation.
  std::string replace_list(const NodeRec& x, const Value& v) const {
    if (x.flow || x.in_flow) return splice(text_, x.begin, x.end, format_value(v, plain_style(x.in_flow)));
    if (v.kind == ValueKind::List && !v.items.empty()) {
      return splice(text_, x.begin, x.end, block_list(v, x));
    }
    if (x.colon_end == npos) fail(x, x.path, "cannot replace this nested block list with a scalar or []");
    return splice(text_, x.colon_end, x.end, " " + format_value(v, plain_style(false)));
  }

  std::string block_list(const Value& v, const NodeRec& x) const {
    std::string indent(static_cast<size_t>(src_.col_of(x.begin)), ' ');
    std::string out;
    for (size_t i = 0; i < v.items.size(); ++i) {
      char q = i < x.item_quotes.size() ? x.item_quotes[i] : '\0';
      if (i) out += ix_.eol + indent;
      out += "- " + format_value(v.items[i], Style{q, false, "", ix_.capital_bools});
    }
    return out;
  }

  // --- adding keys ---------------------------------------------------------

  static std::string prefix_path(const std::vector<PathPart>& parts, size_t k) {
    return join_key_path(std::vector<PathPart>(parts.begin(), parts.begin() + static_cast<long>(k)));
  }

  // Adds the missing part of `path` under its deepest ancestor written in place
  // (which also overrides a key that only comes from an alias or merge key).
  std::string insert(const std::vector<PathPart>& parts, const std::string& path, const Value& v) const {
    size_t k = parts.size() - 1;
    const NodeRec* base = ix_.find(prefix_path(parts, k));
    while (!base || !base->own) base = ix_.find(prefix_path(parts, --k));
    std::vector<PathPart> rest(parts.begin() + static_cast<long>(k), parts.end());
    // Overriding one key deep inside merged content would drop its siblings.
    if (const NodeRec* shadow = rest.size() > 1 ? ix_.find(prefix_path(parts, k + 1)) : nullptr) {
      fail(*shadow, path, "lies inside a mapping or list that comes from an anchor or merge key (line " +
                              std::to_string(shadow->line) + "); add the override by hand");
    }
    for (const auto& p : rest) {
      if (p.index >= 0) fail(*base, path, "list item does not exist (attune does not add list items)");
    }
    return insert_under(*base, rest, path, v);
  }

  std::string insert_under(const NodeRec& base, const std::vector<PathPart>& rest, const std::string& path,
                           const Value& v) const {
    if (base.shape == Shape::Map && base.is_alias()) {
      // `k: *a` becomes `k: {<<: *a, key: value}`: the anchor stays shared and untouched.
      std::string alias = src_.slice(base.alias_begin, base.alias_end);
      return splice(text_, base.alias_begin, base.alias_end, "{<<: " + alias + ", " + flow_chain(rest, v) + "}");
    }
    if (base.shape == Shape::Map && base.flow) {
      bool empty = base.content_end <= base.begin + 1;
      return splice(text_, base.content_end, base.content_end, (empty ? "" : ", ") + flow_chain(rest, v));
    }
    if (base.shape == Shape::Map) return insert_block(base, rest, v);
    if (base.shape == Shape::EmptyMap && !base.is_alias()) {
      return splice(text_, base.begin + 1, base.begin + 1, flow_chain(rest, v));
    }
    if (base.shape == Shape::Null && !base.is_alias() && !base.in_flow && base.colon_end != npos) {
      return insert_under_null(base, rest, v);
    }
    std::string name = base.path.empty() ? "the top level" : "'" + base.path + "'";
    fail(base, path, name + " is " + shape_name(base.shape) + " (line " + std::to_string(base.line) +
                         "); cannot set a key inside it");
  }

  std::string flow_chain(const std::vector<PathPart>& rest, const Value& v) const {
    std::string out, close;
    for (size_t i = 0; i < rest.size(); ++i) {
      out += key_text(rest[i].key, true) + ": ";
      if (i + 1 < rest.size()) {
        out += "{";
        close += "}";
      }
    }
    return out + format_value(v, plain_style(true)) + close;
  }

  std::string block_chain(const std::vector<PathPart>& rest, int indent, const Value& v) const {
    std::string out;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (i) out += ix_.eol;
      out += std::string(static_cast<size_t>(indent) + i * static_cast<size_t>(ix_.indent_step), ' ');
      out += key_text(rest[i].key, false) + ":";
    }
    return out + " " + format_value(v, plain_style(false));
  }

  // After the map's last child (and that child's whole subtree), so comments and
  // blank lines that introduce the next section stay with it.
  std::string insert_block(const NodeRec& map, const std::vector<PathPart>& rest, const Value& v) const {
    int indent = map.child_col >= 0 ? map.child_col : map.col + ix_.indent_step;
    size_t at = src_.next_line(map.content_end);
    std::string lines = block_chain(rest, indent, v);
    bool newline_before = at == text_.size() && !text_.empty() && text_.back() != '\n';
    lines = newline_before ? ix_.eol + lines : lines + ix_.eol;
    return splice(text_, at, at, lines);
  }

  // `key:` (or `key: null`) becomes a mapping: its new children go on the next lines.
  std::string insert_under_null(const NodeRec& x, const std::vector<PathPart>& rest, const Value& v) const {
    std::string lines = ix_.eol + block_chain(rest, x.col + ix_.indent_step, v);
    size_t le = src_.line_end(x.colon_end);
    if (x.begin == x.end) return splice(text_, le, le, lines);
    std::string dropped = splice(text_, x.colon_end, x.end, "");  // the explicit `null`
    size_t shift = x.end - x.colon_end;
    return splice(dropped, le - shift, le - shift, lines);
  }

  // --- removing ------------------------------------------------------------

  static std::string erase(const std::string& t, size_t b, size_t e) { return splice(t, b, e, ""); }

  // Index of x among its parent's own elements.
  static size_t elem_index(const NodeRec& parent, const NodeRec& x) {
    for (size_t i = 0; i < parent.elems.size(); ++i) {
      if (parent.elems[i].first == x.elem_pos) return i;
    }
    return parent.elems.size();
  }

  std::string remove_flow(const NodeRec& parent, const NodeRec& x) const {
    size_t i = elem_index(parent, x);
    const auto& el = parent.elems;
    if (i + 1 < el.size()) return erase(text_, x.elem_pos, el[i + 1].first);
    if (i > 0 && i < el.size()) return erase(text_, el[i - 1].second, x.subtree_end);
    return erase(text_, x.elem_pos, x.subtree_end);
  }

  std::string remove_block_key(const NodeRec& parent, const NodeRec& x) const {
    size_t ls = src_.line_start(x.key_pos);
    if (src_.only_blanks(ls, x.key_pos)) return erase(text_, ls, src_.next_line(x.subtree_end));
    // First key on a `- ` line: pull the next key up onto it, or leave `{}`.
    size_t i = elem_index(parent, x);
    if (i + 1 < parent.elems.size()) return erase(text_, x.key_pos, parent.elems[i + 1].first);
    return splice(text_, x.key_pos, src_.line_end(x.subtree_end), "{}");
  }

  std::string remove_block_item(const NodeRec& x) const {
    size_t ls = src_.line_start(x.elem_pos);
    if (!src_.only_blanks(ls, x.elem_pos)) fail(x, x.path, "cannot remove a list item that shares its line");
    return erase(text_, ls, src_.next_line(x.subtree_end));
  }

  const YamlIndex& ix_;
  const std::string& text_;
  Source src_;
  const std::string& name_;
};

Entry to_entry(const NodeRec& x) {
  Entry e{x.path, x.value, x.raw, x.line, 0, 0, false, false};
  e.runtime = x.value.kind == ValueKind::String && x.value.text.find("${") != std::string::npos;
  e.loader_dependent = x.quote == 0 && x.literal.kind != ValueKind::List && yaml_loader_dependent(x.literal.text);
  if (!x.own) return e;  // its bytes are its anchor's
  e.begin = std::min({x.begin, x.key_pos, x.elem_pos});
  e.end = x.alias_end == npos ? x.end : std::max(x.end, x.alias_end);
  return e;
}

std::optional<std::string> canonical(std::string_view path) {
  try {
    return join_key_path(parse_key_path(path));
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

}  // namespace
}  // namespace yaml_impl

using yaml_impl::NodeRec;

YamlDocument::YamlDocument(std::string name, std::string text, std::shared_ptr<const YamlIndex> index)
    : name_(std::move(name)), text_(std::move(text)), index_(std::move(index)) {}

std::unique_ptr<YamlDocument> YamlDocument::parse(const std::string& name, std::string text) {
  auto index = yaml_impl::build_index(name, text);
  return std::unique_ptr<YamlDocument>(new YamlDocument(name, std::move(text), std::move(index)));
}

std::vector<Entry> YamlDocument::entries() const {
  std::vector<Entry> out;
  for (const NodeRec& x : index_->nodes) {
    if (x.leaf()) out.push_back(yaml_impl::to_entry(x));
  }
  return out;
}

std::optional<Entry> YamlDocument::find(std::string_view path) const {
  auto canon = yaml_impl::canonical(path);
  const NodeRec* x = canon ? index_->find(*canon) : nullptr;
  if (!x || !x->leaf()) return std::nullopt;
  return yaml_impl::to_entry(*x);
}

void YamlDocument::set(std::string_view path, const Value& value) {
  std::vector<PathPart> parts;
  try {
    parts = parse_key_path(path);
  } catch (const std::invalid_argument& e) {
    throw InputError({name_, 0, 0}, std::string(path), e.what());
  }
  std::string canon = join_key_path(parts);
  yaml_impl::Editor editor(*index_, text_, name_);
  commit(editor.set(parts, canon, value), canon, &value);
}

bool YamlDocument::remove(std::string_view path) {
  auto canon = yaml_impl::canonical(path);
  if (!canon) return false;
  yaml_impl::Editor editor(*index_, text_, name_);
  std::optional<std::string> out = editor.remove(*canon);
  if (!out) return false;
  commit(std::move(*out), *canon, nullptr);
  return true;
}

void YamlDocument::commit(std::string new_text, const std::string& path, const Value* expect) {
  std::shared_ptr<const YamlIndex> index;
  try {
    index = yaml_impl::build_index(name_, new_text);
  } catch (const InputError& e) {
    throw InputError({name_, 0, 0}, path, "the edit would leave invalid YAML (" + e.message() + "); file unchanged");
  }
  if (expect) {
    const NodeRec* x = index->find(path);
    if (!x || !x->leaf() || !x->literal.same_as(*expect)) {
      std::string got = x ? "'" + x->literal.str() + "'" : "nothing";
      throw InputError({name_, x ? x->line : 0, 0}, path,
                       "writing '" + expect->str() + "' would read back as " + got + "; file unchanged");
    }
  }
  text_ = std::move(new_text);
  index_ = std::move(index);
}

std::unique_ptr<Document> YamlDocument::clone() const {
  return std::unique_ptr<Document>(new YamlDocument(*this));
}

std::optional<long long> yaml11_integer(std::string_view t) {
  std::string s;
  for (char c : t) {
    if (c != '_') s.push_back(c);
  }
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.erase(0, 1);
  if (s.empty()) return std::nullopt;
  int base = 10;
  std::string digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'b')) {
    base = s[1] == 'x' ? 16 : 2;
    digits = s.substr(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    digits = s.substr(1);
  } else if (s.find(':') != std::string::npos) {
    long long v = 0;
    for (const std::string& part : split(s, ':')) {
      auto n = Value::parse(part).as_int();
      if (part.empty() || !n || *n < 0 || (v != 0 && *n > 59)) return std::nullopt;
      v = v * 60 + *n;
    }
    return negative ? -v : v;
  }
  long long v = 0;
  for (char c : digits) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                                           : 99;
    if (d >= base || v > (1LL << 50)) return std::nullopt;
    v = v * base + d;
  }
  return negative ? -v : v;
}

}  // namespace attune::recipe
