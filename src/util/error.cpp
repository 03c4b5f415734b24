#include "attune/util/error.h"

namespace attune {

std::string format_error(const SourceLocation& where, const std::string& key,
                         const std::string& message) {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) {
      out += ":" + std::to_string(where.line);
      if (where.column > 0) out += ":" + std::to_string(where.column);
    }
    out += ": ";
  }
  if (!key.empty()) out += "key '" + key + "': ";
  out += message;
  return out;
}

InputError::InputError(SourceLocation where, std::string key, std::string message)
    : std::runtime_error(format_error(where, key, message)),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

}  // namespace attune
