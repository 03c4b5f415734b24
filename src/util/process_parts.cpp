#include "attune/util/process_parts.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

extern char** environ;

namespace attune {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

bool lift_above_stdio(Fd& fd) {
  if (fd.get() < 0 || fd.get() > 2) return true;
  const int high = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (high < 0) return false;
  fd.reset(high);
  return true;
}

void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

void make_pipe(Fd& read_end, Fd& write_end, const char* who) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno((std::string(who) + ": pipe").c_str());
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  if (!lift_above_stdio(read_end) || !lift_above_stdio(write_end)) throw_errno((std::string(who) + ": fcntl").c_str());
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (!overrides.count(std::string(kv.substr(0, kv.find('='))))) out.emplace_back(kv);
  }
  for (const auto& [key, value] : overrides) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos)
      throw std::invalid_argument("environment variable name '" + key + "' is invalid");
    out.push_back(key + "=" + value);
  }
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

bool write_to_pipe(int fd, const std::string& text, std::size_t& offset) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigemptyset(&pending);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  bool ok = true;
  while (offset < text.size()) {
    const ssize_t n = ::write(fd, text.data() + offset, text.size() - offset);
    if (n > 0) {
      offset += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EPIPE && !was_pending) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    ok = false;
    break;
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return ok;
}

}  // namespace attune
