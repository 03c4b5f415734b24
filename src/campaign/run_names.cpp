#include "attune/campaign/run_names.h"

#include <cctype>
#include <ctime>
#include <filesystem>

namespace attune::campaign {

namespace fs = std::filesystem;

std::string recipe_stem(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) return p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
  std::string stem = p.filename().string();
  for (const char* suffix : {".attune.yaml", ".yaml", ".yml", ".toml", ".sh"}) {
    const std::string s(suffix);
    if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
      stem.resize(stem.size() - s.size());
      break;
    }
  }
  if (stem == "scenario") {
    const std::string dir = p.parent_path().filename().string();
    if (!dir.empty()) return dir;
  }
  return stem;
}

std::string stamped_dir(const std::string& root, const std::string& recipe_file) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);  // std::localtime's buffer is shared by the bench's threads
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  return (fs::path(root) / (recipe_stem(recipe_file) + "-" + stamp)).string();
}

std::string job_safe(const std::string& text, std::size_t length) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
  return out.substr(0, length);
}

}  // namespace attune::campaign
