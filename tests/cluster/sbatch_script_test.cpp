#include "attune/cluster/slurm/sbatch_script.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attune/cluster/cluster.h"
#include "attune/util/subprocess.h"

namespace attune::cluster {
namespace {

ClusterDefinition mock_def() {
  ClusterDefinition d;
  d.name = "mock";
  d.backend = "slurm";
  d.partition = "gpu";
  d.account = "attune";
  d.partitions = {{"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"}};
  d.time_scale = 1;
  return d;
}

RunSpec basic_spec() {
  RunSpec s;
  s.name = "run-1";
  s.nodes = 2;
  s.gpus_per_node = 8;
  s.time_limit_s = 3600;
  s.log_path = "/tmp/logs/run-1.log";
  s.command = {"torchrun", "train.py", "--lr", "3e-4"};
  return s;
}

bool has_option(const SbatchJob& job, const std::string& option) {
  return std::find(job.options.begin(), job.options.end(), option) != job.options.end();
}

bool has_option_prefix(const SbatchJob& job, const std::string& prefix) {
  return std::any_of(job.options.begin(), job.options.end(),
                     [&](const std::string& o) { return o.rfind(prefix, 0) == 0; });
}

std::string error_of(const RunSpec& spec, const ClusterDefinition& def = mock_def()) {
  try {
    sbatch_job(spec, def);
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "(no error)";
}

// A fresh directory under /tmp, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "attune-sbatch-test-XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Every file or directory under `dir` named exactly `name`.
std::vector<std::string> files_named(const std::filesystem::path& dir, const std::string& name) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == name) out.push_back(it->path().string());
  }
  return out;
}

TEST(SbatchScriptTest, ShellQuote) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("abc"), "'abc'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a\nb"), "'a\nb'");
  EXPECT_EQ(shell_quote("$(x) `y` \"z\""), "'$(x) `y` \"z\"'");
}

