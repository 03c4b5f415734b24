// Replays fuzz inputs without libFuzzer: calls LLVMFuzzerTestOneInput on every
// file of the directories (or on the files) given as arguments, in name order.
// Hidden files (.gitkeep) are skipped. A crash or a failed invariant aborts the
// program, which fails the ctest test; a missing or unreadable path is exit 2.
//
//   fuzz_replay_megatron tests/fuzz/corpus/megatron tests/fuzz/regressions/megatron
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

bool read_bytes(const fs::path& p, std::vector<std::uint8_t>& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool is_hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name.front() == '.';
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file(ec) && !is_hidden(e.path())) files.push_back(e.path());
      }
      if (ec) {
        std::fprintf(stderr, "cannot list %s: %s\n", argv[i], ec.message().c_str());
        return 2;
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }

  std::vector<std::uint8_t> bytes;
  for (const fs::path& p : inputs) {
    if (!read_bytes(p, bytes)) {
      std::fprintf(stderr, "cannot read %s\n", p.string().c_str());
      return 2;
    }
    std::fprintf(stderr, "running %s (%zu bytes)\n", p.string().c_str(), bytes.size());
    // An exactly-sized copy, as libFuzzer passes it: reads past the end are caught under ASan.
    std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(exact.data(), exact.size());
  }
  std::printf("replayed %zu input(s)\n", inputs.size());
  return 0;
}
