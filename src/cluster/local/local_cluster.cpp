#include "attune/cluster/local/local_cluster.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attune/util/process_parts.h"

extern char** environ;

namespace attune::cluster {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kExecReportTimeout = std::chrono::seconds(10);  // child's fork..exec
constexpr auto kReapTimeout = std::chrono::seconds(1);         // a child that failed exec
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
// Set in every run's environment to its RunSpec name, so find_run can find a
// run again by name after a restart of attune.
constexpr const char* kRunNameVariable = "ATTUNE_RUN";

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "local:<pid>" → pid; never 0, 1 or negative (kill() would reach a group or init).
int parse_pid(const RunId& id) {
  if (id.cluster != "local")
    throw ClusterError(fmt::format("run {}:{} is not a local run", id.cluster, id.id));
  int pid = 0;
  const char* first = id.id.data();
  const char* last = first + id.id.size();
  const auto [ptr, ec] = std::from_chars(first, last, pid);
  if (ec != std::errc() || ptr != last || pid <= 1)
    throw ClusterError(fmt::format("run local:{}: not a process id", id.id));
  return pid;
}

// ------------------------------------------------------------ /proc (Linux)

struct ProcStat {
  char state = '?';
  long pgrp = 0;
  unsigned long long start_ticks = 0;  // since boot
};

std::optional<ProcStat> read_proc_stat(long pid) {
#ifdef __linux__
  const std::string path = fmt::format("/proc/{}/stat", pid);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // "pid (comm) state ppid pgrp ... starttime(22nd)": comm may hold ')' or spaces.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return std::nullopt;
  std::vector<std::string_view> fields;
  std::string_view rest(p + 1);
  while (!rest.empty() && fields.size() < 20) {
    const auto b = rest.find_first_not_of(' ');
    if (b == std::string_view::npos) break;
    rest.remove_prefix(b);
    const auto e = rest.find(' ');
    fields.push_back(rest.substr(0, e));
    rest.remove_prefix(e == std::string_view::npos ? rest.size() : e);
  }
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  ProcStat s;
  s.state = fields[0][0];
  std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), s.pgrp);
  std::from_chars(fields[19].data(), fields[19].data() + fields[19].size(), s.start_ticks);
  return s;
#else
  (void)pid;
  return std::nullopt;
#endif
}

bool is_zombie(const ProcStat& s) { return s.state == 'Z' || s.state == 'X' || s.state == 'x'; }

// Whether `pid` exists and has not exited (a zombie has exited). EPERM: it is
// another user's process, so not a run of ours.
bool process_alive(int pid) {
  if (::kill(pid, 0) != 0) return false;
  const auto s = read_proc_stat(pid);
  return !(s && is_zombie(*s));
}

// Whether process group `pgid` still has a member that has not exited. killpg
// counts zombies (which a container's init may never reap), so on Linux a live
// member is looked for in /proc.
bool group_alive(int pgid) {
  if (::killpg(pgid, 0) != 0) return errno == EPERM;
#ifdef __linux__
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return true;
  bool alive = false;
  while (const dirent* e = ::readdir(dir)) {
    long pid = 0;
    const char* name = e->d_name;
    const auto [ptr, ec] = std::from_chars(name, name + std::strlen(name), pid);
    if (ec != std::errc() || *ptr != '\0') continue;
    const auto s = read_proc_stat(pid);
    if (s && s->pgrp == pgid && !is_zombie(*s)) {
      alive = true;
      break;
    }
  }
  ::closedir(dir);
  return alive;
#else
  return true;
#endif
}

// When `pid` started, on our steady clock (Linux: its start time in /proc);
// `fallback` elsewhere.
Clock::time_point process_start(int pid, Clock::time_point fallback) {
#ifdef __linux__
  const auto s = read_proc_stat(pid);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const int fd = ::open("/proc/uptime", O_RDONLY | O_CLOEXEC);
  if (!s || ticks <= 0 || fd < 0) {
    if (fd >= 0) ::close(fd);
    return fallback;
  }
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return fallback;
  buf[n] = '\0';
  char* end = nullptr;
  const double uptime = std::strtod(buf, &end);
  if (end == buf) return fallback;
  const double age = std::max(0.0, uptime - static_cast<double>(s->start_ticks) / ticks);
  return Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(age));
