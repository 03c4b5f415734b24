// InputError: a problem with what the user gave attune (a file, a flag, a value).
// It carries where the problem is (file, line, column, key) so every message can
// say exactly what to fix. The CLI turns it into exit status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace attune {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, std::string message);

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string message_;
};

// "file:line:col: key 'k': message" with the parts that are known.
std::string format_error(const SourceLocation& where, const std::string& key,
                         const std::string& message);

}  // namespace attune
