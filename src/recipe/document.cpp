#include "attune/recipe/document.h"

#include <algorithm>

#include "attune/recipe/script_document.h"
#include "attune/recipe/toml_document.h"
#include "attune/recipe/yaml_document.h"

namespace attune::recipe {

namespace {
bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::string to_string(Format f) {
  switch (f) {
    case Format::Yaml: return "yaml";
    case Format::Toml: return "toml";
    case Format::Script: return "script";
    case Format::Command: return "command";
  }
  return "?";
}

Format detect_format(const std::string& name, std::string_view text) {
  if (ends_with(name, ".toml")) return Format::Toml;
  if (ends_with(name, ".yaml") || ends_with(name, ".yml")) return Format::Yaml;
  if (ends_with(name, ".sh") || ends_with(name, ".bash") || ends_with(name, ".sub") ||
      ends_with(name, ".slurm") || ends_with(name, ".sbatch")) {
    return Format::Script;
  }
  if (text.rfind("#!", 0) == 0) return Format::Script;
  // No telling extension: a TOML table header or `key = value` lines mean TOML.
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') {
      if (line[first] == '[' && line.find('=') == std::string_view::npos) return Format::Toml;
      size_t eq = line.find(" = ");
      size_t colon = line.find(':');
      if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) return Format::Toml;
      if (line.substr(first, 2) == "--") return Format::Script;
      return Format::Yaml;
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return Format::Yaml;
}

std::unique_ptr<Document> parse_document(const std::string& name, std::string text) {
  switch (detect_format(name, text)) {
    case Format::Toml: return TomlDocument::parse(name, std::move(text));
    case Format::Script: return ScriptDocument::parse(name, std::move(text));
    case Format::Yaml: return YamlDocument::parse(name, std::move(text));
    case Format::Command: break;  // never detected from a file alone: a wrapper's command (Recipe::load)
  }
  return nullptr;
}

}  // namespace attune::recipe

namespace attune::recipe {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// PyYAML's YAML 1.1 float: a dot is required and an exponent needs its sign.
bool yaml11_float_exponent(std::string_view mantissa, std::string_view exponent) {
  return mantissa.find('.') != std::string_view::npos && !exponent.empty() &&
         (exponent[0] == '+' || exponent[0] == '-');
}

}  // namespace

bool yaml_loader_dependent(std::string_view t) {
  static const char* kWords[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                 "on", "On", "ON", "off", "Off", "OFF"};
  for (const char* w : kWords) {
    if (t == w) return true;  // booleans to YAML 1.1, strings to YAML 1.2
  }
  std::string_view n = t;
  if (!n.empty() && (n[0] == '+' || n[0] == '-')) n.remove_prefix(1);
  if (n.empty() || !((n[0] >= '0' && n[0] <= '9') || n[0] == '.')) return false;
  if (n.size() > 1 && n[0] == '0' && (all_digits(n.substr(1)) || n[1] == 'x' || n[1] == 'o' || n[1] == 'b')) {
    return true;  // 042 is octal to YAML 1.1; 0o and 0b only YAML 1.2 knows
  }
  if (n.find('_') != std::string_view::npos) return true;  // 1_000: YAML 1.1 only
  if (n.find(':') != std::string_view::npos) return true;  // 1:30 is base 60 to YAML 1.1
  size_t e = n.find_first_of("eE");
  if (e != std::string_view::npos && e > 0) {
    // 1e-4 and 1.0e5 are strings to PyYAML, numbers to YAML 1.2 and OmegaConf.
    return !yaml11_float_exponent(n.substr(0, e), n.substr(e + 1));
  }
  return false;
}

}  // namespace attune::recipe
