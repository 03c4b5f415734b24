// Slurm's words, read: the `slurm` backend's parsing of what sbatch, squeue
// and sacct print, and the mapping of Slurm's job states onto RunState. Pure
// functions, no I/O. The formats are fixed here (kSqueueFormat, kSacctFields,
// kSacctJobcompFields: `|`-separated, one job per line, no header) and the
// parsers read exactly those. The behaviour they rely on is Slurm 22.05's as
// observed on the mock cluster (docs/clusters.md): a job's State is what
// counts, not its ExitCode (a TIMEOUT reads 0:15 once and 143:0 another time).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/cluster/run.h"
#include "attune/cluster/slurm/sbatch_script.h"

namespace attune::cluster {

// PENDING, CONFIGURING, REQUEUED, RESIZING, SUSPENDED -> Pending ... see the
// table in slurm_state.cpp. Reads the first word ("CANCELLED by 0",
// "CANCELLED+" -> Cancelled). TIMEOUT and DEADLINE -> Timeout; NODE_FAIL and
// BOOT_FAIL -> NodeFail; COMPLETING -> Running. Unknown -> Failed (the caller
// keeps Slurm's text as the reason).
RunState run_state_from_slurm(std::string_view state);
// Whether run_state_from_slurm knows the state (rather than defaulting to Failed).
bool is_known_slurm_state(std::string_view state);

// Slurm durations -> seconds: "1-02:03:04", "02:03:04", "3:04", "0:00";
// nullopt for anything else ("INVALID", "UNLIMITED", "N/A", "").
std::optional<double> parse_slurm_duration(std::string_view text);

// squeue's exit_code field is a wait status ("768"); Slurm's usual
// "exit:signal" text for it ("3:0"). "" for what is not a number.
std::string slurm_exit_code_from_wait_status(std::string_view status);

// "17" or "17;cluster" (sbatch --parsable; the last non-empty line) -> "17".
std::optional<std::string> parse_sbatch_job_id(std::string_view out);

// One job as squeue or sacct reports it.
struct SlurmJobInfo {
  std::string job_id;
  std::string state;      // as printed: "RUNNING", "CANCELLED by 0"
  std::string exit_code;  // "3:0" ("" when unknown)
  double elapsed_s = 0;   // real seconds it has run (0 while pending)
  std::string start, end; // as printed ("N/A", "Unknown", "None" when there is none)
  std::string nodes;      // node list ("" or "None assigned" before it ran)
  std::string reason;     // Slurm's reason ("None", "NonZeroExitCode"; "" when the source has none)
};

// squeue -h -t all -j ID -O <kSqueueFormat>
inline constexpr const char* kSqueueFormat =
    "JobID:|,State:|,TimeUsed:|,StartTime:|,EndTime:|,exit_code:|,NodeList:|,Reason:|";
// sacct -X -n -P -j ID -o <kSacctFields>
inline constexpr const char* kSacctFields = "JobID,State,ExitCode,Elapsed,Start,End,NodeList,Reason";
// sacct -c -n -P -j ID -o <kSacctJobcompFields> (the jobcomp file has no reason)
inline constexpr const char* kSacctJobcompFields = "JobID,State,ExitCode,Elapsed,Start,End,NodeList";

// The line of job `job_id` in the output of the command above; the last one
// if there are several (sacct lists a requeued job's runs); nullopt if none.
std::optional<SlurmJobInfo> parse_squeue_job(std::string_view out, std::string_view job_id);
std::optional<SlurmJobInfo> parse_sacct_job(std::string_view out, std::string_view job_id);
std::optional<SlurmJobInfo> parse_sacct_jobcomp_job(std::string_view out, std::string_view job_id);

// "ID|NAME" lines (squeue -h -o '%i|%j', sacct -n -P -o JobID,JobName) ->
// the ids of the jobs named exactly `name` (a name may itself hold '|').
// Step lines ("17.batch") and non-numeric ids are skipped.
std::vector<std::string> parse_job_ids_named(std::string_view out, std::string_view name);
// The newest (numerically largest) of `ids`; nullopt when empty.
std::optional<std::string> newest_job_id(const std::vector<std::string>& ids);

// The RunStatus of a job: its state mapped, elapsed_s = the real run time x
// time_scale (0 while pending), reason = Slurm's words: the state, the reason
// unless it is "None", and the exit code for FAILED, OUT_OF_MEMORY and
// unknown states ("FAILED NonZeroExitCode 3:0", "TIMEOUT TimeLimit",
// "CANCELLED by 0", "PENDING Resources").
RunStatus run_status_from_slurm(const SlurmJobInfo& job, double time_scale);

// sbatch's refusal, said in attune's words naming the setting and its value,
// followed by sbatch's own last line in parentheses:
//   "partition 'nosuch' does not exist on cluster 'mock' (sbatch: error: ...)"
//   "no node in partition 'h100' has 9 GPUs of type 'h100' per node (gpus_per_node / gpu / constraint) (...)"
// and likewise for the account, the QOS, the node count, the time limit, the
// constraint (feature) and the GPU type (generic resource). Text it does not
// recognise is given as sbatch printed it.
std::string explain_sbatch_refusal(std::string_view stderr_text, const SbatchJob& job, std::string_view cluster);

}  // namespace attune::cluster
