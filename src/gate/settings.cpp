#include "settings.h"

#include <algorithm>
#include <set>

#include "attune/recipe/key_path.h"
#include "attune/recipe/script_document.h"

namespace attune::gate {

const char* const kEffectiveSuffix = " (effective)";

std::string rule_key(const std::string& key) {
  size_t n = std::char_traits<char>::length(kEffectiveSuffix);
  if (key.size() > n && key.compare(key.size() - n, n, kEffectiveSuffix) == 0) return key.substr(0, key.size() - n);
  return key;
}

namespace {

// `a."b.c"[0]` -> `a.b.c[0]`: a flat key written with dots means the same
// setting as its nested form.
std::string flatten(const std::string& path) {
  try {
    std::string out;
    for (const auto& p : recipe::parse_key_path(path)) {
      if (p.index >= 0) {
        out.append("[").append(std::to_string(p.index)).append("]");
      } else {
        if (!out.empty()) out.push_back('.');
        out.append(p.key);
      }
    }
    return out;
  } catch (const std::invalid_argument&) {
    return path;
  }
}

bool is_text(const recipe::Value& v) { return v.kind == recipe::ValueKind::String; }

void add(std::map<std::string, Setting>& out, const std::string& key, const recipe::Entry& e) {
  auto [it, fresh] = out.emplace(key, Setting{e, false});
  if (fresh) return;
  Setting& s = it->second;
  std::vector<recipe::Value> values = s.conflicting ? s.entry.value.items : std::vector<recipe::Value>{s.entry.value};
  for (const auto& v : values) {
    if (equivalent(v, e.value)) return;
  }
  values.push_back(e.value);
  s.conflicting = true;
  s.entry.value = recipe::Value::list(std::move(values));
}

// Every occurrence of each flag of a launch script.
std::vector<recipe::Entry> script_entries(const recipe::Document& doc) {
  const auto& script = dynamic_cast<const recipe::ScriptDocument&>(doc);
  std::vector<recipe::Entry> out;
  for (const auto& e : doc.entries()) {
    // Shell variables only feed the flags and exports compared here.
    if (e.path.rfind("var.", 0) == 0) continue;
    if (e.path.rfind("--", 0) != 0) {
      out.push_back(e);
      continue;
    }
    auto all = script.occurrences(e.path);
    out.insert(out.end(), all.begin(), all.end());
  }
  return out;
}

// HyperPod LLMFT: the value in effect for every key a scale_config block sets.
void add_effective_values(const recipe::Recipe& r, std::map<std::string, Setting>& out) {
  if (r.framework() != recipe::Framework::HyperPod || r.dialect() != "llmft") return;
  std::set<std::string> overridden;
  const std::string prefix = "scale_config.";
  for (const auto& e : r.document().entries()) {
    if (e.path.rfind(prefix, 0) != 0) continue;
    size_t dot = e.path.find('.', prefix.size());
    if (dot == std::string::npos) continue;
    std::string suffix = e.path.substr(dot + 1);
    if (suffix != "trainer.num_nodes") overridden.insert(suffix);
  }
  for (const auto& path : overridden) {
    std::optional<recipe::Entry> e = r.elastic_override(path);
    if (!e) e = r.document().find(path);
    if (e) out[normalize_key(r, path) + kEffectiveSuffix] = Setting{*e, false};
  }
}

}  // namespace

RecipeView::RecipeView(const recipe::Recipe& r) : recipe(r), settings(settings_of(r)), plan(r.plan()) {}

std::string normalize_key(const recipe::Recipe& r, const std::string& path) {
  std::string key = r.adapter().catalog_key(r, recipe::strip_override_prefix(flatten(path)));
  if (key.rfind("--", 0) == 0) std::replace(key.begin() + 2, key.end(), '_', '-');
  return key;
}

std::map<std::string, Setting> settings_of(const recipe::Recipe& r) {
  std::map<std::string, Setting> out;
  const recipe::Document& doc = r.document();
  auto entries = doc.format() == recipe::Format::Script ? script_entries(doc) : doc.entries();
  for (const auto& e : entries) add(out, normalize_key(r, e.path), e);
  add_effective_values(r, out);
  return out;
}

bool equivalent(const recipe::Value& a, const recipe::Value& b) {
  if (!a.same_as(b)) return false;
  if (a.kind == recipe::ValueKind::List) {
    for (size_t i = 0; i < a.items.size(); ++i) {
      if (!equivalent(a.items[i], b.items[i])) return false;
    }
    return true;
  }
  return is_text(a) == is_text(b);
}

}  // namespace attune::gate
