#include "attune/util/file.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "attune/util/error.h"
#include "attune/util/input_file.h"

namespace attune {

std::string read_file(const std::string& path) {
  regular_file_size(path, "file");  // a named pipe would block the read, a device never end
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError({path, 0, 0}, "", std::string("cannot read file: ") + std::strerror(errno));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError({path, 0, 0}, "", "error while reading file");
  return buf.str();
}

namespace {

// Where writing `given` must land: a symlink's target (the link stays a link),
// the path itself when nothing is there; refused when it is not a regular file
// (a device, a pipe, a directory), which renaming over would replace.
std::string write_destination(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path(given);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hops) {
    if (hops > 32) throw InputError({given, 0, 0}, "", "cannot write file: too many levels of symbolic links");
    fs::path target = fs::read_symlink(path, ec);
    if (ec) throw InputError({given, 0, 0}, "", "cannot write file: " + ec.message());
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw InputError({given, 0, 0}, "", "cannot write file: not a regular file (a device, pipe, socket or directory); "
                                        "attune replaces only regular files");
  }
  return path.string();
}

}  // namespace

void write_file_atomic(const std::string& given, const std::string& content, bool durable) {
  const std::string path = write_destination(given);
  std::string tmp = path + ".attune-tmp-XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) {
    throw InputError({path, 0, 0}, "", std::string("cannot write file: ") + std::strerror(errno));
  }
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError({path, 0, 0}, "", std::string("cannot write file: ") + std::strerror(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw InputError({path, 0, 0}, "", std::string("cannot write file: ") + std::strerror(err));
  }
  // Keep the permissions of a file we replace (a launch script stays executable).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) ::chmod(tmp.c_str(), st.st_mode & 07777);
  else ::chmod(tmp.c_str(), 0644);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw InputError({path, 0, 0}, "", std::string("cannot replace file: ") + std::strerror(err));
  }
}

std::string current_executable(const std::string& fallback) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? fallback : self.string();
}

}  // namespace attune