TEST(SbatchScriptTest, ShellQuoteRoundTripsThroughBash) {
  std::string every_byte;
  for (int c = 1; c < 256; ++c) every_byte += static_cast<char>(c);
  const std::vector<std::string> values = {"",        "plain",      "it's",         "''''",      "a\nb\n",
                                           "$(id)",   "`id`",       "a;b|c&d",      "\\'\\",     "!event",
                                           "*?[x]",   "~root",      "$HOME ${X:-y}", every_byte};
  for (const auto& v : values) {
    const ProcessResult r = run_process({"/bin/bash", "-c", "printf %s " + shell_quote(v)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, v);
  }
}

TEST(SbatchScriptTest, TimeMinutes) {
  EXPECT_EQ(sbatch_time_minutes(3600, 1), 60);
  EXPECT_EQ(sbatch_time_minutes(60, 1), 1);
  EXPECT_EQ(sbatch_time_minutes(61, 1), 2);
  EXPECT_EQ(sbatch_time_minutes(1, 1), 1);
  EXPECT_EQ(sbatch_time_minutes(7200, 60), 2);   // 7200 simulated s = 120 real s
  EXPECT_EQ(sbatch_time_minutes(3600, 60), 1);
  EXPECT_EQ(sbatch_time_minutes(3601, 60), 2);
  EXPECT_EQ(sbatch_time_minutes(10, 60), 1);     // at least a minute
  EXPECT_EQ(sbatch_time_minutes(0, 1), 0);       // no limit: no --time
  EXPECT_EQ(sbatch_time_minutes(-5, 1), 0);
  EXPECT_EQ(sbatch_time_minutes(3600, 0), 60);   // a bad scale counts as 1
}

TEST(SbatchScriptTest, SlurmFilenameDoublesPercent) {
  EXPECT_EQ(slurm_filename("/logs/run-%j-%x.log"), "/logs/run-%%j-%%x.log");
  EXPECT_EQ(slurm_filename("/logs/plain.log"), "/logs/plain.log");
}

TEST(SbatchScriptTest, OptionsInOrder) {
  RunSpec s = basic_spec();
  s.partition = "h100";
  s.workdir = "/opt/dir";
  const SbatchJob job = sbatch_job(s, mock_def());
  const std::vector<std::string> expected = {
      "--parsable",          "--job-name=run-1",  "--nodes=2",           "--gpus-per-node=h100:8",
      "--partition=h100",    "--account=attune",  "--time=60",           "--exclusive",
      "--no-requeue",        "--output=/tmp/logs/run-1.log", "--error=/tmp/logs/run-1.log",
      "--open-mode=append",  "--chdir=/opt/dir"};
  EXPECT_EQ(job.options, expected);
  EXPECT_EQ(job.request.partition, "h100");
  EXPECT_EQ(job.request.gpu, "h100");
  EXPECT_EQ(job.request.constraint, "");
  EXPECT_EQ(job.request.time_minutes, 60);
}

TEST(SbatchScriptTest, GpuTypeAndConstraint) {
  RunSpec s = basic_spec();
  // Default partition "gpu" has no GPU type in the map: just a count.
  EXPECT_TRUE(has_option(sbatch_job(s, mock_def()), "--gpus-per-node=8"));
  EXPECT_FALSE(has_option_prefix(sbatch_job(s, mock_def()), "--constraint="));
  // spec.gpu: the type in the gres request; no feature is asked for (a
  // cluster whose nodes have no such feature would refuse the job).
  s.gpu = "b200";
  SbatchJob job = sbatch_job(s, mock_def());
  EXPECT_TRUE(has_option(job, "--gpus-per-node=b200:8"));
  EXPECT_FALSE(has_option_prefix(job, "--constraint="));
  EXPECT_TRUE(has_option(job, "--partition=gpu"));
  // The recipe's constraint, else the cluster's, is sent as given.
  ClusterDefinition with = mock_def();
  with.constraint = "ib";
  EXPECT_TRUE(has_option(sbatch_job(s, with), "--constraint=ib"));
  s.constraint = "b200&ib";
  job = sbatch_job(s, with);
  EXPECT_TRUE(has_option(job, "--constraint=b200&ib"));
  // Untyped gres: the count alone.
  with.typed_gres = false;
  EXPECT_TRUE(has_option(sbatch_job(s, with), "--gpus-per-node=8"));
  // The partition's GPU type when the spec names none.
  RunSpec p = basic_spec();
  p.partition = "h200";
  p.gpus_per_node = 4;
  job = sbatch_job(p, mock_def());
  EXPECT_TRUE(has_option(job, "--gpus-per-node=h200:4"));
  EXPECT_FALSE(has_option_prefix(job, "--constraint="));
}

TEST(SbatchScriptTest, PartitionAccountQosDefaultsAndOmission) {
  RunSpec s = basic_spec();
  ClusterDefinition d = mock_def();
  d.qos = "normal";
  SbatchJob job = sbatch_job(s, d);
  EXPECT_TRUE(has_option(job, "--partition=gpu"));
  EXPECT_TRUE(has_option(job, "--account=attune"));
  EXPECT_TRUE(has_option(job, "--qos=normal"));
  s.partition = "h100";
  s.account = "other";
  s.qos = "high";
  job = sbatch_job(s, d);
  EXPECT_TRUE(has_option(job, "--partition=h100"));
  EXPECT_TRUE(has_option(job, "--account=other"));
  EXPECT_TRUE(has_option(job, "--qos=high"));
  ClusterDefinition bare;
  bare.name = "bare";
  job = sbatch_job(basic_spec(), bare);
  EXPECT_FALSE(has_option_prefix(job, "--partition"));
  EXPECT_FALSE(has_option_prefix(job, "--account"));
  EXPECT_FALSE(has_option_prefix(job, "--qos"));
}

TEST(SbatchScriptTest, ExclusiveRequeueTimeAndChdir) {
  RunSpec s = basic_spec();
  s.exclusive = false;
  s.time_limit_s = 0;
  SbatchJob job = sbatch_job(s, mock_def());
  EXPECT_FALSE(has_option(job, "--exclusive"));
  EXPECT_TRUE(has_option(job, "--no-requeue"));
  EXPECT_FALSE(has_option_prefix(job, "--time"));
  EXPECT_FALSE(has_option_prefix(job, "--chdir"));
  ClusterDefinition fast = mock_def();
  fast.time_scale = 60;
  s.time_limit_s = 7200;
  EXPECT_TRUE(has_option(sbatch_job(s, fast), "--time=2"));
}

TEST(SbatchScriptTest, LogPathPercentIsEscapedAndBackslashRefused) {
  RunSpec s = basic_spec();
  s.log_path = "/tmp/logs/100%-%j.log";
  const SbatchJob job = sbatch_job(s, mock_def());
  EXPECT_TRUE(has_option(job, "--output=/tmp/logs/100%%-%%j.log"));
  EXPECT_TRUE(has_option(job, "--error=/tmp/logs/100%%-%%j.log"));
  s.log_path = "/tmp/logs/a\\b.log";
  EXPECT_NE(error_of(s).find("log_path '/tmp/logs/a\\b.log' contains a backslash"), std::string::npos) << error_of(s);
}

TEST(SbatchScriptTest, ControlCharactersInOptionValuesAreRefused) {
  const auto with = [](auto set) {
    RunSpec s = basic_spec();
    set(s);
    return error_of(s);
  };
  EXPECT_EQ(with([](RunSpec& s) { s.partition = "h100\n--uid=0"; }),
            "run 'run-1': partition contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.account = "a\rb"; }), "run 'run-1': account contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.qos = "q\tx"; }), "run 'run-1': qos contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.gpu = "h100\n"; }), "run 'run-1': gpu contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.constraint = "x\n"; }), "run 'run-1': constraint contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.log_path = "/tmp/a\nb.log"; }),
            "run 'run-1': log_path contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.workdir = "/tmp/a\nb"; }), "run 'run-1': workdir contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.name = "a\nb"; }), "run 'a\nb': name contains a control character");
  EXPECT_EQ(with([](RunSpec& s) { s.name = std::string("a\x7f", 2); }),
            std::string("run 'a\x7f': name contains a control character"));
  // The cluster's defaults are checked too.
  ClusterDefinition d = mock_def();
  d.partition = "gpu\n--x";
  EXPECT_EQ(error_of(basic_spec(), d), "run 'run-1': partition contains a control character");
}

