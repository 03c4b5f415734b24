// The POSIX pieces shared by the code that starts child processes
// (run_process, the local cluster): an owned file descriptor, errno as text,
// moving a descriptor out of the way of stdio, the environment with
// overrides, and argv/envp arrays for execve. Domain-free.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attune {

// Owns a file descriptor; closes it when reset or destroyed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

std::string errno_text(int err);

// Moves a close-on-exec descriptor above 2, so a child's dup2 onto 0..2 never
// lands on one of its own sources (when attune runs with stdio closed). False
// when the descriptor could not be moved (errno says why).
bool lift_above_stdio(Fd& fd);

[[noreturn]] void throw_errno(const char* what);  // std::system_error from errno

// A close-on-exec pipe, both ends above stdio; std::system_error naming `who`.
void make_pipe(Fd& read_end, Fd& write_end, const char* who);

// This process's environment with `overrides` added (replacing same-named
// entries). std::invalid_argument names an override whose name is empty or
// holds '=' or NUL.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides);

// A NULL-terminated array pointing into `strings` (which must outlive it).
std::vector<char*> c_strings(std::vector<std::string>& strings);

// Writes what a non-blocking pipe takes of text[offset..], advancing offset.
// A reader that has gone (EPIPE, or another error) gives false, its SIGPIPE
// taken back off this thread instead of killing attune; true otherwise (a
// full pipe, EAGAIN, included).
bool write_to_pipe(int fd, const std::string& text, std::size_t& offset);

}  // namespace attune
