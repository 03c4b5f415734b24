#include "attune/recipe/hardware.h"

#include <cctype>
#include <string>

namespace attune::recipe {

std::optional<std::string> normalize_gpu(std::string_view text) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // AWS instance families first: p5/p5e/p5en are H100/H200, p6-b200 is B200.
  if (t.find("p6-b200") != std::string::npos || t.find("b200") != std::string::npos ||
      t.find("gb200") != std::string::npos) {
    return "b200";
  }
  if (t.find("h200") != std::string::npos || t.find("p5e") != std::string::npos) return "h200";
  if (t.find("h100") != std::string::npos || t.find("p5.") != std::string::npos || t == "p5") return "h100";
  return std::nullopt;
}

}  // namespace attune::recipe
