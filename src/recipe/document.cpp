#include "attune/recipe/document.h"

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
  }
  return nullptr;
}

}  // namespace attune::recipe
