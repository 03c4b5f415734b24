#include "attune/cli/flag_checks.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "attune/recipe/framework.h"
#include "attune/recipe/hardware.h"

namespace attune::cli {

namespace {

std::optional<long long> whole(const std::string& text) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
  return v;
}

std::optional<double> number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

constexpr recipe::Framework kFrameworks[] = {recipe::Framework::Megatron,   recipe::Framework::AutoModel,
                                             recipe::Framework::Torchtitan, recipe::Framework::HyperPod,
                                             recipe::Framework::Axolotl,    recipe::Framework::Bridge};

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

CLI::Validator whole_number(long long min, long long max) {
  const std::string desc = min == 1 ? "POSITIVE" : min == 0 ? "NONNEGATIVE" : "";
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const auto v = whole(text);
        if (v && *v >= min && *v <= max) return "";
        if (v && *v > max) return fmt::format("expected a whole number of at most {}, got '{}'", max, text);
        return fmt::format("expected a whole number of at least {}, got '{}'", min, text);
      },
      desc);
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        return ec == std::errc() && end == text.data() + text.size() && !text.empty()
                   ? ""
                   : fmt::format("expected a whole number from 0 to 18446744073709551615, got '{}'", text);
      },
      "NONNEGATIVE");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = number(text);
        return v && *v > 0 ? "" : fmt::format("expected a number greater than 0, got '{}'", text);
      },
      "POSITIVE");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = number(text);
        return v && *v >= 0 ? "" : fmt::format("expected a number of at least 0, got '{}'", text);
      },
      "NONNEGATIVE");
}

CLI::Validator one_of(const std::vector<std::string>& names, const std::string& what, const std::string& desc,
                      const std::string& qualifier) {
  return CLI::Validator(
      [names, what, qualifier](std::string& text) -> std::string {
        if (text.empty() || std::find(names.begin(), names.end(), text) != names.end()) return "";
        return fmt::format("unknown {} '{}'{} (expected one of: {})", what, text, qualifier, join_names(names));
      },
      desc);
}

std::string recipe_framework_names() {
  std::vector<std::string> names;
  for (recipe::Framework f : kFrameworks) names.push_back(recipe::to_string(f));
  return join_names(names);
}

CLI::Validator recipe_framework() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || recipe::parse_framework(text)) return "";
        return fmt::format("unknown framework '{}' (expected one of: {})", text, recipe_framework_names());
      },
      "");
}

CLI::Validator gpu_type() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || recipe::normalize_gpu(text)) return "";
        return fmt::format("unknown GPU type '{}' (expected one of: h100, h200, b200)", text);
      },
      "");
}

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) return fmt::format("no such file '{}'", path);
        if (std::filesystem::is_directory(st)) return fmt::format("'{}' is a directory, not a file", path);
        return "";
      },
      "FILE");
}

CLI::Validator existing_directory() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) return fmt::format("no such directory '{}'", path);
        if (!std::filesystem::is_directory(st)) return fmt::format("'{}' is a file, not a directory", path);
        return "";
      },
      "DIR");
}

}  // namespace attune::cli