TEST(SbatchScriptTest, BadSpecsAreRefused) {
  RunSpec s = basic_spec();
  s.nodes = 0;
  EXPECT_NE(error_of(s).find("nodes must be at least 1"), std::string::npos);
  s = basic_spec();
  s.gpus_per_node = 0;
  EXPECT_NE(error_of(s).find("gpus_per_node must be at least 1"), std::string::npos);
  s = basic_spec();
  s.command.clear();
  EXPECT_NE(error_of(s).find("no command"), std::string::npos);
  s = basic_spec();
  s.command = {"-rf"};
  EXPECT_NE(error_of(s).find("starts with '-'"), std::string::npos);
  s = basic_spec();
  s.log_path.clear();
  EXPECT_NE(error_of(s).find("no log path"), std::string::npos);
  s = basic_spec();
  s.gpu = "h100:8,gpu";
  EXPECT_NE(error_of(s).find("gpu 'h100:8,gpu' is not a GPU type name"), std::string::npos);
  s = basic_spec();
  s.command.push_back(std::string("a\0b", 3));
  EXPECT_NE(error_of(s).find("command argument 4 contains a NUL byte"), std::string::npos) << error_of(s);
}

TEST(SbatchScriptTest, EnvNamesAreValidated) {
  for (const std::string bad : {"1X", "A-B", "A B", "", "X=Y", "$(id)", "A\nB"}) {
    RunSpec s = basic_spec();
    s.env[bad] = "v";
    const std::string e = error_of(s);
    EXPECT_NE(e.find("env name '" + bad + "'"), std::string::npos) << e;
  }
  RunSpec s = basic_spec();
  s.env = {{"_OK", "1"}, {"NCCL_DEBUG", "INFO"}, {"a1", "x"}};
  EXPECT_NO_THROW(sbatch_job(s, mock_def()));
}

