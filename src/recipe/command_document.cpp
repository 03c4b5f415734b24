#include "attune/recipe/command_document.h"

#include <cctype>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "attune/util/embedded.h"
#include "attune/util/error.h"
#include "attune/util/yaml_input.h"

namespace attune::recipe {

namespace {

constexpr const char* kConfigs = "skills/torchtitan_configs.yaml";
constexpr const char* kSubcommand = "activation_checkpoint";  // activation-checkpoint:MODE

// `--parallelism.tensor-parallel-degree` -> parallelism.tensor_parallel_degree.
std::string key_of_flag(std::string_view flag) {
  std::string k(flag.substr(2));
  for (char& c : k) c = c == '-' ? '_' : c;
  return k;
}

// parallelism.tensor_parallel_degree -> `--parallelism.tensor-parallel-degree`,
// the flag as tyro prints it (it reads `_` and `-` alike).
std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  for (char& c : f) c = c == '_' ? '-' : c;
  return f;
}

// `x.no_y` -> `x.y`: tyro's false form of a boolean flag.
std::optional<std::string> negated(const std::string& key) {
  const auto dot = key.rfind('.');
  const std::string last = key.substr(dot == std::string::npos ? 0 : dot + 1);
  if (last.rfind("no_", 0) != 0 || last.size() <= 3) return std::nullopt;
  return key.substr(0, dot == std::string::npos ? 0 : dot + 1) + last.substr(3);
}

bool is_subcommand(std::string_view arg, std::string* mode) {
  std::string a(arg);
  for (char& c : a) c = c == '-' ? '_' : c;
  const std::string prefix = std::string(kSubcommand) + ":";
  if (a.rfind(prefix, 0) != 0) return false;
  if (mode) *mode = a.substr(prefix.size());  // `memory-budget` is the lever's memory_budget
  return true;
}

bool plain_safe(std::string_view s) {
  if (s.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '-' && s[0] != '/' && s[0] != '.') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '/' && c != '=' &&
        c != ':')
      return false;
  }
  if (s.back() == ':') return false;  // `a:` would be a mapping key
  const std::string lower = [&] {
    std::string l(s);
    for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  }();
  return lower != "true" && lower != "false" && lower != "yes" && lower != "no" && lower != "null" && lower != "on" &&
         lower != "off";
}

// The text one argument is written as in the list.
std::string value_arg(const Value& v) {
  if (v.kind != ValueKind::List) return v.text;
  std::string out;  // tyro's list[str]: one comma-separated argument
  for (const auto& i : v.items) out += (out.empty() ? "" : ",") + i.text;
  return out;
}

std::string yaml_scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : YAML::Dump(n); }

// The named config's values: the dataclass defaults and what its function sets.
std::vector<std::pair<std::string, Value>> base_values(const std::string& file, const std::string& named, int line) {
  const EmbeddedFile* f = find_embedded(kConfigs);
  if (!f) throw InputError({file, line, 0}, "--config", "the table of torchtitan's named configs is not built in");
  const YAML::Node root = YAML::Load(f->content);
  const YAML::Node config = root["configs"][named];
  if (!config) {
    std::string known;
    for (const auto& kv : root["configs"]) known += (known.empty() ? "" : ", ") + kv.first.Scalar();
    throw InputError({file, line, 0}, "--config",
                     fmt::format("attune knows no torchtitan config '{}' (it reads the values of: {}); give the "
                                 "recipe as a TOML file for torchtitan v0.2.x instead",
                                 named, known));
  }
  std::vector<std::pair<std::string, Value>> out;
  auto add = [&](const YAML::Node& map) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      const Value v = Value::parse(yaml_scalar_text(kv.second));
      bool replaced = false;
      for (auto& [k, old] : out) {
        if (k == key) {
          old = v;
          replaced = true;
        }
      }
      if (!replaced) out.emplace_back(key, v);
    }
  };
  add(root["defaults"]);
  add(config);
  return out;
}

}  // namespace

bool CommandDocument::holds_command_recipe(std::string_view text) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap() || root["config"] || !root["launch"] || !root["launch"]["command"]) return false;
    const YAML::Node cmd = root["launch"]["command"];
    if (!cmd.IsSequence()) return false;
    for (const auto& a : cmd) {
      if (a.IsScalar() && (a.Scalar() == "--module" || a.Scalar().rfind("--module=", 0) == 0)) return true;
    }
  } catch (const YAML::Exception&) {
  }
  return false;
}

std::unique_ptr<CommandDocument> CommandDocument::parse(const std::string& name, std::string text) {
  auto d = std::unique_ptr<CommandDocument>(new CommandDocument());
  d->name_ = name;
  d->text_ = std::move(text);
  d->index();
  return d;
}

