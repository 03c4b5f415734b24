#include "attune/recipe/script_document.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "bash_lexer.h"
#include "script_editor.h"
#include "script_model.h"
#include "script_resolver.h"

namespace attune::recipe {

struct ScriptDocument::Index {
  script::Model model;
  bash::LineIndex lines;
};

namespace {

struct ScriptPath {
  enum class Kind { Flag, Env, Var } kind;
  std::string name;  // the flag, or the variable name
};

// Flag names go into the script as they are, so they must be plain words.
bool is_flag_name(std::string_view s) {
  return s.size() > 2 && s.starts_with("--") && std::isalnum(static_cast<unsigned char>(s[2])) &&
         std::all_of(s.begin() + 2, s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

bool is_name(std::string_view s) {
  return !s.empty() && bash::is_name_start(s[0]) &&
         std::all_of(s.begin(), s.end(), [](char c) { return bash::is_name_char(c); });
}

std::optional<ScriptPath> parse_path(std::string_view path) {
  if (is_flag_name(path)) return ScriptPath{ScriptPath::Kind::Flag, std::string(path)};
  std::string_view rest = path.substr(std::min<size_t>(4, path.size()));
  if (path.starts_with("env.") && is_name(rest)) return ScriptPath{ScriptPath::Kind::Env, std::string(rest)};
  if (path.starts_with("var.") && is_name(rest)) return ScriptPath{ScriptPath::Kind::Var, std::string(rest)};
  return std::nullopt;
}

class EntryMaker {
 public:
  EntryMaker(std::string_view text, const script::Model& model, const bash::LineIndex& lines)
      : t_(text), model_(model), resolver_(text, model), lines_(lines) {}

  Entry flag(const script::Flag& f) const {
    Entry e = written_flag(f);
    // A variable expanded later on the same command line may bring its own
    // value of this flag (argparse keeps the last): known only at run time
    // unless its value is known and passes no option.
    auto [at, command] = script::launch_position(model_, t_, f);
    if (!command) return e;
    for (const auto& [begin, end] : command->expansions) {
      if (begin <= at) continue;
      auto words = resolver_.expand(script::Piece{begin, end, script::Quote::None, begin, end, begin, end});
      if (!words || words->find('-') != std::string::npos) e.runtime = true;
    }
    return e;
  }

  Entry written_flag(const script::Flag& f) const {
    Entry e;
    e.path = f.name;
    // Its words whole: the quotes around a value are its bytes too.
    const script::Piece& tail = f.values.empty() ? f.flag : f.values.back();
    const bool quoted_first = f.flag.word_end > f.flag.word_begin, quoted_tail = tail.word_end > tail.word_begin;
    e.begin = quoted_first ? std::min(f.flag.begin, f.flag.word_begin) : f.flag.begin;
    e.end = std::max(f.flag.end, quoted_tail ? std::max(tail.end, tail.word_end) : tail.end);
    if (f.values.empty()) {
      e.value = Value::boolean(true);
      e.line = lines_.line(f.flag.begin);
      return e;
    }
    const script::Piece& first = f.values.front();
    const script::Piece& last = f.values.back();
    e.raw = std::string(t_.substr(first.begin, last.end - first.begin));
    e.line = lines_.line(first.begin);
    for (const auto& p : f.values) e.runtime = e.runtime || !resolver_.expand(p);
    if (f.values.size() == 1) {
      e.value = resolver_.value(first);
    } else {
      std::vector<Value> items;
      for (const auto& p : f.values) items.push_back(resolver_.value(p));
      e.value = Value::list(std::move(items));
    }
    return e;
  }

  Entry variable(const script::Assignment& a) const {
    Entry e;
    e.path = (a.exported ? "env." : "var.") + a.name;
    e.value = resolver_.value(a);
    e.runtime = !resolver_.expand(script::Piece{a.value_begin, a.value_end, script::Quote::None, a.value_begin,
                                                a.value_end, a.value_begin, a.value_end});
    e.raw = std::string(t_.substr(a.value_begin, a.value_end - a.value_begin));
    e.line = lines_.line(a.name_begin);
    e.begin = a.stmt_begin;
    e.end = a.value_end;
    return e;
  }

 private:
  std::string_view t_;
  const script::Model& model_;
  script::Resolver resolver_;
  const bash::LineIndex& lines_;
};

}  // namespace

ScriptDocument::ScriptDocument(std::string name, std::string text, std::shared_ptr<const Index> index)
    : name_(std::move(name)), text_(std::move(text)), index_(std::move(index)) {}

std::unique_ptr<ScriptDocument> ScriptDocument::parse(const std::string& name, std::string text) {
  auto index = std::make_shared<const Index>(Index{script::scan(name, text), bash::LineIndex(text)});
  return std::unique_ptr<ScriptDocument>(new ScriptDocument(name, std::move(text), std::move(index)));
}

std::vector<Entry> ScriptDocument::entries() const {
  const script::Model& m = index_->model;
  EntryMaker make(text_, m, index_->lines);
  std::vector<std::pair<size_t, Entry>> found;
  std::set<std::string> seen;
  for (const auto& f : m.flags) {
    if (!seen.insert(f.key).second) continue;
    const script::Flag* read = script::effective_flag(m, text_, f.key);
    found.emplace_back(read->flag.begin, make.flag(*read));
  }
  std::set<std::pair<bool, std::string>> variables;
  for (const auto& a : m.assignments) {
    if (!variables.insert({a.exported, a.name}).second) continue;
    const auto* effective = script::effective_assignment(m, a.name, a.exported);
    found.emplace_back(effective->name_begin, make.variable(*effective));
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Entry> out;
  for (auto& [pos, e] : found) out.push_back(std::move(e));
  return out;
}

std::optional<Entry> ScriptDocument::find(std::string_view path) const {
  auto p = parse_path(path);
  if (!p) return std::nullopt;
  const script::Model& m = index_->model;
  EntryMaker make(text_, m, index_->lines);
  if (p->kind == ScriptPath::Kind::Flag) {
    const script::Flag* f = script::effective_flag(m, text_, script::normalise_flag(p->name));
    if (!f) return std::nullopt;
    return make.flag(*f);
  }
  const auto* a = script::effective_assignment(m, p->name, p->kind == ScriptPath::Kind::Env);
  if (!a) return std::nullopt;
  return make.variable(*a);
}

std::vector<Entry> ScriptDocument::written() const {
  const script::Model& m = index_->model;
  EntryMaker make(text_, m, index_->lines);
  std::vector<Entry> out;
  for (const auto& f : m.flags) out.push_back(make.flag(f));
  for (const auto& a : m.assignments) out.push_back(make.variable(a));
  std::stable_sort(out.begin(), out.end(), [](const Entry& x, const Entry& y) { return x.begin < y.begin; });
  return out;
}

const std::vector<std::pair<size_t, size_t>>& ScriptDocument::words() const { return index_->model.words; }

std::vector<std::pair<size_t, std::string>> ScriptDocument::commands() const {
  std::vector<std::pair<size_t, std::string>> out;
  for (const auto& c : index_->model.commands) {
    size_t end = c.begin;
    for (const auto& [b, e] : index_->model.words) {
      if (b == c.begin) end = e;
    }
    out.emplace_back(c.begin, text_.substr(c.begin, end - c.begin));
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> ScriptDocument::untracked_writes() const {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& w : index_->model.writers) out.emplace_back(w.begin, w.end);
  return out;
}

std::vector<Entry> ScriptDocument::occurrences(std::string_view flag) const {
  std::vector<Entry> out;
  if (!is_flag_name(flag)) return out;
  EntryMaker make(text_, index_->model, index_->lines);
  std::string key = script::normalise_flag(flag);
  for (const auto& f : index_->model.flags) {
    if (f.key == key) out.push_back(make.flag(f));
  }
  return out;
}

template <typename Edit>
bool ScriptDocument::edit(Edit&& make_splices) {
  script::Editor editor(name_, text_, index_->model);
  std::vector<script::Splice> splices = make_splices(editor);
  if (splices.empty()) return false;
  std::string text = script::apply_splices(text_, std::move(splices));
  auto index = std::make_shared<const Index>(Index{script::scan(name_, text), bash::LineIndex(text)});
  text_ = std::move(text);
  index_ = std::move(index);
  return true;
}

void ScriptDocument::set(std::string_view path, const Value& value) {
  auto p = parse_path(path);
  if (!p) {
    throw InputError({name_, 0, 0}, std::string(path),
                     "not a launch-script key: use a flag (--micro-batch-size), env.NAME or var.NAME");
  }
  edit([&](const script::Editor& e) {
    if (p->kind == ScriptPath::Kind::Flag) return e.set_flag(p->name, value);
    return e.set_variable(p->name, p->kind == ScriptPath::Kind::Env, value);
  });
}

bool ScriptDocument::remove(std::string_view path) {
  auto p = parse_path(path);
  if (!p) return false;
  return edit([&](const script::Editor& e) {
    if (p->kind == ScriptPath::Kind::Flag) return e.remove_flag(p->name);
    return e.remove_variable(p->name, p->kind == ScriptPath::Kind::Env);
  });
}

std::unique_ptr<Document> ScriptDocument::clone() const {
  return std::unique_ptr<Document>(new ScriptDocument(name_, text_, index_));
}

}  // namespace attune::recipe
