#include "attune/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "attune/util/process_parts.h"
#include "attune/util/text.h"

extern char** environ;

namespace attune {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kDefaultTimeoutS = 30;
constexpr double kMaxTimeoutS = 1e7;  // keeps the deadline arithmetic finite
// How long a child's pipes may stay open after it exited (a background
// grandchild holding them) before we stop reading.
constexpr auto kDrainAfterExit = std::chrono::milliseconds(500);
// How often a quiet child is checked for having exited.
constexpr auto kExitCheck = std::chrono::milliseconds(100);
// How long a child killed at the timeout gets to be reaped.
constexpr auto kReapAfterKill = std::chrono::seconds(2);



// Reads what is there; false at end of file (or on an error).
bool read_some(int fd, std::string& into) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

std::string format_seconds(double s) { return fmt::format("{:g}", s); }

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty() || argv[0].empty()) {
    result.exit_code = 127;
    result.error = "no program to run (empty argv)";
    return result;
  }
  double timeout_s = options.timeout_s;
  if (!(timeout_s > 0)) timeout_s = kDefaultTimeoutS;
  timeout_s = std::min(timeout_s, kMaxTimeoutS);

  // Everything the child needs is built here: after fork it only makes system calls.
  std::vector<std::string> env = environment_with(options.env);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv = c_strings(args);
  std::vector<char*> c_envp = c_strings(env);

  Fd out_r, out_w, err_r, err_w, in_r, in_w, report_r, report_w;
  make_pipe(out_r, out_w, "run_process");
  make_pipe(err_r, err_w, "run_process");
  make_pipe(report_r, report_w, "run_process");
  if (options.stdin_text.empty()) {
    in_r.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!in_r.open() || !lift_above_stdio(in_r)) throw_errno("run_process: open /dev/null");
  } else {
    make_pipe(in_r, in_w, "run_process");
  }

  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("run_process: fork");
  if (pid == 0) {
    // The child: async-signal-safe calls only.
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(in_r.get(), 0) < 0 || ::dup2(out_w.get(), 1) < 0 || ::dup2(err_w.get(), 2) < 0) {
      const int err = errno;
      [[maybe_unused]] const ssize_t n = ::write(report_w.get(), &err, sizeof err);
      ::_exit(127);
    }
    // Nothing else of attune's (another thread's descriptors) reaches the program.
#ifdef CLOSE_RANGE_CLOEXEC
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    environ = c_envp.data();  // execvp looks argv[0] up on the child's PATH
    ::execvp(c_argv[0], c_argv.data());
    const int err = errno;
    [[maybe_unused]] const ssize_t n = ::write(report_w.get(), &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it (EACCES after exec is fine)
  out_w.reset();
  err_w.reset();
  in_r.reset();
  report_w.reset();
  for (Fd* fd : {&out_r, &err_r, &in_w}) {
    if (fd->open()) ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  }

  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  std::size_t in_offset = 0;
  std::string report;
  bool exited = false;
  bool status_known = true;
  int status = 0;
  Clock::time_point exit_time;
  auto idle_pause = std::chrono::milliseconds(1);

  const auto try_reap = [&] {
    if (exited) return;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      status_known = r == pid;  // ECHILD: reaped elsewhere (SIGCHLD ignored)
      exited = true;
      exit_time = Clock::now();
    }
  };

  while (true) {
    try_reap();
    const bool pipes_open = out_r.open() || err_r.open() || report_r.open();
    const auto now = Clock::now();
    if (exited && (!pipes_open || now - exit_time >= kDrainAfterExit)) break;
    if (!exited && now >= deadline) {
      ::killpg(pid, SIGKILL);
      ::kill(pid, SIGKILL);  // in case it never got its own group
      result.timed_out = true;
      const auto reap_deadline = Clock::now() + kReapAfterKill;
      auto pause = std::chrono::milliseconds(1);
      while (!exited && Clock::now() < reap_deadline) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
        try_reap();
      }
      // Whatever the killed group wrote before it died.
      for (Fd* fd : {&out_r, &err_r}) {
        if (fd->open()) read_some(fd->get(), fd == &out_r ? result.out : result.err);
      }
      break;
    }

    // How long to wait for the next event.
    Clock::duration wait = deadline - now;
    if (exited) wait = std::min<Clock::duration>(wait, exit_time + kDrainAfterExit - now);
    else wait = std::min<Clock::duration>(wait, kExitCheck);
    if (!pipes_open && !exited) {
      // The child closed its outputs but lives on: back off while it exits.
      wait = std::min<Clock::duration>(wait, idle_pause);
      idle_pause = std::min(idle_pause * 2, std::chrono::milliseconds(50));
    }
    int wait_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count());
    wait_ms = std::max(wait_ms, 0);

    pollfd fds[4];
    Fd* owners[4];
    nfds_t n = 0;
    for (Fd* fd : {&out_r, &err_r, &report_r}) {
      if (!fd->open()) continue;
      fds[n] = pollfd{fd->get(), POLLIN, 0};
      owners[n++] = fd;
    }
    if (in_w.open()) {
      fds[n] = pollfd{in_w.get(), POLLOUT, 0};
      owners[n++] = &in_w;
    }
    const int ready = ::poll(fds, n, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw_errno("run_process: poll");
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      Fd* fd = owners[i];
      if (fd == &in_w) {
        const bool gone = (fds[i].revents & (POLLERR | POLLHUP)) || !write_to_pipe(in_w.get(), options.stdin_text, in_offset);
        if (gone || in_offset == options.stdin_text.size())
          in_w.reset();  // all written, or the child stopped reading: EOF for it
        continue;
      }
      std::string& into = fd == &out_r ? result.out : fd == &err_r ? result.err : report;
      if (!read_some(fd->get(), into)) fd->reset();
    }
  }

  if (report.size() >= sizeof(int)) {
    int err = 0;
    std::memcpy(&err, report.data(), sizeof err);
    result.exit_code = err == ENOENT ? 127 : 126;
    result.error = err == ENOENT ? fmt::format("program '{}' not found", argv[0])
                                 : fmt::format("cannot execute '{}': {}", argv[0], errno_text(err));
    result.timed_out = false;
    return result;
  }
  if (result.timed_out) {
    result.exit_code = -1;
    result.error = fmt::format("timed out after {} s", format_seconds(timeout_s));
  } else if (!status_known) {
    result.exit_code = -1;
    result.error = "exit status unknown (reaped elsewhere)";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.error = fmt::format("killed by signal {}", WTERMSIG(status));
  } else {
    result.exit_code = -1;
    result.error = fmt::format("wait status {}", status);
  }
  return result;
}

std::string ProcessResult::failure() const {
  if (!error.empty() && (timed_out || (exit_code != 0 && err.empty()))) return error;
  for (const std::string& text : {err, out}) {
    for (const auto& line : split_lines(text)) {
      if (!trim(line).empty()) return std::string(trim(line));
    }
  }
  return error.empty() ? fmt::format("exit status {}", exit_code) : error;
}

}  // namespace attune
