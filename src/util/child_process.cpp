#include "attune/util/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace attune {

namespace {

using Clock = std::chrono::steady_clock;

// How long a child killed with SIGKILL gets to be reaped.
constexpr auto kReapAfterKill = std::chrono::seconds(2);
// How long a child whose stdout closed gets to exit before it is reported as
// having closed its output (its exit status unknown yet).
constexpr auto kExitAfterEof = std::chrono::milliseconds(500);

void set_nonblocking(const Fd& fd) { ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK); }

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
}

int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

std::string seconds_text(double s) { return fmt::format("{:g} s", s); }

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options) : options_(options) {
  if (argv.empty() || argv[0].empty()) {
    error_ = "no program to run (empty argv)";
    exit_code_ = 127;
    return;
  }
  program_ = argv[0];
  // Everything the child needs is built here: after fork it only makes system calls.
  std::vector<std::string> env = environment_with(options.env);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv = c_strings(args);
  std::vector<char*> c_envp = c_strings(env);

  Fd in_r, out_w, err_w, report_r, report_w;
  make_pipe(in_r, in_, "ChildProcess");
  make_pipe(out_, out_w, "ChildProcess");
  make_pipe(err_fd_, err_w, "ChildProcess");
  make_pipe(report_r, report_w, "ChildProcess");

  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("ChildProcess: fork");
  if (pid == 0) {
    // The child: async-signal-safe calls only.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(in_r.get(), 0) >= 0 && ::dup2(out_w.get(), 1) >= 0 && ::dup2(err_w.get(), 2) >= 0) {
#ifdef CLOSE_RANGE_CLOEXEC
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
      environ = c_envp.data();  // execvp looks argv[0] up on the child's PATH
      ::execvp(c_argv[0], c_argv.data());
    }
    const int err = errno;
    [[maybe_unused]] const ssize_t n = ::write(report_w.get(), &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  pid_ = pid;
  report_w.reset();
  in_r.reset();
  out_w.reset();
  err_w.reset();

  // The report pipe closes at exec (close-on-exec) or carries exec's errno.
  int err = 0;
  ssize_t n;
  do {
    n = ::read(report_r.get(), &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {
    for (Fd* fd : {&in_, &out_, &err_fd_}) fd->reset();
    reap(true);
    exit_code_ = err == ENOENT ? 127 : 126;
    error_ = err == ENOENT ? fmt::format("program '{}' not found", program_)
                           : fmt::format("cannot execute '{}': {}", program_, errno_text(err));
    return;
  }
  for (const Fd* fd : {&in_, &out_, &err_fd_}) set_nonblocking(*fd);
}

ChildProcess::~ChildProcess() { close(); }

void ChildProcess::reap(bool block) {
  if (exited_ || pid_ < 0) return;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status_, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exited_ = true;
    exit_code_ = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  } else if (r < 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): its status is unknown
    exited_ = true;
    status_ = -1;
  }
}

void ChildProcess::describe_exit() {
  if (!exited_) {
    error_ = "closed its output";
  } else if (status_ == -1) {
    error_ = "exited (status unknown)";
  } else if (WIFEXITED(status_)) {
    error_ = fmt::format("exited with status {}", WEXITSTATUS(status_));
  } else if (WIFSIGNALED(status_)) {
    error_ = fmt::format("killed by signal {}", WTERMSIG(status_));
  } else {
    error_ = fmt::format("wait status {}", status_);
  }
}

bool ChildProcess::running() {
  reap(false);
  return pid_ > 0 && !exited_;
}

void ChildProcess::drain(Fd& fd, std::string& into, bool keep_tail) {
  char buf[65536];
  while (fd.open()) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      if (keep_tail && into.size() > options_.stderr_keep) into.erase(0, into.size() - options_.stderr_keep);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.reset();  // end of file (or an error): nothing more will come
  }
}

// One wait of at most timeout_s for output (or, with want_write, room in the
// child's stdin); whatever arrived is read into the buffers.
void ChildProcess::wait_for_events(double timeout_s, bool want_write) {
  pollfd fds[3];
  nfds_t n = 0;
  if (out_.open()) fds[n++] = pollfd{out_.get(), POLLIN, 0};
  if (err_fd_.open()) fds[n++] = pollfd{err_fd_.get(), POLLIN, 0};
  if (want_write && in_.open()) fds[n++] = pollfd{in_.get(), POLLOUT, 0};
  const int ms = ms_until(deadline_after(timeout_s));
  if (n == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms, 10)));
    return;
  }
  if (::poll(fds, n, ms) < 0 && errno != EINTR) throw_errno("ChildProcess: poll");
  drain(out_, out_buf_, false);
  drain(err_fd_, err_, true);
}

bool ChildProcess::write_line(std::string_view line, double timeout_s) {
  if (!in_.open()) {
    if (error_.empty()) error_ = "its input is closed";
    return false;
  }
  const std::string text = std::string(line) + "\n";
  std::size_t offset = 0;
  const auto deadline = deadline_after(timeout_s);
  while (true) {
    if (!write_to_pipe(in_.get(), text, offset)) {
      in_.reset();
      reap(false);
      describe_exit();
      error_ = "stopped reading its input (" + error_ + ")";
      return false;
    }
    if (offset == text.size()) {
      error_.clear();
      return true;
    }
    if (Clock::now() >= deadline) {
      error_ = fmt::format("did not take a line within {}", seconds_text(timeout_s));
      return false;
    }
    wait_for_events(std::chrono::duration<double>(deadline - Clock::now()).count(), true);
  }
}

std::optional<std::string> ChildProcess::read_line(double timeout_s) {
  const auto deadline = deadline_after(timeout_s);
  while (true) {
    const std::size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      error_.clear();
      return line;
    }
    if (!out_.open()) {
      // Its stdout is closed: it exited, or will in a moment.
      const auto exit_deadline = Clock::now() + kExitAfterEof;
      while (!exited_ && Clock::now() < exit_deadline) {
        wait_for_events(0.01, false);
        reap(false);
      }
      describe_exit();
      return std::nullopt;
    }
    if (Clock::now() >= deadline) {
      error_ = fmt::format("no line within {}", seconds_text(timeout_s));
      return std::nullopt;
    }
    wait_for_events(std::chrono::duration<double>(deadline - Clock::now()).count(), false);
  }
}

void ChildProcess::close(double grace_s) {
  if (pid_ < 0) return;
  in_.reset();  // EOF: a well-behaved child exits on its own
  const auto deadline = deadline_after(grace_s);
  while (!exited_ && Clock::now() < deadline) {
    wait_for_events(std::min(0.01, std::chrono::duration<double>(deadline - Clock::now()).count()), false);
    reap(false);
  }
  if (!exited_) {
    ::killpg(pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // in case it never got its own group
    const auto reap_deadline = Clock::now() + kReapAfterKill;
    while (!exited_ && Clock::now() < reap_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      reap(false);
    }
  }
  drain(err_fd_, err_, true);
  out_.reset();
  err_fd_.reset();
  pid_ = -1;
}

}  // namespace attune
