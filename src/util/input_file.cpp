#include "attune/util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attune/util/error.h"

namespace attune {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw InputError(SourceLocation{path, 0, 0}, "", message);
}

void require_regular(const std::string& path, const std::string& what, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return;
  fail(path, what + " is a " + file_type_name(st.st_mode) +
                 ", not a regular file: attune reads only regular files (save a stream to a file first)");
}

}  // namespace

std::string file_type_name(unsigned mode) {
  if (S_ISREG(mode)) return "regular file";
  if (S_ISFIFO(mode)) return "named pipe (FIFO)";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

std::uint64_t regular_file_size(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail(path, "cannot read " + what + ": " + std::strerror(errno));
  require_regular(path, what, st);
  return static_cast<std::uint64_t>(st.st_size);
}

int open_regular_file(const std::string& path, const std::string& what) {
  regular_file_size(path, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot read " + what + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(path, "cannot read " + what + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    require_regular(path, what, st);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace attune
