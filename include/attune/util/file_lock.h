// FileLock: an exclusive advisory lock (flock) on a file, held for the
// object's lifetime, so that two processes never work in one place at once;
// the holder's pid is written into the file so a refused process can name it.
//
// The kernel drops the lock when the holder's descriptor closes — when the
// object is destroyed, or the process dies however it dies — so a crash
// never leaves a stale lock behind (a stale pid in the file means nothing
// without the lock). The descriptor is close-on-exec: programs the holder
// starts do not inherit the lock (a process that forks without exec must
// close it itself). Advisory: it excludes only processes that take the same
// lock. On NFS, Linux emulates flock with a whole-file byte-range lock,
// which other clients see too.
//
// A FileLock is owned by one thread; moving it moves the lock.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace attune {

class FileLock {
 public:
  // Takes the lock on `path` (created with its parent directories when
  // missing) if it is free. nullopt when another process holds it;
  // *holder_pid (if given) then gets that process's pid (0 if unreadable).
  // InputError naming the file when it cannot be created or opened.
  static std::optional<FileLock> try_lock(const std::string& path, long* holder_pid = nullptr);
  // Takes the lock, waiting for as long as another process holds it.
  static FileLock lock(const std::string& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // releases the lock

  const std::string& path() const { return path_; }

 private:
  FileLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void release();

  int fd_ = -1;
  std::string path_;
};

}  // namespace attune