TEST(SbatchScriptTest, ContainerNeedsPyxis) {
  RunSpec s = basic_spec();
  s.container_image = "nvcr.io/nvidia/pytorch:24.01-py3";
  const std::string e = error_of(s);
  EXPECT_NE(e.find("container_image 'nvcr.io/nvidia/pytorch:24.01-py3'"), std::string::npos) << e;
  EXPECT_NE(e.find("pyxis"), std::string::npos) << e;
  RunSpec m = basic_spec();
  m.container_mounts = {"/data:/data"};
  EXPECT_NE(error_of(m).find("container_mounts needs a container_image"), std::string::npos);

  ClusterDefinition d = mock_def();
  d.container = "pyxis";
  s.container_mounts = {"/data:/data:ro", "/it's:/x"};
  SbatchJob job = sbatch_job(s, d);
  // The run directory (the recipe, the log) is mounted at its own path, and
  // the job's rendezvous variables keep their values over the image's.
  EXPECT_NE(job.script.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 "
                            "--container-image='nvcr.io/nvidia/pytorch:24.01-py3' "
                            "--container-mounts='/data:/data:ro,/it'\\''s:/x,/tmp/logs:/tmp/logs' "
                            "--container-env='MASTER_ADDR,MASTER_PORT,NNODES,GPUS_PER_NODE,PET_NNODES,"
                            "PET_NPROC_PER_NODE,PET_RDZV_BACKEND,PET_RDZV_ENDPOINT,PET_RDZV_ID' bash -c"),
            std::string::npos)
      << job.script;
  s.per_node = false;
  job = sbatch_job(s, d);
  EXPECT_NE(job.script.find("exec srun --nodes=1 --ntasks=1 --container-image='nvcr.io/nvidia/pytorch:24.01-py3' "
                            "--container-mounts='/data:/data:ro,/it'\\''s:/x,/tmp/logs:/tmp/logs' 'torchrun' 'train.py'"),
            std::string::npos)
      << job.script;
  s.container_mounts = {"/a:/b,/c:/d"};
  EXPECT_NE(error_of(s, d).find("contains a comma"), std::string::npos);
  s.container_mounts = {};
  s.container_image = "img\nx";
  EXPECT_EQ(error_of(s, d), "run 'run-1': container_image contains a control character");
}

// pyxis: the working directory is the image's (srun --container-workdir, not
// sbatch --chdir or a cd on the host), the recipe's environment is passed
// with --container-env so the image's ENV cannot override it, and the home
// directory stays unmounted when the cluster says so.
TEST(SbatchScriptTest, ContainerWorkdirEnvironmentAndHome) {
  RunSpec s = basic_spec();
  s.container_image = "nvcr.io/nvidia/nemo:25.09";
  s.workdir = "/opt/Megatron-LM";
  s.env = {{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}, {"NCCL_DEBUG", "WARN"}};
  ClusterDefinition d = mock_def();
  d.container = "pyxis";
  d.mount_home = false;
  const SbatchJob job = sbatch_job(s, d);
  EXPECT_FALSE(has_option_prefix(job, "--chdir="));
  EXPECT_EQ(job.script.find("cd -- "), std::string::npos) << job.script;
  EXPECT_NE(job.script.find(" --container-workdir='/opt/Megatron-LM' --no-container-mount-home "
                            "--container-env='NCCL_DEBUG,PYTORCH_CUDA_ALLOC_CONF,MASTER_ADDR,"),
            std::string::npos)
      << job.script;
}

