// LocalCluster: the `local` backend of Cluster — runs an approved recipe's
// launch command as a process on this machine (a single-GPU box). The
// command is exec'd directly (argv, never through a shell) in its own session
// and process group, with stdout and stderr appended to the run's log; a run
// past its time limit, or a cancelled one, loses its whole process group
// (SIGTERM, a bounded grace, SIGKILL). Runs outlive the LocalCluster by design
// (attune may restart): the destructor kills nothing, and attach() re-adopts a
// run by its pid.
//
// Every run has a monitor: a small process of its own session (a fork of
// attune that only makes system calls and ignores the signals a user sends
// attune) that is the run's parent, waits for it, and writes how it ended to
// the run's exit record, exit_file(spec) — "<pid> <wait status> <elapsed ms>
// <run name>", written aside and renamed into place. So a run that ends while
// no attune watches (attune killed, or the machine's attune restarted) still
// reports its exit status to the attune that attaches to it later; only a
// run whose monitor was killed too has none.
//
// A pid is trusted only while it is the run's: attach() requires the live
// process to carry ATTUNE_RUN=<spec.name> in its environment (Linux:
// /proc/PID/environ), and polls and signals check that its start time is
// still the one seen at launch or attach. A pid reused by another process
// means the run ended — its exit record says how — and is never signalled.
//
// Not thread-safe: one thread drives a LocalCluster. Every wait is bounded.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "attune/cluster/cluster.h"

namespace attune::cluster {

struct LocalClusterOptions {
  // How long a signalled run gets to exit on SIGTERM before its group gets
  // SIGKILL (cancel, time limit), and how long after SIGKILL we wait for it.
  double kill_grace_s = 5.0;
  double kill_wait_s = 2.0;
};

class LocalCluster : public Cluster {
 public:
  explicit LocalCluster(LocalClusterOptions options = {});
  // Leaves every run running (and its monitor unreaped: one that exits after
  // this object is gone stays a zombie until attune exits).
  ~LocalCluster() override = default;

  // The backend's name in cluster definitions (backend_registry.h).
  static constexpr std::string_view kBackend = "local";

  std::string name() const override { return "local"; }

  // Where a run's monitor records how it ended: the absolute log path plus
  // ".exit" (the run directory's run.log.exit). "" without a log path.
  static std::string exit_file(const RunSpec& spec);

  // Runs launch.spec() (a launch prepared for another backend is a
  // ClusterError): resolves spec.command[0] on PATH (spec.env's PATH if it
  // sets one, else attune's), removes an earlier run's exit record, forks
  // the monitor, which forks the run: setsid(), stdin from /dev/null,
  // stdout and stderr appended to spec.log_path (parent directories created),
  // chdir(spec.workdir) when set, attune's environment plus spec.env plus
  // ATTUNE_RUN=<spec.name>, execve. Returns only once the exec
  // succeeded; an empty command, a bad env key, an unopenable log, a program
  // not on PATH or a failed exec (reported by the child over a close-on-exec
  // pipe) is a ClusterError naming the run and the program or path.
  // RunId{"local", "<pid>"}.
  RunId submit(const Launch& launch) override;

  // Running while the run's first process lives; then how its monitor
  // recorded the end: Completed (exit status 0) or Failed ("exit status N",
  // "killed by signal S"). Past spec.time_limit_s (<= 0: no limit) the group
  // is killed and the run reports Timeout. elapsed_s counts on a steady clock
  // from submit (from the process's start for an attached run) and is frozen
  // at the poll that saw the end. Reaps the monitor, so no zombies are left.
  // A run whose monitor was killed has no exit status: Failed "exit status
  // unknown (not recorded)", or "(attached)" for a run attached to.
  // Throws ClusterError for an id this cluster does not track.
  RunStatus poll(const RunId& id) override;

  // SIGTERM to the run's process group, up to kill_grace_s for it to exit,
  // then SIGKILL; the run ends Cancelled. A finished run is left as it is.
  void cancel(const RunId& id) override;

  // The log file's text so far ("" if it does not exist yet).
  std::string log(const RunId& id) override;

  // Re-adopts a run launched by an earlier attune (or any process this user
  // may signal). A live process at the pid whose environment has
  // ATTUNE_RUN=<spec.name> is followed on (on Linux its elapsed time counts
  // from the process's start in /proc, so the time limit still holds across
  // a restart). Otherwise the run has ended — the pid may be another
  // process's now, and is never signalled — and its exit record, if it names
  // this pid and run, gives its final status at once. With neither:
  // ClusterError "run local:<pid> is gone: ...", naming the exit record.
  void attach(const RunId& id, const RunSpec& spec) override;

  // A run this object launched under spec.name, else (Linux) a live process
  // that leads its own group and whose environment has ATTUNE_RUN=<name>: every
  // run gets that variable; else the run an exit record at exit_file(spec)
  // names (it ended while no attune watched). nullopt when none exists.
  std::optional<RunId> find_run(const RunSpec& spec) override;

 private:
  using Clock = std::chrono::steady_clock;

  struct Run {
    int pid = 0;
    RunSpec spec;
    Clock::time_point start;
    unsigned long long start_ticks = 0;  // the process's start (/proc); 0 = unknown
    int monitor = 0;           // the run's monitor; 0 once reaped or when unknown
    bool own_monitor = false;  // the monitor is our child (we reap it)
    bool leads_group = true;   // signals go to its process group (else to it alone)
    bool done = false;         // status is final
    RunStatus status;
  };

  Run& find(const RunId& id);
  // The run's first process still lives under its pid (not a zombie, not a
  // process that got the pid later).
  bool is_live(const Run& run) const;
  // The pid belongs to another process now.
  bool pid_reused(const Run& run) const;
  // Waits (bounded) until the monitor has recorded the end; reaps our own.
  void await_monitor(Run& run);
  // Probes the process and reads its exit record; true (and sets the final
  // status) once it ended.
  bool check_exited(Run& run);
  // SIGTERM, bounded wait, SIGKILL, bounded wait, on the run's process group
  // (nothing when its pid is another process's).
  void terminate(Run& run);
  void finish(Run& run, RunState state, std::string reason);

  LocalClusterOptions options_;
  std::map<int, Run> runs_;  // by pid; the newest run owns a reused pid
};

}  // namespace attune::cluster
