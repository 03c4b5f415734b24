#include "attune/cluster/local/local_cluster.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/process_parts.h"
#include "attune/util/shell_quote.h"

extern char** environ;

namespace attune::cluster {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kExecReportTimeout = std::chrono::seconds(10);  // child's fork..exec
constexpr auto kReapTimeout = std::chrono::seconds(1);         // a monitor whose run failed exec
constexpr auto kRecordTimeout = std::chrono::seconds(2);       // a monitor recording its run's end
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
// Set in every run's environment to its RunSpec name, so find_run can find a
// run again by name after a restart of attune, and attach can tell the run
// from a process that got its pid later.
constexpr const char* kRunNameVariable = "ATTUNE_RUN";
// The name (/proc/PID/comm) of the process that waits for a run and records
// its end.
constexpr const char* kMonitorName = "attune-monitor";

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
  long ppid = 0;
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
  std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), s.ppid);
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

// Whether some process, live or zombie, of any user has this pid.
bool process_exists(int pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

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
#ifndef __linux__
  (void)pid;
  (void)entry;
  return true;  // nothing to read: the pid is all there is
#else
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
#endif
}

// Whether the live process at `pid` is run `name`'s: every run's first
// process carries ATTUNE_RUN=<name> (a pid reused by another process does not).
bool carries_marker(int pid, const std::string& name) {
  return process_alive(pid) && environment_has(pid, std::string(kRunNameVariable) + "=" + name);
}

// Whether `pid` is a run's monitor (Linux: by its name; elsewhere unknown).
bool is_monitor([[maybe_unused]] long pid) {
#ifdef __linux__
  const int fd = ::open(fmt::format("/proc/{}/comm", pid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 && std::string_view(buf, static_cast<std::size_t>(n)) == std::string(kMonitorName) + "\n";
#else
  return false;
#endif
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
  std::vector<std::string> out;
  try {
    out = environment_with(env);
  } catch (const std::invalid_argument& e) {
    throw ClusterError(fmt::format("run '{}': {}", spec.name, e.what()));
  }
  for (const auto& name : spec.unset_env) {
    std::erase_if(out, [&](const std::string& kv) { return kv.compare(0, name.size() + 1, name + "=") == 0; });
  }
  return out;
}

// A run with commands before its launch (RunSpec::prepare) starts as a bash
// script beside its log that runs them in turn, each quoted word for word,
// and then execs the launch: the run's one process group and exit status
// cover them all.
std::vector<std::string> command_with_preparation(const RunSpec& spec) {
  if (spec.prepare.empty()) return spec.command;
  std::string text = "#!/bin/bash\n# attune run '" + spec.name + "': what runs before the launch, then the launch\nset -u\n";
  for (const auto& step : spec.prepare) text += quoted_words(step) + " || exit $?\n";
  text += "exec " + quoted_words(spec.command) + "\n";
  const std::string path = std::filesystem::absolute(spec.log_path).string() + ".sh";
  try {
    write_file_atomic(path, text);
  } catch (const InputError& e) {
    throw ClusterError(fmt::format("run '{}': cannot write '{}': {}", spec.name, path, e.message()));
  }
  return {"/bin/bash", path};
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

RunState state_of_exit(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? RunState::Completed : RunState::Failed;
}

// ------------------------------------------------------------ exit records

// "<pid> <wait status> <elapsed ms> <run name>\n": what a run's monitor writes
// when the run's first process has ended (see the header).
struct ExitRecord {
  long pid = 0;
  int status = 0;
  long long elapsed_ms = 0;
  std::string name;
};

std::optional<ExitRecord> read_exit_record(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < (1u << 16)) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (text.empty() || text.back() != '\n') return std::nullopt;  // never renamed into place half-written, but be strict
  text.pop_back();
  ExitRecord r;
  const char* p = text.data();
  const char* end = p + text.size();
  const auto number = [&](auto& out) {
    const auto [next, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || next == end || *next != ' ') return false;
    p = next + 1;
    return true;
  };
  if (!number(r.pid) || !number(r.status) || !number(r.elapsed_ms)) return std::nullopt;
  r.name.assign(p, end);
  return r;
}

// Appends the decimal digits of `v` to buf at `at` (async-signal-safe).
std::size_t put_number(char* buf, std::size_t at, long long v) {
  char digits[24];
  std::size_t n = 0;
  const bool negative = v < 0;
  unsigned long long u = negative ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) buf[at++] = '-';
  while (n > 0) buf[at++] = digits[--n];
  return at;
}

long long monotonic_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// Closes every descriptor (the monitor keeps none of attune's: not its
// stdout, which a reader may be waiting on to close, nor a lock it holds).
void close_all_descriptors(int max_fd) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 0u, ~0u, 0u) == 0) return;
#endif
  for (int fd = 0; fd < max_fd; ++fd) ::close(fd);
}

}  // namespace

LocalCluster::LocalCluster(LocalClusterOptions options) : options_(options) {}

std::string LocalCluster::exit_file(const RunSpec& spec) {
  if (spec.log_path.empty()) return "";
  return std::filesystem::absolute(spec.log_path).string() + ".exit";
}