#else
  (void)pid;
  return fallback;
#endif
}

// Whether process `pid`'s environment holds exactly `entry` ("NAME=value").
bool environment_has(long pid, const std::string& entry) {
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string env;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && env.size() < (1u << 20)) env.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  for (std::size_t at = 0; at < env.size();) {
    const std::size_t end = std::min(env.find('\0', at), env.size());
    if (std::string_view(env).substr(at, end - at) == entry) return true;
    at = end + 1;
  }
  return false;
}

// The live session leader (a run's first process) whose environment names run
// `name`; 0 if none (only on Linux).
int find_run_leader([[maybe_unused]] const std::string& name) {
#ifdef __linux__
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return 0;
  const std::string entry = std::string(kRunNameVariable) + "=" + name;
  int found = 0;
  while (const dirent* e = ::readdir(dir)) {
    long pid = 0;
    const char* pname = e->d_name;
    const auto [ptr, ec] = std::from_chars(pname, pname + std::strlen(pname), pid);
    if (ec != std::errc() || *ptr != '\0') continue;
    const auto st = read_proc_stat(pid);
    if (!st || st->pgrp != pid || is_zombie(*st) || !environment_has(pid, entry)) continue;
    found = static_cast<int>(pid);
    break;
  }
  ::closedir(dir);
  return found;
#else
  return 0;
#endif
}

// ------------------------------------------------------------ launching

