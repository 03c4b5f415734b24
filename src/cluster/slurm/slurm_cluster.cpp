#include "attune/cluster/slurm/slurm_cluster.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "attune/cluster/slurm/sbatch_script.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::cluster {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kFirstPauseS = 0.2;
constexpr double kMaxPauseS = 2.0;

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string describe_failure(const std::string& program, const ProcessResult& r) {
  return fmt::format("{}: {}", program, r.failure());
}

bool says_invalid_job_id(const ProcessResult& r) {
  return r.err.find("Invalid job id") != std::string::npos;
}

}  // namespace

SlurmCluster::SlurmCluster(ClusterDefinition def, SlurmClusterOptions options)
    : def_(std::move(def)), options_(std::move(options)) {}

ProcessResult SlurmCluster::slurm(const std::string& program, const std::vector<std::string>& args) const {
  if (!def_.slurm_conf.empty()) {
    // A missing SLURM_CONF makes every client retry for 60 s: say so at once.
    std::error_code ec;
    if (!std::filesystem::exists(def_.slurm_conf, ec))
      throw ClusterError(fmt::format("cluster '{}': slurm_conf '{}' does not exist (is the cluster set up?)",
                                     def_.name, def_.slurm_conf));
  }
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.push_back(options_.bin_dir.empty() ? program : options_.bin_dir + "/" + program);
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout_s = options_.command_timeout_s;
  if (!def_.slurm_conf.empty()) o.env["SLURM_CONF"] = def_.slurm_conf;
  ProcessResult r = run_process(argv, o);
  if (r.exit_code == 127 && !r.error.empty())
    throw ClusterError(fmt::format("cluster '{}': cannot run {}: {}", def_.name, program, r.error));
  return r;
}

std::string SlurmCluster::run_text(const std::string& job_id) const { return def_.name + ":" + job_id; }

std::optional<SlurmJobInfo> SlurmCluster::query(const std::string& job_id) const {
  std::vector<std::string> errors;
  bool controller_answered = false;

  const ProcessResult q = slurm("squeue", {"-h", "-t", "all", "-j", job_id, "-O", kSqueueFormat});
  if (q.ok()) {
    controller_answered = true;
    if (auto info = parse_squeue_job(q.out, job_id)) return info;
  } else if (says_invalid_job_id(q)) {
    controller_answered = true;  // it answered: the job is gone from its memory (MinJobAge)
  } else {
    errors.push_back(describe_failure("squeue", q));
  }

  const ProcessResult a = slurm("sacct", {"-X", "-n", "-P", "-j", job_id, "-o", kSacctFields});
  if (a.ok()) {
    if (auto info = parse_sacct_job(a.out, job_id)) return info;
  } else {
    errors.push_back(describe_failure("sacct", a));
  }

  const ProcessResult c = slurm("sacct", {"-c", "-n", "-P", "-j", job_id, "-o", kSacctJobcompFields});
  if (c.ok()) {
    if (auto info = parse_sacct_jobcomp_job(c.out, job_id)) return info;
  } else {
    errors.push_back(describe_failure("sacct -c", c));
  }

  // Gone only if the controller itself said it does not know the job and the
  // accounting (or the completion file) answered too; an unreachable
  // controller or database is not an answer.
  if (controller_answered && (a.ok() || c.ok())) return std::nullopt;
  std::string text;
  for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e;
  throw ClusterError(fmt::format("cluster '{}': cannot read the state of run {}: {}", def_.name,
                                 run_text(job_id), text));
}

SlurmCluster::Run& SlurmCluster::find(const RunId& id) {
  if (id.cluster != def_.name)
    throw ClusterError(fmt::format("run {}:{} is not a run of cluster '{}'", id.cluster, id.id, def_.name));
  const auto it = runs_.find(id.id);
  if (it == runs_.end()) throw ClusterError(fmt::format("run {} is not known to this cluster", run_text(id.id)));
  return it->second;
}

RunId SlurmCluster::submit(const Launch& launch) {
  require_prepared_for(launch, kBackend, def_.name);
  RunSpec s = launch.spec();  // the batch script's command, environment and request: the approved recipe's
  if (!s.log_path.empty()) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(s.log_path, ec);
    if (!ec) s.log_path = abs.lexically_normal().string();
  }
  const SbatchJob job = sbatch_job(s, def_);  // throws ClusterError naming the run and setting

  const std::filesystem::path log_path(s.log_path);
  if (log_path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(log_path.parent_path(), ec);
    if (ec)
      throw ClusterError(fmt::format("run '{}': cannot create the log directory of '{}': {}", s.name, s.log_path,
                                     ec.message()));
  }
  const std::string script_path = s.log_path + ".sbatch";
  try {
    write_file_atomic(script_path, job.script);
  } catch (const InputError& e) {
    throw ClusterError(fmt::format("run '{}': cannot write the batch script '{}': {}", s.name, script_path,
                                   e.message()));
  }

  std::vector<std::string> args = job.options;
  args.push_back(script_path);  // absolute: never taken for an option
  const ProcessResult r = slurm("sbatch", args);
  if (r.timed_out)
    throw ClusterError(fmt::format(
        "cluster '{}': sbatch for run '{}' timed out after {} s; the job may have been submitted all the same "
        "(find_run looks it up by name)",
        def_.name, s.name, options_.command_timeout_s));
  if (r.exit_code != 0)
    throw ClusterError(fmt::format("cluster '{}' refused run '{}': {}", def_.name, s.name,
                                   explain_sbatch_refusal(r.err.empty() ? r.error : r.err, job, def_.name)));
  const auto job_id = parse_sbatch_job_id(r.out);
  if (!job_id)
    throw ClusterError(fmt::format("cluster '{}': sbatch accepted run '{}' but printed no job id: '{}'", def_.name,
                                   s.name, r.out));
  Run run;
  run.job_id = *job_id;
  run.spec = std::move(s);
  run.status.state = RunState::Pending;
  runs_[*job_id] = std::move(run);
  return RunId{def_.name, *job_id};
}

