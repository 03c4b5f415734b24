// SHA-256 of a file's bytes (OpenSSL EVP), streamed, as lower-case hex: what
// the export record names each log by.
#pragma once

#include <cstdint>
#include <string>

namespace attune::report {

struct FileHash {
  std::string sha256;        // 64 hex digits
  std::uint64_t bytes = 0;
};

// InputError naming the file when it cannot be read.
FileHash sha256_file(const std::string& path);

}  // namespace attune::report
