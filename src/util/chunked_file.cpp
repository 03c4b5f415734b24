#include "attune/util/chunked_file.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "attune/util/error.h"
#include "attune/util/input_file.h"

namespace attune {

namespace {

struct Reading {
  const std::string& path;
  const std::string& what;
  const std::function<void(std::string_view)>& on_chunk;
  std::vector<char> buf = std::vector<char>(kFileChunkBytes);

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(SourceLocation{path, 0, 0}, "", "cannot read " + what + ": " + why);
  }
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

bool has_gzip_magic(int fd) {
  unsigned char magic[2] = {0, 0};
  return ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// Takes the descriptor: gzclose closes it.
void read_gzip(int fd, Reading& r) {
  gzFile gz = gzdopen(fd, "rb");
  if (gz == nullptr) {
    ::close(fd);
    r.fail(std::strerror(errno));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(gz, gzclose);
  gzbuffer(gz, static_cast<unsigned>(kFileChunkBytes));
  for (;;) {
    const int got = gzread(gz, r.buf.data(), static_cast<unsigned>(r.buf.size()));
    if (got < 0) {
      int code = 0;
      r.fail(std::string("gzip: ") + gzerror(gz, &code));
    }
    if (got == 0) break;
    r.on_chunk(std::string_view(r.buf.data(), static_cast<std::size_t>(got)));
  }
  int code = 0;
  const char* why = gzerror(gz, &code);
  // A truncated stream ends with Z_BUF_ERROR instead of a clean end of file.
  if (code != Z_OK && code != Z_STREAM_END) r.fail(std::string("gzip: ") + (why == nullptr ? "" : why));
}

void read_plain(std::FILE* f, Reading& r) {
  for (;;) {
    const std::size_t got = std::fread(r.buf.data(), 1, r.buf.size(), f);
    if (got > 0) r.on_chunk(std::string_view(r.buf.data(), got));
    if (got < r.buf.size()) break;
  }
  if (std::ferror(f)) r.fail(std::strerror(errno));
}

}  // namespace

void read_file_chunks(const std::string& path, const std::string& what,
                      const std::function<void(std::string_view)>& on_chunk) {
  Reading r{path, what, on_chunk};
  // Opened as a regular file only: a FIFO or a device would block or never end.
  const int fd = open_regular_file(path, what);
  if (has_gzip_magic(fd)) {
    read_gzip(fd, r);
    return;
  }
  std::unique_ptr<std::FILE, FileCloser> f(::fdopen(fd, "rb"));
  if (!f) {
    ::close(fd);
    r.fail(std::strerror(errno));
  }
  read_plain(f.get(), r);
}

}  // namespace attune