RunStatus SlurmCluster::poll(const RunId& id) {
  Run& run = find(id);
  if (run.final) return run.status;
  const auto info = query(run.job_id);
  if (!info) {
    run.final = true;
    run.status.state = RunState::Failed;
    run.status.reason = fmt::format("Slurm no longer knows job {} (squeue, sacct and sacct -c)", run.job_id);
    return run.status;
  }
  run.status = run_status_from_slurm(*info, def_.time_scale);
  run.final = is_final(run.status.state);
  return run.status;
}

void SlurmCluster::cancel(const RunId& id) {
  Run& run = find(id);
  if (run.final) return;
  const ProcessResult r = slurm("scancel", {run.job_id});
  if (!r.ok())
    throw ClusterError(fmt::format("cluster '{}': cannot cancel run {}: {}", def_.name, run_text(run.job_id),
                                   describe_failure("scancel", r)));
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.cancel_wait_s));
  double pause = kFirstPauseS;
  while (true) {
    const RunStatus s = poll(id);
    if (is_final(s.state)) return;
    const auto now = Clock::now();
    if (now >= deadline)
      throw ClusterError(fmt::format("cluster '{}': run {} is still {} {} s after scancel", def_.name,
                                     run_text(run.job_id), to_string(s.state), options_.cancel_wait_s));
    const auto left = std::chrono::duration<double>(deadline - now).count();
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(pause, left)));
    pause = std::min(pause * 1.5, kMaxPauseS);
  }
}

std::string SlurmCluster::log(const RunId& id) {
  const Run& run = find(id);
  return read_run_log(run_text(run.job_id), run.spec.log_path);
}

void SlurmCluster::attach(const RunId& id, const RunSpec& spec) {
  if (id.cluster != def_.name)
    throw ClusterError(fmt::format("run {}:{} is not a run of cluster '{}'", id.cluster, id.id, def_.name));
  if (!all_digits(id.id)) throw ClusterError(fmt::format("run {}: not a Slurm job id", run_text(id.id)));
  const auto info = query(id.id);
  if (!info) throw ClusterError(fmt::format("run {} is gone", run_text(id.id)));
  Run run;
  run.job_id = id.id;
  run.spec = spec;
  if (!run.spec.log_path.empty()) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(run.spec.log_path, ec);
    if (!ec) run.spec.log_path = abs.lexically_normal().string();
  }
  run.status = run_status_from_slurm(*info, def_.time_scale);
  run.final = is_final(run.status.state);
  runs_[id.id] = std::move(run);
}

std::optional<RunId> SlurmCluster::find_run(const RunSpec& spec) {
  // --name takes a comma-separated list, so a name with a comma is matched by
  // listing everything; the exact name is compared here in any case.
  const bool name_filter = spec.name.find(',') == std::string::npos && !spec.name.empty();
  std::vector<std::string> errors;

  std::vector<std::string> q_args = {"-h", "-t", "all", "-o", "%i|%j"};
  if (name_filter) q_args.push_back("--name=" + spec.name);
  const ProcessResult q = slurm("squeue", q_args);
  if (q.ok()) {
    if (auto id = newest_job_id(parse_job_ids_named(q.out, spec.name))) return RunId{def_.name, *id};
  } else {
    errors.push_back(describe_failure("squeue", q));
  }

  std::vector<std::string> a_args = {"-X", "-n", "-P", "-o", "JobID,JobName", "-S", "now-7days"};
  if (name_filter) a_args.push_back("--name=" + spec.name);
  const ProcessResult a = slurm("sacct", a_args);
  if (a.ok()) {
    if (auto id = newest_job_id(parse_job_ids_named(a.out, spec.name))) return RunId{def_.name, *id};
  } else {
    errors.push_back(describe_failure("sacct", a));
    // No accounting: the job completion file still lists finished jobs.
    const ProcessResult c = slurm("sacct", {"-c", "-n", "-P", "-o", "JobID,JobName", "-S", "now-7days"});
    if (c.ok()) {
      if (auto id = newest_job_id(parse_job_ids_named(c.out, spec.name))) return RunId{def_.name, *id};
    } else {
      errors.push_back(describe_failure("sacct -c", c));
    }
  }
  // The controller knows every recent job (sacct lags it): without its
  // answer "none" cannot be told.
  if (!q.ok()) {
    std::string text;
    for (const auto& e : errors) text += (text.empty() ? "" : "; ") + e;
    throw ClusterError(fmt::format("cluster '{}': cannot look up run '{}': {}", def_.name, spec.name, text));
  }
  return std::nullopt;
}

}  // namespace attune::cluster
