#include "hyperpod_resolve.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "attune/util/error.h"
#include "attune/util/text.h"
#include "attune/util/yaml_input.h"

namespace attune::recipe::hyperpod {

namespace {

// Scalars made by interpolating into a string carry this tag while resolving:
// they are strings whatever their text looks like.
constexpr const char* kStringTag = "!attune-string";

using Path = std::vector<std::string>;

std::string dotted(const Path& p) {
  std::string out;
  for (const auto& k : p) out += (out.empty() ? "" : ".") + k;
  return out;
}

class Resolver {
 public:
  Resolver(std::string file, YAML::Node recipe, std::string base_results_dir)
      : file_(std::move(file)), recipe_(recipe) {
    root_["base_results_dir"] = base_results_dir;
  }

  YAML::Node resolve_all() { return resolve_node(recipe_, {}); }

 private:
  // The node at an absolute path of the launcher's config: the recipe is
  // mounted under `recipes` and copied to `training`.
  YAML::Node at(const Path& p, const Path& asked_from) {
    if (p.empty()) fail(asked_from, "Interpolation key '' not found");
    if (p[0] == "base_results_dir" && p.size() == 1) return root_["base_results_dir"];
    // The launcher's config holds the recipe under `recipes` (and a copy under
    // `training`); nothing else of it is the recipe's.
    if (p[0] != "recipes" && p[0] != "training") fail(asked_from, fmt::format("Interpolation key '{}' not found", dotted(p)));
    const YAML::Node& base = recipe_;
    YAML::Node cur = YAML::Clone(base);
    Path walked = {"recipes"};
    const YAML::Node* node = &base;
    std::vector<YAML::Node> keep;  // the nodes walked, kept alive
    keep.push_back(base);
    for (std::size_t i = 1; i < p.size(); ++i) {
      const YAML::Node& from = keep.back();
      YAML::Node next;
      bool found = false;
      if (from.IsMap()) {
        for (const auto& kv : from) {
          if (kv.first.Scalar() == p[i]) {
            next = kv.second;
            found = true;
            break;
          }
        }
      } else if (from.IsSequence()) {
        char* end = nullptr;
        const long idx = std::strtol(p[i].c_str(), &end, 10);
        if (end && *end == '\0' && !p[i].empty() && idx >= 0 && static_cast<std::size_t>(idx) < from.size()) {
          next = from[static_cast<std::size_t>(idx)];
          found = true;
        }
      }
      if (!found) fail(asked_from, fmt::format("Interpolation key '{}' not found", dotted(p)));
      keep.push_back(next);
      walked.push_back(p[i]);
    }
    (void)node;
    (void)cur;
    Path inside(walked.begin() + 1, walked.end());
    return resolve_node(keep.back(), inside);
  }

  YAML::Node resolve_node(const YAML::Node& n, const Path& where) {
    const std::string key = dotted(where);
    if (resolving_.count(key)) fail(where, "Recursive interpolation detected");
    if (n.IsMap()) {
      YAML::Node out(YAML::NodeType::Map);
      for (const auto& kv : n) {
        Path child = where;
        child.push_back(kv.first.Scalar());
        out[kv.first.Scalar()] = resolve_node(kv.second, child);
      }
      return out;
    }
    if (n.IsSequence()) {
      YAML::Node out(YAML::NodeType::Sequence);
      for (std::size_t i = 0; i < n.size(); ++i) {
        Path child = where;
        child.push_back(std::to_string(i));
        out.push_back(resolve_node(n[i], child));
      }
      return out;
    }
    if (!n.IsScalar() || n.Scalar().find("${") == std::string::npos) return YAML::Clone(n);
    resolving_.insert(key);
    YAML::Node out = interpolate(n.Scalar(), where);
    resolving_.erase(key);
    return out;
  }

  // A scalar with interpolations: the target node itself when the scalar is
  // one whole interpolation, else a string.
  YAML::Node interpolate(const std::string& text, const Path& where) {
    std::size_t pos = 0;
    if (text.rfind("${", 0) == 0) {
      std::size_t end = 0;
      YAML::Node whole = expression(text, 2, end, where);
      if (end + 1 == text.size()) return whole;
    }
    std::string out;
    while (pos < text.size()) {
      const std::size_t at = text.find("${", pos);
      if (at == std::string::npos) {
        out += text.substr(pos);
        break;
      }
      out += text.substr(pos, at - pos);
      std::size_t end = 0;
      out += python_text(expression(text, at + 2, end, where));
      pos = end + 1;
    }
    YAML::Node s(out);
    s.SetTag(kStringTag);
    return s;
  }

  // The expression that starts at `from` (after "${"); `end` is set to its '}'.
  YAML::Node expression(const std::string& text, std::size_t from, std::size_t& end, const Path& where) {
    std::size_t i = from;
    std::string head;
    while (i < text.size() && text[i] != '}' && text[i] != ':') head += text[i++];
    if (i >= text.size()) fail(where, fmt::format("unterminated interpolation in '{}'", text));
    if (text[i] == '}') {
      end = i;
      return reference(std::string(trim(head)), where);
    }
    // A resolver call: name:arg,arg (an argument may itself interpolate).
    std::vector<std::string> args;
    std::string cur;
    int depth = 0;
    for (++i; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
        std::size_t inner_end = 0;
        cur += python_text(expression(text, i + 2, inner_end, where));
        i = inner_end;
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}' && depth-- == 0) break;
      if (c == ',' && depth == 0) {
        args.push_back(std::string(trim(cur)));
        cur.clear();
        continue;
      }
      cur += c;
    }
    if (i >= text.size()) fail(where, fmt::format("unterminated interpolation in '{}'", text));
    args.push_back(std::string(trim(cur)));
    end = i;
    return call(std::string(trim(head)), args, where);
  }

