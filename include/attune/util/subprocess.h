// run_process: runs a program to completion and captures what it printed —
// the way attune calls outside tools (sbatch, squeue, ...) without a shell.
// argv is exec'd as given (fork + execvp: argv[0] is looked up on PATH, the
// PATH of the child's environment), so no argument is ever interpreted by a
// shell. The child runs in its own process group with stdin from the given
// text (or /dev/null) and stdout and stderr captured through pipes; past the
// timeout its whole group gets SIGKILL. Every wait is bounded by the timeout
// (plus a short grace to reap a killed child). Domain-free: it knows nothing
// of the programs it runs.
//
// Safe to call from several threads at once (each call owns its pipes and
// child; all descriptors are close-on-exec, so no call's child inherits
// another's pipes). SIGPIPE from a child that stops reading stdin is
// swallowed, not delivered.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attune {

struct ProcessOptions {
  double timeout_s = 30;                    // <= 0: the default of 30 s
  std::map<std::string, std::string> env;   // added to / overriding the inherited environment
  std::string stdin_text;                   // "" = stdin from /dev/null
};

struct ProcessResult {
  int exit_code = -1;      // the exit status; -1 if killed by a signal or timed out; 127 not found
  std::string out, err;    // everything the child wrote to stdout / stderr
  bool timed_out = false;  // ran past the timeout: its process group got SIGKILL
  // Why it did not run or did not exit normally: "program 'x' not found",
  // "cannot execute 'x': Permission denied", "killed by signal 9",
  // "timed out after 0.2 s"; "" after a normal exit.
  std::string error;

  bool ok() const { return exit_code == 0 && !timed_out; }
  // Why it failed, in one line for a message: `error` when it timed out or
  // did not run (and said nothing), else the first non-blank line of stderr (of stdout when stderr
  // is empty), else "exit status N".
  std::string failure() const;
};

// An empty argv (or an empty program name) gives exit_code 127 and an error;
// run_process itself never throws for the child's failures. Throws
// std::system_error only when the parent cannot make pipes or fork.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace attune