// What the cluster definition adds to every job: CPUs per task on sbatch and
// on each srun (Slurm 22.05 and 23.02 no longer pass sbatch's on), extra
// sbatch and srun arguments as argv elements, and a rendezvous port of its
// choosing (or one from the job id).
TEST(SbatchScriptTest, ClusterOptionsReachSbatchAndSrun) {
  RunSpec s = basic_spec();
  s.prepare = {{"axolotl", "preprocess", "/runs/x/cfg.yaml"}};
  s.unset_env = {"SLURM_NTASKS"};
  ClusterDefinition d = mock_def();
  d.cpus_per_task = 24;
  d.sbatch_args = {"--reservation=llm", "--comment=it's mine"};
  d.srun_args = {"--mpi=none", "--cpu-bind=none"};
  d.rendezvous_port = 41000;
  SbatchJob job = sbatch_job(s, d);
  EXPECT_TRUE(has_option(job, "--cpus-per-task=24"));
  ASSERT_GE(job.options.size(), 2u);
  EXPECT_EQ(job.options[job.options.size() - 2], "--reservation=llm");
  EXPECT_EQ(job.options.back(), "--comment=it's mine");
  const std::string& t = job.script;
  EXPECT_NE(t.find("export MASTER_PORT=41000\n"), std::string::npos) << t;
  EXPECT_NE(t.find("\nsrun --nodes=1 --ntasks=1 --cpus-per-task=24 '--mpi=none' '--cpu-bind=none' 'axolotl' "
                   "'preprocess' '/runs/x/cfg.yaml' || exit $?\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\nsrun --ntasks-per-node=1 --kill-on-bad-exit=1 --cpus-per-task=24 '--mpi=none' "
                   "'--cpu-bind=none' bash -c 'export NODE_RANK=$SLURM_NODEID; unset SLURM_NTASKS; exec \"$@\"' "
                   "attune-launch 'torchrun'"),
            std::string::npos)
      << t;
  EXPECT_LT(t.find("'preprocess'"), t.find("attune-launch"));  // preprocessing first
  d.rendezvous_port = 0;
  EXPECT_NE(sbatch_job(s, d).script.find("export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n"), std::string::npos);
  // Without any of them, nothing extra is sent.
  job = sbatch_job(basic_spec(), mock_def());
  EXPECT_FALSE(has_option_prefix(job, "--cpus-per-task"));
  EXPECT_EQ(job.script.find("--cpus-per-task"), std::string::npos);
  EXPECT_EQ(job.script.find("unset"), std::string::npos);
  // A name that is no variable's is refused.
  s.unset_env = {"A;B"};
  EXPECT_NE(error_of(s, d).find("unset_env name 'A;B'"), std::string::npos);
  // The script with all of it parses.
  TempDir dir;
  const auto path = dir.path() / "job.sbatch";
  s.unset_env = {"SLURM_NTASKS"};
  std::ofstream(path) << sbatch_job(s, d).script;
  const ProcessResult r = run_process({"/bin/bash", "-n", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(SbatchScriptTest, PerNodeScript) {
  RunSpec s = basic_spec();
  s.env = {{"NCCL_DEBUG", "INFO"}, {"MSG", "it's $(x)"}};
  s.workdir = "/opt/my dir";
  const SbatchJob job = sbatch_job(s, mock_def());
  const std::string& t = job.script;
  EXPECT_EQ(t.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_EQ(t.find("#SBATCH"), std::string::npos);  // sbatch would parse those
  EXPECT_NE(t.find("#   --nodes=2\n"), std::string::npos);
  EXPECT_NE(t.find("\nset -u\n"), std::string::npos);
  EXPECT_NE(t.find("\nexport MSG='it'\\''s $(x)'\n"), std::string::npos);
  EXPECT_NE(t.find("\nexport NCCL_DEBUG='INFO'\n"), std::string::npos);
  EXPECT_NE(t.find("\ncd -- '/opt/my dir' || exit 1\n"), std::string::npos);
  EXPECT_NE(t.find("MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\n"),
            std::string::npos);
  for (const char* line :
       {"export MASTER_PORT=29500\n", "export NNODES=$SLURM_JOB_NUM_NODES\n", "export GPUS_PER_NODE=8\n",
        "export PET_NNODES=$NNODES\n", "export PET_NPROC_PER_NODE=$GPUS_PER_NODE\n",
        "export PET_RDZV_BACKEND=c10d\n", "export PET_RDZV_ENDPOINT=$MASTER_ADDR:$MASTER_PORT\n",
        "export PET_RDZV_ID=$SLURM_JOB_ID\n"})
    EXPECT_NE(t.find(line), std::string::npos) << line;
  EXPECT_NE(t.find("\nsrun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'export NODE_RANK=$SLURM_NODEID; "
                   "exec \"$@\"' attune-launch 'torchrun' 'train.py' '--lr' '3e-4'\n"),
            std::string::npos)
      << t;
  // The order: env, cd, rendezvous, launch.
  EXPECT_LT(t.find("export MSG="), t.find("cd -- "));
  EXPECT_LT(t.find("cd -- "), t.find("MASTER_ADDR="));
  EXPECT_LT(t.find("MASTER_ADDR="), t.find("\nsrun "));
  // The script parses.
  TempDir dir;
  const auto path = dir.path() / "job.sbatch";
  std::ofstream(path) << t;
  const ProcessResult r = run_process({"/bin/bash", "-n", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(SbatchScriptTest, SingleScript) {
  RunSpec s = basic_spec();
  s.per_node = false;
  const SbatchJob job = sbatch_job(s, mock_def());
  EXPECT_NE(job.script.find("\nexec 'torchrun' 'train.py' '--lr' '3e-4'\n"), std::string::npos) << job.script;
  EXPECT_EQ(job.script.find("srun"), std::string::npos);
  EXPECT_EQ(job.script.find("MASTER_ADDR"), std::string::npos);
}

// The generated (non-per-node) script, run by bash as sbatch would: every
// value reaches the command verbatim and nothing in one is executed.
TEST(SbatchScriptTest, ScriptPassesHostileValuesVerbatim) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string marker = (dir.path() / "MARKER").string();
  const std::filesystem::path workdir = dir.path() / "w $(touch MARKER) `touch MARKER`; 'q' \"d\" %j";
  std::filesystem::create_directories(workdir);

  const std::vector<std::string> values = {
      "$(touch " + marker + ")", "`touch " + marker + "`", "a; touch " + marker, "line1\nline2\n$(touch " + marker + ")",
      "it's \"quoted\" '' \"\"", "$HOME ${PATH} $$ $1", "*", "", "back\\slash\\n", "|& > " + marker};
  RunSpec s = basic_spec();
  s.per_node = false;
  s.name = "name $(touch MARKER) `touch MARKER`; 'q' \"d\"";
  s.workdir = workdir.string();
  s.log_path = (dir.path() / "log $(touch MARKER).log").string();
  s.env = {{"INJ_ONE", "$(touch " + marker + ") `touch " + marker + "`"},
           {"INJ_TWO", "x'; touch " + marker + "; echo '\nnext \"line\""}};
  s.command = {"/bin/bash", "-c", "printf '%s\\n' \"$@\"; printf '%s\\n' \"$INJ_ONE\" \"$INJ_TWO\"; pwd",
               "attune-test"};
  s.command.insert(s.command.end(), values.begin(), values.end());
  const SbatchJob job = sbatch_job(s, mock_def());
  const auto script = dir.path() / "job.sbatch";
  std::ofstream(script) << job.script;

  // A clean environment: no SLURM_* variables, as if run outside Slurm.
  const ProcessResult r =
      run_process({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "/bin/bash", script.string()}, ProcessOptions{});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << job.script;
  std::string expected;
  for (const auto& v : values) expected += v + "\n";
  expected += s.env["INJ_ONE"] + "\n" + s.env["INJ_TWO"] + "\n" + workdir.string() + "\n";
  EXPECT_EQ(r.out, expected);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(files_named(dir.path(), "MARKER"), std::vector<std::string>{}) << "a value was executed";
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(workdir / "MARKER"));
  EXPECT_FALSE(std::filesystem::exists("MARKER"));
}

}  // namespace
}  // namespace attune::cluster