RunId LocalCluster::submit(const Launch& launch) {
  require_prepared_for(launch, kBackend);
  const RunSpec& spec = launch.spec();  // what prepare_launch built from the approved recipe
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
  std::vector<std::string> args = command_with_preparation(spec);
  const std::string program = resolve_program(args[0], path, spec.name);
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
  // An exit record left by an earlier run on this log is not this run's.
  const std::string exit_path = exit_file(spec);
  const std::string exit_tmp = exit_path + ".tmp";
  ::unlink(exit_path.c_str());
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw ClusterError(fmt::format("run '{}': pipe: {}", spec.name, errno_text(errno)));
  Fd report_r(pipe_fds[0]), report_w(pipe_fds[1]);
  if (::pipe(pipe_fds) != 0) throw ClusterError(fmt::format("run '{}': pipe: {}", spec.name, errno_text(errno)));
  Fd pid_r(pipe_fds[0]), pid_w(pipe_fds[1]);
  for (Fd* fd : {&report_r, &report_w, &pid_r, &pid_w}) ::fcntl(fd->get(), F_SETFD, FD_CLOEXEC);
  for (Fd* fd : {&log_fd, &null_fd, &report_r, &report_w, &pid_r, &pid_w}) lift_above_stdio(*fd);
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  const int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;

  const Clock::time_point start = Clock::now();
  const pid_t monitor = ::fork();
  if (monitor < 0) throw ClusterError(fmt::format("run '{}': fork: {}", spec.name, errno_text(errno)));
  if (monitor == 0) {
    // The monitor: a fork of attune that makes system calls only
    // (async-signal-safe), in a session of its own so that no terminal
    // signal or hangup reaches it, ignoring the signals a user sends attune.
    ::setsid();
#ifdef __linux__
    ::prctl(PR_SET_NAME, kMonitorName, 0, 0, 0);  // what attach() knows a monitor by
#endif
    for (const int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
    ::signal(SIGCHLD, SIG_DFL);  // waitpid must see the run even if attune ignores SIGCHLD
    const long long t0 = monotonic_ms();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // The run's first process.
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
    const long told = pid > 0 ? pid : -static_cast<long>(errno);
    [[maybe_unused]] const ssize_t w = ::write(pid_w.get(), &told, sizeof told);
    close_all_descriptors(max_fd);
    if (pid < 0) ::_exit(1);
    [[maybe_unused]] const int in_root = ::chdir("/");  // hold no directory busy for the run's lifetime
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char line[80];
    std::size_t at = put_number(line, 0, pid);
    line[at++] = ' ';
    at = put_number(line, at, status);
    line[at++] = ' ';
    at = put_number(line, at, monotonic_ms() - t0);
    line[at++] = ' ';
    // Written aside and renamed into place: a reader finds a whole record or none.
    const int fd = ::open(exit_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      bool ok = ::write(fd, line, at) == static_cast<ssize_t>(at);
      ok = ok && ::write(fd, spec.name.data(), spec.name.size()) == static_cast<ssize_t>(spec.name.size());
      ok = ok && ::write(fd, "\n", 1) == 1;
      ok = ::fsync(fd) == 0 && ok;
      ::close(fd);
      if (ok) ::rename(exit_tmp.c_str(), exit_path.c_str());
    }
    ::_exit(0);
  }

  // attune: the monitor sends the run's pid; the report pipe then closes on
  // a successful exec, or carries why it failed.
  report_w.reset();
  pid_w.reset();
  log_fd.reset();
  null_fd.reset();
  const auto deadline = Clock::now() + kExecReportTimeout;
  // Reads `size` bytes (fewer at EOF or past the deadline).
  const auto read_bounded = [&](int fd, void* into, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd pfd{fd, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      const ssize_t n = ::read(fd, static_cast<char*>(into) + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    return got;
  };
  long told = 0;
  if (read_bounded(pid_r.get(), &told, sizeof told) != sizeof told || told <= 1) {
    reap_briefly(monitor);
    throw ClusterError(fmt::format("run '{}': cannot start '{}': fork: {}", spec.name, spec.command[0],
                                   told < 0 ? errno_text(static_cast<int>(-told)) : "no process id from the monitor"));
  }
  const int pid = static_cast<int>(told);
  ExecReport report;
  // Short of a whole report (EOF: exec succeeded; or slow to exec): launched.
  if (read_bounded(report_r.get(), &report, sizeof report) == sizeof report) {
    reap_briefly(monitor);
    ::unlink(exit_path.c_str());  // the record of a run that never ran
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
  run.monitor = monitor;
  run.own_monitor = true;
  if (const auto st = read_proc_stat(pid)) run.start_ticks = st->start_ticks;  // a zombie's still reads
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

bool LocalCluster::is_live(const Run& run) const {
  if (!process_alive(run.pid)) return false;
  if (run.start_ticks == 0) return true;  // no /proc: the pid is all there is
  const auto st = read_proc_stat(run.pid);
  return st && st->start_ticks == run.start_ticks;
}

bool LocalCluster::pid_reused(const Run& run) const {
  if (run.start_ticks == 0) return false;
  const auto st = read_proc_stat(run.pid);
  return st && st->start_ticks != run.start_ticks;
}

// Waits (bounded) for the monitor to record the run's end: it reaps the run
// and writes the record at once, so this is microseconds unless the monitor
// itself was killed.
void LocalCluster::await_monitor(Run& run) {
  if (run.monitor <= 1) return;
  const auto deadline = Clock::now() + kRecordTimeout;
  const std::string path = exit_file(run.spec);
  while (true) {
    if (run.own_monitor) {
      int status = 0;
      const pid_t r = ::waitpid(run.monitor, &status, WNOHANG);
      if (r == run.monitor || (r < 0 && errno == ECHILD)) {
        run.monitor = 0;  // reaped: no zombie is left
        return;
      }
    } else if (!process_alive(run.monitor) || read_exit_record(path)) {
      return;
    }
    if (Clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool LocalCluster::check_exited(Run& run) {
  if (run.done) {
    if (run.own_monitor && run.monitor > 0 && ::waitpid(run.monitor, nullptr, WNOHANG) != 0) run.monitor = 0;
    return true;
  }
  if (is_live(run)) return false;
  await_monitor(run);
  const auto record = read_exit_record(exit_file(run.spec));
  if (record && record->pid == run.pid && record->name == run.spec.name) {
    finish(run, state_of_exit(record->status), describe_exit(record->status));
  } else {
    finish(run, RunState::Failed, run.own_monitor ? "exit status unknown (not recorded)" : "exit status unknown (attached)");
  }
  return true;
}

void LocalCluster::terminate(Run& run) {
  // A pid that is now another process's is never signalled: its group (if it
  // leads one) cannot be ours either, as the kernel reuses no pid that still
  // names a process group.
  if (pid_reused(run)) return;
  // Our runs lead their own group; an adopted process that does not is
  // signalled alone.
  const bool group = run.leads_group;
  const auto send = [&](int sig) {
    if (pid_reused(run)) return;
    if (group) {
      ::killpg(run.pid, sig);
    } else if (is_live(run)) {
      ::kill(run.pid, sig);
    }
  };
  const auto gone = [&] { return pid_reused(run) || (group ? !group_alive(run.pid) : !is_live(run)); };
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
  if (!wait_until_gone(options_.kill_grace_s)) {
    send(SIGKILL);
    wait_until_gone(options_.kill_wait_s);
  }
  await_monitor(run);
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
  if (const auto it = runs_.find(pid); it != runs_.end() && it->second.spec.name == spec.name) {
    it->second.spec = spec;
    return;
  }
  Run run;
  run.pid = pid;
  run.spec = spec;
  run.status.state = RunState::Running;
  const Clock::time_point now = Clock::now();
  if (carries_marker(pid, spec.name)) {  // still running
    const auto st = read_proc_stat(pid);
    if (st) run.start_ticks = st->start_ticks;
    run.leads_group = ::getpgid(pid) == pid;
    run.start = process_start(pid, now);
    // Its parent is its monitor, unless the monitor died (then init, or a
    // subreaper, adopted it).
    if (st && st->ppid > 1 && is_monitor(st->ppid)) {
      run.monitor = static_cast<int>(st->ppid);
      run.own_monitor = ::waitpid(run.monitor, nullptr, WNOHANG) == 0;  // 0: a live child of ours
    }
    runs_[pid] = std::move(run);
    return;
  }
  // Not this run's live process: the run has ended (its pid may be another
  // process's now, which is never signalled). Its monitor's record says how;
  // a run that has just ended may still be a zombie its monitor is reaping.
  const std::string path = exit_file(spec);
  auto record = read_exit_record(path);
  for (const auto deadline = now + kRecordTimeout; !record && Clock::now() < deadline;) {
    const auto st = read_proc_stat(pid);
    if (!st || !is_zombie(*st)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    record = read_exit_record(path);
  }
  if (record && record->pid == pid && record->name == spec.name) {
    run.start = now - std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(record->elapsed_ms));
    finish(run, state_of_exit(record->status), describe_exit(record->status));
    runs_[pid] = std::move(run);
    return;
  }
  const auto st = read_proc_stat(pid);
  if (process_exists(pid) && !(st && is_zombie(*st)))
    throw ClusterError(fmt::format("run local:{} is gone: pid {} is another process now (no ATTUNE_RUN={}), and the run "
                                   "left no exit record ({})",
                                   pid, pid, spec.name, path));
  throw ClusterError(fmt::format("run local:{} is gone: it left no exit record ({})", pid, path));
}

std::optional<RunId> LocalCluster::find_run(const RunSpec& spec) {
  for (const auto& [pid, run] : runs_) {
    if (run.spec.name == spec.name) return RunId{"local", std::to_string(pid)};
  }
  if (const int pid = find_run_leader(spec.name); pid > 0) return RunId{"local", std::to_string(pid)};
  // Ended while no attune watched: its monitor's record names it.
  if (const auto record = read_exit_record(exit_file(spec)); record && record->name == spec.name && record->pid > 1)
    return RunId{"local", std::to_string(record->pid)};
  return std::nullopt;
}

}  // namespace attune::cluster
