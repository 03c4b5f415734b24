#include "attune/report/sha256.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "attune/util/error.h"
#include "attune/util/input_file.h"

namespace attune::report {

FileHash sha256_file(const std::string& path) {
  regular_file_size(path, "the file");  // a pipe or a device is refused before it is opened
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", fmt::format("cannot read: {}", std::strerror(errno)));
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw InputError({path, 0, 0}, "", "SHA-256 is not available");
  FileHash h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), got);
    h.bytes += got;
  }
  if (in.bad()) throw InputError({path, 0, 0}, "", "read failed part way");
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  for (unsigned int i = 0; i < len; ++i) h.sha256 += fmt::format("{:02x}", md[i]);
  return h;
}

}  // namespace attune::report