  YAML::Node reference(const std::string& ref, const Path& where) {
    if (ref.empty() || ref[0] != '.') return at(split_key(ref), where);
    // Relative: `.x` is a key of the map holding this value, each further '.' one level up.
    std::size_t dots = 0;
    while (dots < ref.size() && ref[dots] == '.') ++dots;
    if (where.size() < dots) fail(where, fmt::format("Interpolation key '{}' not found", ref));
    Path p(where.begin(), where.end() - static_cast<long>(dots));
    for (const auto& k : split_key(ref.substr(dots))) p.push_back(k);
    Path absolute = {"recipes"};
    absolute.insert(absolute.end(), p.begin(), p.end());
    return at(absolute, where);
  }

  YAML::Node call(const std::string& name, const std::vector<std::string>& args, const Path& where) {
    if (name == "oc.env" || name == "env") {
      const char* v = args.empty() ? nullptr : std::getenv(args[0].c_str());
      if (v) return tagged_string(v);
      if (args.size() > 1) return YAML::Load(args[1]);
      fail(where, fmt::format("Environment variable '{}' not found", args.empty() ? "" : args[0]));
    }
    if (name == "multiply") {  // registered by the launcher's main.py
      double product = 1;
      bool whole = true;
      for (const auto& a : args) {
        char* e = nullptr;
        const double v = std::strtod(a.c_str(), &e);
        if (!e || *e != '\0') fail(where, fmt::format("multiply: '{}' is not a number", a));
        whole = whole && a.find_first_of(".eE") == std::string::npos;
        product *= v;
      }
      YAML::Node n(whole ? fmt::format("{}", static_cast<long long>(product)) : fmt::format("{}", product));
      n.SetTag("?");
      return n;
    }
    fail(where, fmt::format("Unsupported interpolation type {}", name));
  }

  static Path split_key(const std::string& key) {
    Path out;
    std::string cur;
    for (char c : key) {
      if (c == '.' || c == '[' || c == ']') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  }

  static YAML::Node tagged_string(const std::string& s) {
    YAML::Node n(s);
    n.SetTag(kStringTag);
    return n;
  }

  // What str() of the value OmegaConf holds gives (its YAML loader's types).
  static std::string python_text(const YAML::Node& n) {
    if (n.IsNull()) return "None";
    if (!n.IsScalar()) return YAML::Dump(n);
    if (n.Tag() != "?") return n.Scalar();  // quoted, or already a string
    const std::string& t = n.Scalar();
    const std::string lower = to_lower(t);
    if (lower == "null" || t == "~") return "None";
    if (lower == "true" || lower == "yes" || lower == "on") return "True";
    if (lower == "false" || lower == "no" || lower == "off") return "False";
    char* end = nullptr;
    const long long i = std::strtoll(t.c_str(), &end, 0);
    if (!t.empty() && end && *end == '\0' && t.find_first_of(".eE") == std::string::npos) return std::to_string(i);
    const double d = std::strtod(t.c_str(), &end);
    if (!t.empty() && end && *end == '\0' && std::isfinite(d)) {
      std::string s = fmt::format("{}", d);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
    return t;
  }

  [[noreturn]] void fail(const Path& where, const std::string& message) {
    throw InputError({file_, 0, 0}, dotted(where),
                     fmt::format("{} (the HyperPod launcher resolves every interpolation before training; "
                                 "full_key: {})",
                                 message, dotted(where)));
  }

  std::string file_;
  YAML::Node recipe_;
  YAML::Node root_{YAML::NodeType::Map};
  std::set<std::string> resolving_;
};

void emit(YAML::Emitter& out, const YAML::Node& n) {
  if (n.IsMap()) {
    out << YAML::BeginMap;
    for (const auto& kv : n) {
      out << YAML::Key << kv.first.Scalar() << YAML::Value;
      emit(out, kv.second);
    }
    out << YAML::EndMap;
  } else if (n.IsSequence()) {
    out << YAML::BeginSeq;
    for (const auto& item : n) emit(out, item);
    out << YAML::EndSeq;
  } else if (n.IsNull()) {
    out << YAML::Null;
  } else if (n.Tag() == "?") {
    out << n.Scalar();  // plain, as written: its type stays what the file made it
  } else {
    out << YAML::DoubleQuoted << n.Scalar();
  }
}

}  // namespace

Resolved resolve_recipe(const std::string& file, const std::string& text, const std::string& base_results_dir,
                        bool add_model_section) {
  YAML::Node recipe = load_yaml(file, text);
  if (!recipe.IsMap()) throw InputError({file, 1, 1}, "", "expected a mapping at the top level");
  if (add_model_section && !recipe["model"]) recipe["model"]["ub_tp_comm_overlap"] = false;
  Resolver r(file, recipe, base_results_dir);
  const YAML::Node resolved = r.resolve_all();
  Resolved out;
  if (resolved["run"] && resolved["run"]["name"] && resolved["run"]["name"].IsScalar())
    out.run_name = resolved["run"]["name"].Scalar();
  YAML::Emitter e;
  emit(e, resolved);
  out.text = "# The recipe as the HyperPod launcher resolves it (written by attune)\n" + std::string(e.c_str()) + "\n";
  return out;
}

}  // namespace attune::recipe::hyperpod
