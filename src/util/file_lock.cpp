#include "attune/util/file_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "attune/util/error.h"
#include "attune/util/process_parts.h"

namespace attune {

namespace {

int open_lock_file(const std::string& path) {
  if (path.empty()) throw InputError({}, "", "a lock file's path is empty");
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw InputError({path, 0, 0}, "", "cannot create the lock file's directory: " + ec.message());
  }
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw InputError({path, 0, 0}, "", "cannot create the lock file: " + errno_text(errno));
  return fd;
}

// Best effort: the lock is what excludes; the pid only helps a refused
// process say who holds it. Written over the old text before the file is cut
// to its length, so a reader never finds it empty midway.
void write_holder(int fd) {
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
    [[maybe_unused]] const int r = ::ftruncate(fd, static_cast<off_t>(text.size()));
  }
}

long parse_holder(int fd) {
  char buf[32];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  long pid = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9' && pid < 100000000L; ++i) pid = pid * 10 + (buf[i] - '0');
  return pid;
}

bool process_exists(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The holder's pid. A holder that has just taken the lock may not have
// written its pid yet (the file is new, or still names the previous holder,
// who has exited): read again for a little while.
long read_holder(int fd) {
  long pid = parse_holder(fd);
  for (int i = 0; i < 20 && !process_exists(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pid = parse_holder(fd);
  }
  return pid;
}

}  // namespace

std::optional<FileLock> FileLock::try_lock(const std::string& path, long* holder_pid) {
  const int fd = open_lock_file(path);
  int r;
  do {
    r = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK && holder_pid != nullptr) *holder_pid = read_holder(fd);
    ::close(fd);
    if (err != EWOULDBLOCK) throw InputError({path, 0, 0}, "", "cannot lock the file: " + errno_text(err));
    return std::nullopt;
  }
  write_holder(fd);
  return FileLock(fd, path);
}

FileLock FileLock::lock(const std::string& path) {
  const int fd = open_lock_file(path);
  int r;
  do {
    r = ::flock(fd, LOCK_EX);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    const int err = errno;
    ::close(fd);
    throw InputError({path, 0, 0}, "", "cannot lock the file: " + errno_text(err));
  }
  write_holder(fd);
  return FileLock(fd, path);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor drops the lock
  fd_ = -1;
}

}  // namespace attune
