// libFuzzer target for the profile readers (src/diagnose/profile): raw bytes
// -> ProfileStreamReader, fed in three pieces split at points derived from the
// data (each its own exactly-sized heap buffer, so ASan sees reads past a
// piece), as read_profile() feeds 1 MiB chunks; then the summary's JSON. Bad
// input must end in InputError, never a crash. The whole-buffer entry point
// read_profile_text() must agree with the chunked one.
//
// Built like log_fuzz_target.cpp (tests/fuzz/CMakeLists.txt): with libFuzzer
// for scripts/fuzz.sh, and with replay_main.cpp for ctest -L fuzz_corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "../../src/diagnose/profile/profile_stream.h"
#include "attune/diagnose/profile.h"
#include "attune/util/error.h"

namespace {

std::optional<std::string> summarise_in_pieces(const std::uint8_t* data, std::size_t size) {
  const std::size_t a = size > 0 ? data[0] % (size + 1) : 0;
  const std::size_t b = size > 1 ? a + data[size - 1] % (size - a + 1) : size;
  attune::diagnose::profile::ProfileStreamReader reader("fuzz-input");
  try {
    for (auto [from, to] : {std::pair{std::size_t{0}, a}, std::pair{a, b}, std::pair{b, size}}) {
      auto piece = std::make_unique<char[]>(to - from + 1);
      if (to > from) std::memcpy(piece.get(), data + from, to - from);
      reader.feed(std::string_view(piece.get(), to - from));
    }
    return to_json(reader.finish()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const attune::InputError&) {
    return std::nullopt;
  }
}

std::optional<std::string> summarise_whole(const std::uint8_t* data, std::size_t size) {
  try {
    std::string text(reinterpret_cast<const char*>(data), size);
    return to_json(attune::diagnose::read_profile_text(text, "fuzz-input"))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const attune::InputError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto pieces = summarise_in_pieces(data, size);
  const auto whole = summarise_whole(data, size);
  // How the bytes arrive must not change the answer.
  if (pieces.has_value() != whole.has_value() || (pieces && *pieces != *whole)) {
    std::fprintf(stderr, "chunked and whole-buffer summaries differ:\n%s\n%s\n", pieces ? pieces->c_str() : "(error)",
                 whole ? whole->c_str() : "(error)");
    std::abort();
  }
  return 0;
}