// The program to execve: spec.command[0] as given if it holds a '/', else the
// first executable regular file of that name on PATH (execvp's rule).
std::string resolve_program(const std::string& program, const std::string& path,
                            const std::string& run_name) {
  if (program.empty()) throw ClusterError(fmt::format("run '{}': the command's program is empty", run_name));
  if (program.find('/') != std::string::npos) return program;
  std::string_view rest(path);
  while (true) {
    const auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  throw ClusterError(fmt::format("run '{}': program '{}' not found on PATH", run_name, program));
}

// attune's environment with spec.env's values added (replacing same-named
// ones) and ATTUNE_RUN naming the run.
std::vector<std::string> child_environment(const RunSpec& spec) {
  std::map<std::string, std::string> env = spec.env;
  env[kRunNameVariable] = spec.name;
  try {
    return environment_with(env);
  } catch (const std::invalid_argument& e) {
    throw ClusterError(fmt::format("run '{}': {}", spec.name, e.what()));
  }
}

// What the child writes to the report pipe when a step before exec fails.
struct ExecReport {
  int stage = 0;
  int err = 0;
};
constexpr const char* kStages[] = {"setsid", "redirecting stdin", "redirecting the log", "changing directory", "exec"};

// Waits up to kReapTimeout for a child that is about to _exit.
void reap_briefly(int pid) {
  const auto deadline = Clock::now() + kReapTimeout;
  while (::waitpid(pid, nullptr, WNOHANG) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {}{}", WTERMSIG(status), WCOREDUMP(status) ? " (core dumped)" : "");
  return fmt::format("wait status {}", status);
}

}  // namespace

LocalCluster::LocalCluster(LocalClusterOptions options) : options_(options) {}

RunId LocalCluster::submit(const gate::ApprovedRecipe& /*recipe*/, const RunSpec& spec) {
  if (spec.command.empty()) throw ClusterError(fmt::format("run '{}': no command to launch", spec.name));
  if (spec.log_path.empty()) throw ClusterError(fmt::format("run '{}': no log path", spec.name));

  // Everything the child needs is built here: after fork it only makes system calls.
  std::vector<std::string> env = child_environment(spec);
  std::string path;
  if (const auto it = spec.env.find("PATH"); it != spec.env.end()) {
    path = it->second;
  } else if (const char* p = std::getenv("PATH")) {
    path = p;
  } else {
    path = kDefaultPath;
  }
  const std::string program = resolve_program(spec.command[0], path, spec.name);
  std::vector<std::string> args = spec.command;
  std::vector<char*> argv = c_strings(args);
  std::vector<char*> envp = c_strings(env);

  const std::filesystem::path log_path(spec.log_path);
  if (log_path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(log_path.parent_path(), ec);
    if (ec)
      throw ClusterError(fmt::format("run '{}': cannot create the log directory of '{}': {}", spec.name,
                                     spec.log_path, ec.message()));
  }
  Fd log_fd(::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log_fd.get() < 0)
    throw ClusterError(fmt::format("run '{}': cannot open log '{}': {}", spec.name, spec.log_path, errno_text(errno)));
  Fd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null_fd.get() < 0) throw ClusterError(fmt::format("run '{}': cannot open /dev/null: {}", spec.name, errno_text(errno)));
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw ClusterError(fmt::format("run '{}': pipe: {}", spec.name, errno_text(errno)));
  Fd report_r(pipe_fds[0]), report_w(pipe_fds[1]);
  ::fcntl(report_r.get(), F_SETFD, FD_CLOEXEC);
  ::fcntl(report_w.get(), F_SETFD, FD_CLOEXEC);
  for (Fd* fd : {&log_fd, &null_fd, &report_r, &report_w}) lift_above_stdio(*fd);

  const Clock::time_point start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw ClusterError(fmt::format("run '{}': fork: {}", spec.name, errno_text(errno)));
  if (pid == 0) {
    // The child: async-signal-safe calls only.
    const auto fail = [&](int stage) {
      const ExecReport r{stage, errno};
      [[maybe_unused]] const ssize_t n = ::write(report_w.get(), &r, sizeof r);
      ::_exit(127);
    };
    if (::setsid() < 0) fail(0);
    if (::dup2(null_fd.get(), STDIN_FILENO) < 0) fail(1);
    if (::dup2(log_fd.get(), STDOUT_FILENO) < 0 || ::dup2(log_fd.get(), STDERR_FILENO) < 0) fail(2);
    if (!spec.workdir.empty() && ::chdir(spec.workdir.c_str()) != 0) fail(3);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (const int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
    ::execve(program.c_str(), argv.data(), envp.data());
    fail(4);
  }

  // The parent: the report pipe closes on a successful exec, or carries why it failed.
  report_w.reset();
  log_fd.reset();
  null_fd.reset();
  ExecReport report;
  std::size_t got = 0;
  const auto deadline = Clock::now() + kExecReportTimeout;
  while (got < sizeof report) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;  // slow to exec: treat as launched
    pollfd pfd{report_r.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::read(report_r.get(), reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: exec succeeded
    got += static_cast<std::size_t>(n);
  }
  if (got == sizeof report) {
    reap_briefly(pid);
    const int stage = std::clamp(report.stage, 0, 4);
    if (stage == 3)
      throw ClusterError(fmt::format("run '{}': cannot change to directory '{}': {}", spec.name, spec.workdir,
                                     errno_text(report.err)));
    if (stage == 4)
      throw ClusterError(fmt::format("run '{}': cannot run '{}'{}: {}", spec.name, spec.command[0],
                                     program == spec.command[0] ? "" : fmt::format(" ({})", program),
                                     errno_text(report.err)));
    throw ClusterError(fmt::format("run '{}': cannot start '{}': {}: {}", spec.name, spec.command[0],
                                   kStages[stage], errno_text(report.err)));
  }

  Run run;
  run.pid = pid;
  run.spec = spec;
  run.start = start;
  run.child = true;
  run.status.state = RunState::Running;
  runs_[pid] = std::move(run);
  return RunId{"local", std::to_string(pid)};
}

LocalCluster::Run& LocalCluster::find(const RunId& id) {
  const int pid = parse_pid(id);
  const auto it = runs_.find(pid);
  if (it == runs_.end()) throw ClusterError(fmt::format("run local:{} is not known to this cluster", pid));
  return it->second;
}

void LocalCluster::finish(Run& run, RunState state, std::string reason) {
  run.done = true;
  run.status.state = state;
  run.status.reason = std::move(reason);
  run.status.elapsed_s = seconds_since(run.start);
}

bool LocalCluster::check_exited(Run& run) {
  if (run.done) return true;
  if (!run.child) {
    if (process_alive(run.pid)) return false;
    finish(run, RunState::Failed, "exit status unknown (attached)");
    return true;
  }
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(run.pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  if (r < 0) {  // ECHILD: reaped elsewhere (e.g. SIGCHLD ignored)
    finish(run, RunState::Failed, "exit status unknown (reaped elsewhere)");
    return true;
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  finish(run, ok ? RunState::Completed : RunState::Failed, describe_exit(status));
  return true;
}

void LocalCluster::terminate(Run& run) {
  // Our runs lead their own group; an adopted process that does not is
  // signalled alone.
  const bool group = run.leads_group;
  bool reaped = false;
  const auto send = [&](int sig) {
    if (group) {
      ::killpg(run.pid, sig);
    } else if (!reaped) {
      ::kill(run.pid, sig);
    }
  };
  const auto gone = [&] {
    if (run.child && !reaped) {
      const pid_t r = ::waitpid(run.pid, nullptr, WNOHANG);
      reaped = r == run.pid || (r < 0 && errno == ECHILD);
    }
    return group ? !group_alive(run.pid) : (run.child ? reaped : !process_alive(run.pid));
  };
  const auto wait_until_gone = [&](double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    auto pause = std::chrono::milliseconds(2);
    while (true) {
      if (gone()) return true;
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  };
  send(SIGTERM);
  if (wait_until_gone(options_.kill_grace_s)) return;
  send(SIGKILL);
  wait_until_gone(options_.kill_wait_s);
}

RunStatus LocalCluster::poll(const RunId& id) {
  Run& run = find(id);
  if (check_exited(run)) return run.status;
  const double elapsed = seconds_since(run.start);
  if (run.spec.time_limit_s > 0 && elapsed > run.spec.time_limit_s) {
    terminate(run);
    finish(run, RunState::Timeout, fmt::format("ran past its time limit of {} s", run.spec.time_limit_s));
    return run.status;
  }
  run.status.state = RunState::Running;
  run.status.elapsed_s = elapsed;
  return run.status;
}

void LocalCluster::cancel(const RunId& id) {
  Run& run = find(id);
  if (check_exited(run)) return;
  terminate(run);
  finish(run, RunState::Cancelled, "cancelled");
}

std::string LocalCluster::log(const RunId& id) {
  const Run& run = find(id);
  return read_run_log(fmt::format("local:{}", run.pid), run.spec.log_path);
}

void LocalCluster::attach(const RunId& id, const RunSpec& spec) {
  const int pid = parse_pid(id);
  if (const auto it = runs_.find(pid); it != runs_.end()) {
    it->second.spec = spec;
    return;
  }
  Run run;
  run.pid = pid;
  run.spec = spec;
  run.status.state = RunState::Running;
  const Clock::time_point now = Clock::now();

  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid) {  // our own child, already ended: its status is known
    run.start = now;
    run.child = true;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    finish(run, ok ? RunState::Completed : RunState::Failed, describe_exit(status));
    run.status.elapsed_s = 0;
    runs_[pid] = std::move(run);
    return;
  }
  run.child = r == 0;  // 0: our live child; -1 (ECHILD): another process's
  if (!run.child) {
    if (::kill(pid, 0) != 0) {
      if (errno == EPERM)
        throw ClusterError(fmt::format("run local:{} is another user's process (its pid was reused?)", pid));
      throw ClusterError(fmt::format("run local:{} is gone", pid));
    }
    if (!process_alive(pid)) throw ClusterError(fmt::format("run local:{} is gone", pid));
  }
  run.leads_group = ::getpgid(pid) == pid;
  run.start = process_start(pid, now);
  runs_[pid] = std::move(run);
}

std::optional<RunId> LocalCluster::find_run(const RunSpec& spec) {
  for (const auto& [pid, run] : runs_) {
    if (run.spec.name == spec.name) return RunId{"local", std::to_string(pid)};
  }
  if (const int pid = find_run_leader(spec.name); pid > 0) return RunId{"local", std::to_string(pid)};
  return std::nullopt;
}

}  // namespace attune::cluster
