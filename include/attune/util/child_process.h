// ChildProcess: a long-lived helper program attune talks to in lines — a
// request written to its stdin, an answer read from its stdout, as often as
// needed — where run_process (subprocess.h) runs a program to completion.
// argv is exec'd as given (execvp, no shell) in the child's own process group;
// stderr is drained all along (so a chatty child never blocks on it) and its
// last part kept for error messages. Every wait is bounded: a line not
// answered within its timeout, a child that exits or closes its output, a
// program that cannot be executed are reported through error(), never by
// hanging. close() (and the destructor) ends the child cleanly: EOF on its
// stdin, a grace period to exit, then SIGKILL to its group, always reaped.
// SIGPIPE from a child that stopped reading is swallowed, not delivered.
// Domain-free; one object is used by one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/util/process_parts.h"

namespace attune {

struct ChildOptions {
  std::map<std::string, std::string> env;  // added to / overriding the inherited environment
  std::size_t stderr_keep = 16 * 1024;     // bytes of the child's stderr kept (the last ones)
};

class ChildProcess {
 public:
  // Starts the program. One that cannot be executed leaves the object
  // closed with error() saying why ("program 'x' not found", exit_code() 127).
  // Throws std::system_error only when pipes or fork fail.
  explicit ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options = {});
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // True while the child runs (it is reaped here once it has exited).
  bool running();
  // Writes `line` and a newline within timeout_s. False (error() says why)
  // when the child exited, stopped reading, or did not take it in time.
  bool write_line(std::string_view line, double timeout_s);
  // The next line of its stdout (without the newline) within timeout_s;
  // nullopt (error() says why) at the timeout or once its stdout closed.
  std::optional<std::string> read_line(double timeout_s);
  // EOF on its stdin, up to grace_s for it to exit, then SIGKILL to its
  // group; reaped. Idempotent.
  void close(double grace_s = 1.0);

  // Why the last call failed: "program 'x' not found", "no line within 2 s",
  // "exited with status 3", "killed by signal 9", ...; "" when none did.
  const std::string& error() const { return error_; }
  // The exit status once it exited normally; -1 while it runs, when killed by a signal, or unknown.
  int exit_code() const { return exit_code_; }
  // The last stderr_keep bytes it wrote on stderr.
  const std::string& stderr_tail() const { return err_; }
  pid_t pid() const { return pid_; }

 private:
  void wait_for_events(double timeout_s, bool want_write);
  void drain(Fd& fd, std::string& into, bool keep_tail);
  void reap(bool block);
  void describe_exit();

  ChildOptions options_;
  std::string program_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  int exit_code_ = -1;
  Fd in_, out_, err_fd_;
  std::string out_buf_, err_;
  std::string error_;
};

}  // namespace attune
