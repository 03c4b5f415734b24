// Data files compiled into the binary at build time (cmake/embed.cmake): the
// lever catalogs under skills/levers and, later, the gate rules. Nothing at run
// time can change them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attune {

struct EmbeddedFile {
  std::string path;     // relative to the repository root, e.g. "skills/levers/megatron.yaml"
  std::string content;
};

const std::vector<EmbeddedFile>& embedded_files();
// The file at `path`, or nullptr.
const EmbeddedFile* find_embedded(std::string_view path);

}  // namespace attune