void CommandDocument::index() {
  const YAML::Node root = load_yaml(name_, text_);
  const YAML::Node cmd = root.IsMap() && root["launch"] ? root["launch"]["command"] : YAML::Node();
  if (!cmd || !cmd.IsSequence() || cmd.size() == 0)
    throw InputError({name_, 1, 1}, "launch.command", "expected the torchtitan command line as a list");
  flow_ = cmd.Style() == YAML::EmitterStyle::Flow;
  elements_.clear();
  for (const auto& a : cmd) {
    if (!a.IsScalar()) throw InputError(yaml_where(name_, a), "launch.command", "expected a list of arguments");
    Element e;
    e.text = a.Scalar();
    e.begin = static_cast<std::size_t>(a.Mark().pos);
    e.line = a.Mark().line + 1;
    const char c = text_[e.begin];
    if (c == '"' || c == '\'') {
      e.quote = c;
      std::size_t i = e.begin + 1;
      while (i < text_.size()) {
        if (c == '"' && text_[i] == '\\') {
          i += 2;
          continue;
        }
        if (text_[i] == c) {
          if (c == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      e.end = i + 1;
    } else {
      std::size_t i = e.begin;
      while (i < text_.size() && text_[i] != '\n' && !(flow_ && (text_[i] == ',' || text_[i] == ']')) &&
             !(text_[i] == '#' && i > e.begin && text_[i - 1] == ' '))
        ++i;
      while (i > e.begin && (text_[i - 1] == ' ' || text_[i - 1] == '\t' || text_[i - 1] == '\r')) --i;
      e.end = i;
    }
    elements_.push_back(std::move(e));
  }
  list_begin_ = static_cast<std::size_t>(cmd.Mark().pos);
  list_end_ = elements_.back().end;
  if (flow_) {
    const std::size_t close = text_.find(']', list_end_);
    list_end_ = close == std::string::npos ? text_.size() : close + 1;
  } else {
    const std::size_t line_start = text_.rfind('\n', elements_.back().begin);
    const std::size_t from = line_start == std::string::npos ? 0 : line_start + 1;
    indent_ = text_.substr(from, elements_.back().begin - from);
  }

  // The program's arguments: those after `-m torchtitan.train` (or its script).
  program_ = 0;
  for (std::size_t i = 0; i + 1 < elements_.size(); ++i) {
    if (elements_[i].text == "-m" && elements_[i + 1].text == "torchtitan.train") program_ = i + 2;
  }
  if (program_ == 0) {
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      const std::string& t = elements_[i].text;
      if (t.size() >= 8 && t.compare(t.size() - 8, 8, "train.py") == 0) program_ = i + 1;
    }
  }
  std::string module, config;
  int config_line = elements_.front().line;
  overrides_.clear();
  for (std::size_t i = program_; i < elements_.size(); ++i) {
    const std::string& t = elements_[i].text;
    std::string mode;
    if (is_subcommand(t, &mode)) {
      overrides_.push_back({std::string(kSubcommand) + ".mode", Value::string(mode), i, 1, false});
      continue;
    }
    if (t.rfind("--", 0) != 0) continue;  // a value read with its flag, or not the program's
    const auto eq = t.find('=');
    const std::string flag = eq == std::string::npos ? t : t.substr(0, eq);
    const bool has_next = i + 1 < elements_.size() && elements_[i + 1].text.rfind("--", 0) != 0 &&
                          !is_subcommand(elements_[i + 1].text, nullptr);
    if (flag == "--module" || flag == "--config") {
      const std::string v = eq != std::string::npos ? t.substr(eq + 1) : has_next ? elements_[i + 1].text : "";
      (flag == "--module" ? module : config) = v;
      config_line = elements_[i].line;
      if (eq == std::string::npos && has_next) ++i;
      continue;
    }
    const std::string key = key_of_flag(flag);
    if (eq != std::string::npos) {
      overrides_.push_back({key, Value::parse(t.substr(eq + 1)), i, 1, false});
    } else if (has_next) {
      overrides_.push_back({key, Value::parse(elements_[i + 1].text), i, 2, false});
      ++i;
    } else if (const auto off = negated(key)) {
      overrides_.push_back({*off, Value::boolean(false), i, 1, true});
    } else {
      overrides_.push_back({key, Value::boolean(true), i, 1, true});
    }
  }
  if (module.empty() || config.empty())
    throw InputError({name_, config_line, 0}, module.empty() ? "--module" : "--config",
                     "a torchtitan command recipe names its config: --module MODULE --config FUNCTION");
  named_ = module + "/" + config;
  base_ = base_values(name_, named_, config_line);
}

std::vector<Entry> CommandDocument::entries() const {
  std::vector<Entry> out;
  for (const auto& [key, value] : base_) {
    bool overridden = false;
    for (const auto& o : overrides_) overridden = overridden || o.key == key;
    if (overridden) continue;
    Entry e;
    e.path = key;
    e.value = value;
    e.raw = value.text;
    out.push_back(std::move(e));  // the named config's: no bytes of its own
  }
  for (const auto& o : overrides_) {
    Entry e;
    e.path = o.key;
    e.value = o.value;
    const Element& last = elements_[o.first + o.count - 1];
    e.raw = o.flag ? elements_[o.first].text : last.text;
    e.line = elements_[o.first].line;
    e.begin = elements_[o.first].begin;
    e.end = last.end;
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<Entry> CommandDocument::find(std::string_view path) const {
  std::optional<Entry> found;
  for (const auto& e : entries()) {
    if (e.path == path) found = e;  // argparse-style: the last occurrence wins
  }
  return found;
}

std::vector<std::string> CommandDocument::argv() const {
  std::vector<std::string> out;
  for (const auto& e : elements_) out.push_back(e.text);
  return out;
}

std::pair<std::size_t, std::size_t> CommandDocument::command_bytes() const { return {list_begin_, list_end_}; }

std::string CommandDocument::element_text(const std::string& arg, char quote) const {
  if (quote == 0 && plain_safe(arg)) return arg;
  if (quote == '\'') {
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "\"";
  for (char c : arg) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void CommandDocument::replace_text(std::string text) {
  CommandDocument next;
  next.name_ = name_;
  next.text_ = std::move(text);
  next.index();  // throws, and this document stays as it was, when the edit breaks the wrapper
  *this = std::move(next);
}

void CommandDocument::set(std::string_view path, const Value& value) {
  const std::string key(path);
  if (value.is_null()) throw InputError({name_, 0, 0}, key, "a command-line override cannot be set to null");
  std::vector<std::string> args;
  if (key == std::string(kSubcommand) + ".mode") {
    std::string mode = value.text;
    for (char& c : mode) c = c == '_' ? '-' : c;  // tyro's subcommand names: memory_budget -> memory-budget
    args.push_back("activation-checkpoint:" + mode);
  } else if (value.kind == ValueKind::Bool) {
    const bool on = value.as_bool().value_or(false);
    const auto dot = key.rfind('.');
    args.push_back(flag_of(on ? key : key.substr(0, dot + 1) + "no_" + key.substr(dot + 1)));
  } else {
    args = {flag_of(key), value_arg(value)};
  }
  std::string t = text_;
  const Override* existing = nullptr;
  for (const auto& o : overrides_) {
    if (o.key == key) existing = &o;
  }
  if (existing && existing->count == args.size()) {
    // In place, element by element, from the last so earlier offsets hold.
    for (std::size_t k = args.size(); k-- > 0;) {
      const Element& e = elements_[existing->first + k];
      const bool same_flag = args[k].rfind("--", 0) == 0 && key_of_flag(e.text) == key_of_flag(args[k]);
      if (same_flag) continue;  // the user's spelling of the flag stays
      t.replace(e.begin, e.end - e.begin, element_text(args[k], e.quote));
    }
    return replace_text(std::move(t));
  }
  if (existing) {
    remove(path);
    t = text_;
  }
  // Appended: root settings go before the activation-checkpoint subcommand
  // (tyro reads the root's flags before a subcommand), the subcommand last.
  std::size_t before = elements_.size();
  if (key != std::string(kSubcommand) + ".mode") {
    for (const auto& o : overrides_) {
      if (o.key == std::string(kSubcommand) + ".mode") before = o.first;
    }
  }
  std::string added;
  if (flow_) {
    for (const auto& a : args) added += ", " + element_text(a, a.rfind("--", 0) == 0 || is_subcommand(a, nullptr) ? 0 : '"');
    const std::size_t at = before < elements_.size() ? elements_[before - 1].end : elements_.back().end;
    t.insert(at, added);
  } else {
    for (const auto& a : args)
      added += "\n" + indent_ + element_text(a, a.rfind("--", 0) == 0 || is_subcommand(a, nullptr) ? 0 : '"');
    const std::size_t at = before < elements_.size() ? elements_[before - 1].end : elements_.back().end;
    t.insert(at, added);
  }
  replace_text(std::move(t));
}

bool CommandDocument::remove(std::string_view path) {
  const Override* o = nullptr;
  for (const auto& x : overrides_) {
    if (x.key == path) o = &x;
  }
  if (!o) return false;
  const Element& first = elements_[o->first];
  const Element& last = elements_[o->first + o->count - 1];
  std::string t = text_;
  if (flow_) {
    const std::size_t from = o->first > 0 ? elements_[o->first - 1].end : first.begin;
    const std::size_t to = o->first > 0 ? last.end
                                         : (o->first + o->count < elements_.size() ? elements_[o->first + o->count].begin
                                                                                   : last.end);
    t.erase(from, to - from);
  } else {
    const std::size_t line_start = t.rfind('\n', first.begin);
    const std::size_t from = line_start == std::string::npos ? 0 : line_start;
    t.erase(from, last.end - from);
  }
  replace_text(std::move(t));
  return true;
}

std::unique_ptr<Document> CommandDocument::clone() const { return std::unique_ptr<Document>(new CommandDocument(*this)); }

}  // namespace attune::recipe
