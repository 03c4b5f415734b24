// LocalCluster: the `local` backend of Cluster — runs an approved recipe's
// launch command as a child process on this machine (a single-GPU box). The
// command is exec'd directly (argv, never through a shell) in its own session
// and process group, with stdout and stderr appended to the run's log; a run
// past its time limit, or a cancelled one, loses its whole process group
// (SIGTERM, a bounded grace, SIGKILL). Runs outlive the LocalCluster by design
// (attune may restart): the destructor kills nothing, and attach() re-adopts a
// run by its pid.
//
// Not thread-safe: one thread drives a LocalCluster. Every wait is bounded.
#pragma once

#include <chrono>
#include <map>
#include <string>

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
  // Leaves every run running (and unreaped: a child that exits after this
  // object is gone stays a zombie until attune exits).
  ~LocalCluster() override = default;

  std::string name() const override { return "local"; }

  // Resolves spec.command[0] on PATH (spec.env's PATH if it sets one, else
  // attune's), forks, and in the child: setsid(), stdin from /dev/null,
  // stdout and stderr appended to spec.log_path (parent directories created),
  // chdir(spec.workdir) when set, attune's environment plus spec.env plus
  // ATTUNE_RUN=<spec.name>, execve. Returns only once the exec
  // succeeded; an empty command, a bad env key, an unopenable log, a program
  // not on PATH or a failed exec (reported by the child over a close-on-exec
  // pipe) is a ClusterError naming the run and the program or path.
  // RunId{"local", "<pid>"}.
  RunId submit(const gate::ApprovedRecipe& recipe, const RunSpec& spec) override;

  // Running while the process lives; then Completed (exit status 0) or Failed
  // ("exit status N", "killed by signal S"). Past spec.time_limit_s (<= 0: no
  // limit) the group is killed and the run reports Timeout. elapsed_s counts
  // on a steady clock from submit and is frozen at the poll that saw the end.
  // Reaps finished children, so no zombies are left. A run attached from
  // another process (not our child) has no exit status to read: when it is
  // gone it reports Failed "exit status unknown (attached)".
  // Throws ClusterError for an id this cluster does not track.
  RunStatus poll(const RunId& id) override;

  // SIGTERM to the run's process group, up to kill_grace_s for it to exit,
  // then SIGKILL; the run ends Cancelled. A finished run is left as it is.
  void cancel(const RunId& id) override;

  // The log file's text so far ("" if it does not exist yet).
  std::string log(const RunId& id) override;

  // Re-adopts a run launched by an earlier attune (or any process this user
  // may signal): ClusterError "run local:<pid> is gone" if no such process
  // lives. If the pid is in fact our own child it is tracked as one (its exit
  // status is read). On Linux the elapsed time counts from the process's
  // start (/proc), so the time limit still holds across a restart; elsewhere
  // from the attach. A pid reused by an unrelated process cannot be told
  // apart from the run.
  void attach(const RunId& id, const RunSpec& spec) override;

  // A run this object launched under spec.name, else (Linux) a live process
  // that leads its own group and whose environment has ATTUNE_RUN=<name>: every
  // run gets that variable. nullopt when neither exists (an ended run launched
  // by an earlier attune cannot be told from one never launched).
  std::optional<RunId> find_run(const RunSpec& spec) override;

 private:
  using Clock = std::chrono::steady_clock;

  struct Run {
    int pid = 0;
    RunSpec spec;
    Clock::time_point start;
    bool child = true;   // ours (waitpid works) or adopted from another process
    bool leads_group = true;  // signals go to its process group (else to it alone)
    bool done = false;   // status is final
    RunStatus status;
  };

  Run& find(const RunId& id);
  // Reaps / probes the process; true (and sets the final status) once it ended.
  bool check_exited(Run& run);
  // SIGTERM, bounded wait, SIGKILL, bounded wait, on the run's process group.
  void terminate(Run& run);
  void finish(Run& run, RunState state, std::string reason);

  LocalClusterOptions options_;
  std::map<int, Run> runs_;  // by pid; the newest run owns a reused pid
};

}  // namespace attune::cluster
