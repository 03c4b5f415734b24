#include "attune/diagnose/profile.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "attune/util/error.h"
#include "profile_stream.h"

namespace attune::diagnose {
namespace {

constexpr std::size_t kChunkSize = std::size_t{1} << 20;  // 1 MiB: large reads, bounded memory

[[noreturn]] void throw_read_error(const std::string& path, const std::string& why) {
  throw InputError(SourceLocation{path, 0, 0}, "", "cannot read profile: " + why);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

bool has_gzip_magic(std::FILE* f) {
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, f);
  std::rewind(f);
  return got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

void read_gzip(const std::string& path, profile::ProfileStreamReader& reader, std::vector<char>& buf) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw_read_error(path, std::strerror(errno));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(gz, gzclose);
  gzbuffer(gz, static_cast<unsigned>(kChunkSize));
  for (;;) {
    const int got = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (got < 0) {
      int code = 0;
      throw_read_error(path, std::string("gzip: ") + gzerror(gz, &code));
    }
    if (got == 0) break;
    reader.feed(std::string_view(buf.data(), static_cast<std::size_t>(got)));
  }
  int code = 0;
  const char* why = gzerror(gz, &code);
  // A truncated stream ends with Z_BUF_ERROR instead of a clean end of file.
  if (code != Z_OK && code != Z_STREAM_END) {
    throw_read_error(path, std::string("gzip: ") + (why == nullptr ? "" : why));
  }
}

void read_plain(std::FILE* f, const std::string& path, profile::ProfileStreamReader& reader,
                std::vector<char>& buf) {
  for (;;) {
    const std::size_t got = std::fread(buf.data(), 1, buf.size(), f);
    if (got > 0) reader.feed(std::string_view(buf.data(), got));
    if (got < buf.size()) break;
  }
  if (std::ferror(f)) throw_read_error(path, std::strerror(errno));
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

ProfileSummary read_profile(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw_read_error(path, std::strerror(errno));
  profile::ProfileStreamReader reader(path);
  std::vector<char> buf(kChunkSize);
  if (has_gzip_magic(f.get())) {
    f.reset();
    read_gzip(path, reader, buf);
  } else {
    read_plain(f.get(), path, reader, buf);
  }
  return reader.finish();
}

ProfileSummary read_profile_text(std::string_view text, const std::string& name_for_errors) {
  // Fed in chunks like a file, so the reader never copies the whole text.
  profile::ProfileStreamReader reader(name_for_errors);
  for (std::size_t i = 0; i < text.size(); i += kChunkSize) reader.feed(text.substr(i, kChunkSize));
  return reader.finish();
}

nlohmann::json to_json(const ProfileSummary& p) {
  nlohmann::json top = nlohmann::json::array();
  for (const TopKernel& k : p.top_kernels) {
    top.push_back({{"name", k.name}, {"kind", k.kind}, {"total_s", k.total_s}, {"count", k.count},
                   {"share", k.share}});
  }
  return {
      {"source", p.source},
      {"window_s", optional_json(p.window_s)},
      {"compute_s", p.compute_s},
      {"communication_s", p.communication_s},
      {"memory_s", p.memory_s},
      {"exposed_communication_s", optional_json(p.exposed_communication_s)},
      {"idle_s", optional_json(p.idle_s)},
      {"overlap_pct", optional_json(p.overlap_pct)},
      {"shares",
       {{"basis", p.share_basis},
        {"compute", optional_json(p.compute_share)},
        {"communication", optional_json(p.communication_share)},
        {"memory", optional_json(p.memory_share)},
        {"exposed_communication", optional_json(p.exposed_communication_share)},
        {"idle", optional_json(p.idle_share)}}},
      {"steps", optional_json(p.steps)},
      {"devices", optional_json(p.devices)},
      {"kernel_launches", p.kernel_launches},
      {"summed_kernel_s", p.summed_kernel_s},
      {"top_kernels", top},
      {"notes", p.notes},
  };
}

}  // namespace attune::diagnose
