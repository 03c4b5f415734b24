#include "attune/cluster/slurm/slurm_state.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attune/cluster/slurm/slurm_cluster.h"
#include "cluster_test_launch.h"

namespace attune::cluster {
namespace {

TEST(SlurmStateTest, StatesMapOntoRunStates) {
  const std::vector<std::pair<std::string, RunState>> table = {
      {"PENDING", RunState::Pending},         {"CONFIGURING", RunState::Pending},
      {"REQUEUED", RunState::Pending},        {"RUNNING", RunState::Running},
      {"COMPLETING", RunState::Running},      {"SUSPENDED", RunState::Running},
      {"RESIZING", RunState::Running},        {"COMPLETED", RunState::Completed},
      {"FAILED", RunState::Failed},           {"CANCELLED", RunState::Cancelled},
      {"CANCELLED by 0", RunState::Cancelled}, {"CANCELLED+", RunState::Cancelled},
      {"TIMEOUT", RunState::Timeout},         {"DEADLINE", RunState::Timeout},
      {"NODE_FAIL", RunState::NodeFail},      {"BOOT_FAIL", RunState::NodeFail},
      {"OUT_OF_MEMORY", RunState::OutOfMemory}, {"PREEMPTED", RunState::Preempted},
      {" RUNNING \n", RunState::Running},
  };
  for (const auto& [text, state] : table) {
    EXPECT_EQ(run_state_from_slurm(text), state) << text;
    EXPECT_TRUE(is_known_slurm_state(text)) << text;
  }
  EXPECT_EQ(run_state_from_slurm("SOMETHING_NEW"), RunState::Failed);
  EXPECT_FALSE(is_known_slurm_state("SOMETHING_NEW"));
  EXPECT_FALSE(is_known_slurm_state(""));
  EXPECT_FALSE(is_known_slurm_state("running"));
}

TEST(SlurmStateTest, Durations) {
  EXPECT_EQ(parse_slurm_duration("1-02:03:04"), 93784.0);
  EXPECT_EQ(parse_slurm_duration("02:03:04"), 7384.0);
  EXPECT_EQ(parse_slurm_duration("2:03:04"), 7384.0);
  EXPECT_EQ(parse_slurm_duration("03:04"), 184.0);
  EXPECT_EQ(parse_slurm_duration("0:00"), 0.0);
  EXPECT_EQ(parse_slurm_duration("00:00:02"), 2.0);
  EXPECT_EQ(parse_slurm_duration(" 1:27 "), 87.0);
  EXPECT_FALSE(parse_slurm_duration(""));
  EXPECT_FALSE(parse_slurm_duration("INVALID"));
  EXPECT_FALSE(parse_slurm_duration("UNLIMITED"));
  EXPECT_FALSE(parse_slurm_duration("N/A"));
  EXPECT_FALSE(parse_slurm_duration("1-03:04"));
  EXPECT_FALSE(parse_slurm_duration("1:2:3:4"));
  EXPECT_FALSE(parse_slurm_duration("-1:00"));
}

TEST(SlurmStateTest, ExitCodeFromWaitStatus) {
  EXPECT_EQ(slurm_exit_code_from_wait_status("768"), "3:0");
  EXPECT_EQ(slurm_exit_code_from_wait_status("9"), "0:9");
  EXPECT_EQ(slurm_exit_code_from_wait_status("15"), "0:15");
  EXPECT_EQ(slurm_exit_code_from_wait_status("0"), "0:0");
  EXPECT_EQ(slurm_exit_code_from_wait_status("N/A"), "");
  EXPECT_EQ(slurm_exit_code_from_wait_status(""), "");
}

TEST(SlurmStateTest, SbatchJobId) {
  EXPECT_EQ(parse_sbatch_job_id("17\n"), "17");
  EXPECT_EQ(parse_sbatch_job_id("17;mock\n"), "17");
  EXPECT_EQ(parse_sbatch_job_id("sbatch: warning: x\n4242\n\n"), "4242");
  EXPECT_FALSE(parse_sbatch_job_id(""));
  EXPECT_FALSE(parse_sbatch_job_id("Submitted batch job 17\n"));
  EXPECT_FALSE(parse_sbatch_job_id(";mock"));
}

// Lines as squeue -h -t all -j ID -O kSqueueFormat prints them (Slurm 22.05).
TEST(SlurmStateTest, SqueueLines) {
  const std::string out =
      "2|FAILED|0:00|2026-11-30T20:23:20|2026-11-30T20:23:20|768|h200-1|NonZeroExitCode|\n"
      "3|FAILED|0:00|2026-11-30T20:23:20|2026-11-30T20:23:20|9|h200-1|JobLaunchFailure|\n";
  const auto two = parse_squeue_job(out, "2");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->state, "FAILED");
  EXPECT_EQ(two->exit_code, "3:0");
  EXPECT_EQ(two->elapsed_s, 0);
  EXPECT_EQ(two->start, "2026-11-30T20:23:20");
  EXPECT_EQ(two->nodes, "h200-1");
  EXPECT_EQ(two->reason, "NonZeroExitCode");
  EXPECT_EQ(parse_squeue_job(out, "3")->exit_code, "0:9");
  EXPECT_FALSE(parse_squeue_job(out, "4"));
  EXPECT_FALSE(parse_squeue_job("", "2"));
  EXPECT_FALSE(parse_squeue_job("garbage\n", "2"));

  const auto pending = parse_squeue_job(
      "5|PENDING|0:00|N/A|N/A|0||Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
      "partitions|\n",
      "5");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->state, "PENDING");
  EXPECT_EQ(pending->nodes, "");
  EXPECT_EQ(pending->reason,
            "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions");
  const auto running = parse_squeue_job("9|RUNNING|1-00:01:27|2026-11-30T11:10:22|2026-12-01T11:10:22|0|b200-[1-2]|None|", "9");
  ASSERT_TRUE(running);
  EXPECT_EQ(running->elapsed_s, 86400 + 87);
  EXPECT_EQ(running->nodes, "b200-[1-2]");
}

// Lines as sacct -X -n -P -j ID -o kSacctFields prints them.
TEST(SlurmStateTest, SacctLines) {
  const auto c = parse_sacct_job("4|CANCELLED by 0|0:0|00:00:02|2026-11-30T11:05:18|2026-11-30T11:05:20|b200-[1-2]|None\n", "4");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->state, "CANCELLED by 0");
  EXPECT_EQ(c->exit_code, "0:0");
  EXPECT_EQ(c->elapsed_s, 2);
  EXPECT_EQ(c->end, "2026-11-30T11:05:20");
  EXPECT_EQ(c->reason, "None");
  const auto t = parse_sacct_job("1|TIMEOUT|0:0|00:01:24|2026-11-30T11:05:18|2026-11-30T11:06:42|h100-1|TimeLimit", "1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->elapsed_s, 84);
  // sacct right after sbatch prints nothing; a requeued job's runs: the last one.
  EXPECT_FALSE(parse_sacct_job("", "1"));
  const auto last = parse_sacct_job(
      "7|NODE_FAIL|0:0|00:00:03|a|b|h200-1|NodeDown\n7|COMPLETED|0:0|00:00:05|c|d|h200-1|None\n", "7");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->state, "COMPLETED");
}

// Lines as sacct -c -n -P -j ID -o kSacctJobcompFields prints them.
TEST(SlurmStateTest, SacctJobcompLines) {
  const auto f = parse_sacct_jobcomp_job("2|FAILED|3:0|00:00:00|2026-11-30T20:23:20|2026-11-30T20:23:20|h200-1\n", "2");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->state, "FAILED");
  EXPECT_EQ(f->exit_code, "3:0");
  EXPECT_EQ(f->nodes, "h200-1");
  EXPECT_EQ(f->reason, "");
  EXPECT_FALSE(parse_sacct_jobcomp_job("2|FAILED|3:0\n", "2"));
}

TEST(SlurmStateTest, JobIdsByExactName) {
  const std::string out = "12|train a|b\n13|train a\n14|train\n15.batch|train\n16|train \n17|train\nx|train\n";
  EXPECT_EQ(parse_job_ids_named(out, "train"), (std::vector<std::string>{"14", "17"}));
  EXPECT_EQ(parse_job_ids_named(out, "train a|b"), (std::vector<std::string>{"12"}));
  EXPECT_EQ(parse_job_ids_named(out, "train a"), (std::vector<std::string>{"13"}));
  EXPECT_TRUE(parse_job_ids_named(out, "nosuch").empty());
  EXPECT_EQ(newest_job_id({"9", "10", "2"}), "10");
  EXPECT_FALSE(newest_job_id({}));
}

TEST(SlurmStateTest, RunStatusFromSlurm) {
  SlurmJobInfo j;
  j.state = "FAILED";
  j.reason = "NonZeroExitCode";
  j.exit_code = "3:0";
  j.elapsed_s = 5;
  RunStatus s = run_status_from_slurm(j, 60);
  EXPECT_EQ(s.state, RunState::Failed);
  EXPECT_EQ(s.reason, "FAILED NonZeroExitCode 3:0");
  EXPECT_EQ(s.elapsed_s, 300);

  j = {};
  j.state = "TIMEOUT";
  j.reason = "TimeLimit";
  j.exit_code = "0:15";
  j.elapsed_s = 87;
  s = run_status_from_slurm(j, 1);
  EXPECT_EQ(s.state, RunState::Timeout);
  EXPECT_EQ(s.reason, "TIMEOUT TimeLimit");  // the exit code of a killed job says nothing
  EXPECT_EQ(s.elapsed_s, 87);

  j = {};
  j.state = "CANCELLED by 0";
  j.reason = "None";
  j.exit_code = "0:0";
  EXPECT_EQ(run_status_from_slurm(j, 1).reason, "CANCELLED by 0");
  EXPECT_EQ(run_status_from_slurm(j, 1).state, RunState::Cancelled);

  j = {};
  j.state = "COMPLETED";
  j.reason = "None";
  j.exit_code = "0:0";
  j.elapsed_s = 2;
  s = run_status_from_slurm(j, 1);
  EXPECT_EQ(s.state, RunState::Completed);
  EXPECT_EQ(s.reason, "COMPLETED");
  EXPECT_EQ(s.elapsed_s, 2);

  j = {};
  j.state = "PENDING";
  j.reason = "Resources";
  j.elapsed_s = 4;  // a requeued job's earlier run: not charged while pending
  s = run_status_from_slurm(j, 1);
  EXPECT_EQ(s.state, RunState::Pending);
  EXPECT_EQ(s.elapsed_s, 0);
  EXPECT_EQ(s.reason, "PENDING Resources");

  j = {};
  j.state = "COMPLETING";
  j.elapsed_s = 10;
  s = run_status_from_slurm(j, 2);
  EXPECT_EQ(s.state, RunState::Running);
  EXPECT_EQ(s.elapsed_s, 20);
  EXPECT_EQ(s.reason, "");

  j = {};
  j.state = "NODE_FAIL";
  j.reason = "NodeDown";
  EXPECT_EQ(run_status_from_slurm(j, 1).reason, "NODE_FAIL NodeDown");

  j = {};
  j.state = "WEIRD_NEW";
  j.reason = "Something";
  j.exit_code = "1:0";
  s = run_status_from_slurm(j, 1);
  EXPECT_EQ(s.state, RunState::Failed);
  EXPECT_EQ(s.reason, "WEIRD_NEW Something 1:0");
}

SbatchJob refused_job(std::string partition, int nodes, int gpus, std::string gpu, std::string constraint) {
  SbatchJob job;
  job.request.run = "r";
  job.request.partition = std::move(partition);
  job.request.account = "nosuch";
  job.request.qos = "badq";
  job.request.nodes = nodes;
  job.request.gpus_per_node = gpus;
  job.request.gpu = std::move(gpu);
  job.request.constraint = std::move(constraint);
  job.request.time_minutes = 2880;
  return job;
}

// The refusals sbatch prints on the mock cluster (docs/clusters.md), verbatim.
TEST(SlurmStateTest, ExplainsSbatchRefusals) {
  const SbatchJob job = refused_job("nosuch", 1, 8, "h100", "");
  EXPECT_EQ(explain_sbatch_refusal("sbatch: error: invalid partition specified: nosuch\n"
                                   "sbatch: error: Batch job submission failed: Invalid partition name specified\n",
                                   job, "mock"),
            "partition 'nosuch' does not exist on cluster 'mock' (sbatch: error: Batch job submission failed: "
            "Invalid partition name specified)");

  const std::string node_config =
      "sbatch: error: Batch job submission failed: Requested node configuration is not available\n";
  EXPECT_EQ(explain_sbatch_refusal(node_config, refused_job("h100", 1, 9, "h100", ""), "mock"),
            "no node in partition 'h100' has 9 GPUs of type 'h100' per node (gpus_per_node / gpu / constraint) "
            "(sbatch: error: Batch job submission failed: Requested node configuration is not available)");
  EXPECT_EQ(explain_sbatch_refusal(node_config, refused_job("h100", 1, 8, "h200", "h200"), "mock"),
            "no node in partition 'h100' has 8 GPUs of type 'h200' per node (gpus_per_node / gpu / constraint) "
            "(sbatch: error: Batch job submission failed: Requested node configuration is not available)");
  EXPECT_EQ(explain_sbatch_refusal(node_config, refused_job("", 1, 8, "", "h200&ib"), "mock"),
            "no node in the default partition has 8 GPUs per node with feature 'h200&ib' "
            "(gpus_per_node / gpu / constraint) "
            "(sbatch: error: Batch job submission failed: Requested node configuration is not available)");
  EXPECT_NE(explain_sbatch_refusal(node_config, refused_job("h100", 3, 8, "h100", ""), "mock")
                .find("partition 'h100' has no 3 nodes with 8 GPUs of type 'h100' per node"),
            std::string::npos);

  const auto explains = [&](const std::string& err, const std::string& want) {
    const std::string got = explain_sbatch_refusal(err, job, "mock");
    EXPECT_NE(got.find(want), std::string::npos) << got;
    const std::string last = err.substr(0, err.size() - 1).substr(err.substr(0, err.size() - 1).rfind('\n') + 1);
    EXPECT_NE(got.find("(" + last + ")"), std::string::npos) << got;
  };
  explains(
      "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n",
      "account 'nosuch' does not exist on cluster 'mock' or may not use partition 'nosuch'");
  explains("sbatch: error: Batch job submission failed: Invalid qos specification\n",
           "qos 'badq' does not exist on cluster 'mock'");
  explains("sbatch: error: Batch job submission failed: Node count specification invalid\n",
           "nodes: partition 'nosuch' does not allow 1 node");
  explains("sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some "
           "limit)\n",
           "time limit: 2880 minutes is more than partition 'nosuch' allows");
  explains("sbatch: error: Batch job submission failed: Invalid feature specification\n",
           "constraint '' is not a feature of any node in partition 'nosuch' (constraint / gpu)");
  explains("sbatch: error: Invalid generic resource (gres) specification\n",
           "gpu 'h100' is not a generic resource of cluster 'mock'");

  const std::string feature = "sbatch: error: Batch job submission failed: Invalid feature specification\n";
  EXPECT_EQ(explain_sbatch_refusal(feature, refused_job("h100", 1, 8, "h100", "a100"), "mock"),
            "constraint 'a100' is not a feature of any node in partition 'h100' (constraint / gpu) "
            "(sbatch: error: Batch job submission failed: Invalid feature specification)");
  EXPECT_EQ(explain_sbatch_refusal(feature, refused_job("gpu", 1, 8, "a100", "a100"), "mock"),
            "gpu 'a100' is not a feature of any node in partition 'gpu' (gpu / constraint) "
            "(sbatch: error: Batch job submission failed: Invalid feature specification)");

  // Text it does not know: sbatch's own words.
  EXPECT_EQ(explain_sbatch_refusal("sbatch: error: Something new\n", job, "mock"), "sbatch: error: Something new");
  EXPECT_EQ(explain_sbatch_refusal("sbatch: error: first\nsbatch: error: second\n", job, "mock"),
            "sbatch: error: first (sbatch: error: second)");
  EXPECT_EQ(explain_sbatch_refusal("", job, "mock"), "sbatch printed nothing");
}

// ---------------------------------------------------------------------------
// SlurmCluster's reading of Slurm, against fake tools in a bin_dir: the
// fallbacks (squeue -> sacct -> sacct -c) that the real mock cluster only
// reaches after MinJobAge, and the failures it cannot produce on demand.

class SlurmClusterFakeToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "attune-fake-slurm-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::filesystem::create_directories(dir_ / "bin");
    std::ofstream(dir_ / "slurm.conf") << "# fake\n";
    // Defaults: sbatch accepts as job 42; nothing knows anything.
    tool("sbatch", "echo 42");
    tool("squeue", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
    tool("sacct", "exit 0");
    tool("scancel", "exit 0");
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes bin/NAME: a shell script with `body`.
  void tool(const std::string& name, const std::string& body) {
    const auto path = dir_ / "bin" / name;
    const auto tmp = dir_ / "bin" / (name + ".tmp");
    std::ofstream(tmp) << "#!/bin/sh\n" << body << "\n";
    ::chmod(tmp.c_str(), 0755);
    std::filesystem::rename(tmp, path);  // never exec a half-written file
  }

  std::string read(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  ClusterDefinition def(double time_scale = 1) {
    ClusterDefinition d;
    d.name = "mock";
    d.backend = "slurm";
    d.time_scale = time_scale;
    d.slurm_conf = (dir_ / "slurm.conf").string();
    return d;
  }
  SlurmClusterOptions options(double timeout_s = 10) {
    SlurmClusterOptions o;
    o.bin_dir = (dir_ / "bin").string();
    o.command_timeout_s = timeout_s;
    return o;
  }
  // Run "fake-run" of `true` prepared for cluster `d` (its log: logs/run.log).
  Launch launch(TestRun t = {}, const ClusterDefinition& d = ClusterDefinition{}) {
    t.command = {"true"};
    t.gpus_per_node = 8;
    t.run_dir = (dir_ / "logs").string();
    return test_launch(dir_, "fake-run", d.name.empty() ? def() : d, t);
  }
  RunSpec spec() { return launch().spec(); }

  std::filesystem::path dir_;
};

TEST_F(SlurmClusterFakeToolsTest, SubmitRunsSbatchWithAnArgvAndSlurmConf) {
  tool("sbatch", "printf '%s\\n' \"$SLURM_CONF\" \"$@\" > \"" + (dir_ / "sbatch.args").string() + "\"; echo '42;mock'");
  SlurmCluster c(def(), options());
  const RunId id = c.submit(launch());
  EXPECT_EQ(id.cluster, "mock");
  EXPECT_EQ(id.id, "42");
  const std::string args = read("sbatch.args");
  EXPECT_EQ(args.rfind((dir_ / "slurm.conf").string() + "\n--parsable\n--job-name=fake-run\n", 0), 0u) << args;
  const std::string script = (dir_ / "logs" / "run.log.sbatch").string();
  EXPECT_NE(args.find("\n--output=" + (dir_ / "logs" / "run.log").string() + "\n"), std::string::npos) << args;
  EXPECT_EQ(args.substr(args.size() - script.size() - 1), script + "\n") << args;
  EXPECT_TRUE(std::filesystem::exists(script));
}

// A launch prepared for another cluster (its partitions, payload and time
// scale may differ) never reaches this one's sbatch.
TEST_F(SlurmClusterFakeToolsTest, ALaunchForAnotherClusterIsRefusedBeforeSbatch) {
  tool("sbatch", "touch '" + (dir_ / "sbatch.ran").string() + "'; echo 42");
  ClusterDefinition other = def();
  other.name = "p5";
  SlurmCluster c(def(), options());
  try {
    c.submit(launch({}, other));
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("was prepared for cluster 'p5' (backend slurm), not for cluster 'mock'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "sbatch.ran"));
  EXPECT_NO_THROW(c.submit(launch()));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "sbatch.ran"));
}

TEST_F(SlurmClusterFakeToolsTest, LiveStateComesFromSqueue) {
  tool("squeue", "printf '%s\\n' \"$@\" > \"" + (dir_ / "squeue.args").string() +
                     "\"; echo '42|RUNNING|1:05|2026-11-30T20:23:20|2026-11-30T21:23:20|0|h100-1|None|'");
  SlurmCluster c(def(60), options());
  const RunId id = c.submit(launch());
  const RunStatus s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Running);
  EXPECT_EQ(s.elapsed_s, 65 * 60);
  EXPECT_EQ(read("squeue.args"), std::string("-h\n-t\nall\n-j\n42\n-O\n") + kSqueueFormat + "\n");
}

TEST_F(SlurmClusterFakeToolsTest, ForgottenJobIsReadFromSacctAndCached) {
  tool("sacct", "[ \"$1\" = -X ] && echo '42|FAILED|3:0|00:01:05|s|e|h100-1|NonZeroExitCode'; exit 0");
  SlurmCluster c(def(2), options());
  const RunId id = c.submit(launch());
  RunStatus s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Failed);
  EXPECT_EQ(s.reason, "FAILED NonZeroExitCode 3:0");
  EXPECT_EQ(s.elapsed_s, 130);
  // Final: no more calls (a tool that would now say otherwise is not asked).
  tool("squeue", "echo '42|COMPLETED|0:01|s|e|0|h100-1|None|'");
  s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Failed);
  EXPECT_EQ(s.elapsed_s, 130);
}

TEST_F(SlurmClusterFakeToolsTest, WithoutAccountingTheJobCompletionFileIsRead) {
  tool("sacct",
       "if [ \"$1\" = -c ]; then echo '42|TIMEOUT|0:0|00:01:27|s|e|b200-1'; exit 0; fi\n"
       "echo 'sacct: error: Slurm accounting storage is disabled' >&2; exit 1");
  SlurmCluster c(def(), options());
  const RunId id = c.submit(launch());
  const RunStatus s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Timeout);
  EXPECT_EQ(s.reason, "TIMEOUT");
  EXPECT_EQ(s.elapsed_s, 87);
}

TEST_F(SlurmClusterFakeToolsTest, AJobNobodyKnowsEndsFailed) {
  SlurmCluster c(def(), options());
  const RunId id = c.submit(launch());
  const RunStatus s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Failed);
  EXPECT_EQ(s.reason, "Slurm no longer knows job 42 (squeue, sacct and sacct -c)");
  // And attach refuses such a job.
  SlurmCluster other(def(), options());
  try {
    other.attach(RunId{"mock", "42"}, spec());
    ADD_FAILURE() << "attached a job nobody knows";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "run mock:42 is gone");
  }
}

TEST_F(SlurmClusterFakeToolsTest, AnUnreachableControllerIsAnErrorNotAnEnd) {
  SlurmCluster c(def(), options());
  const RunId id = c.submit(launch());
  tool("squeue", "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  tool("sacct", "echo 'sacct: error: Problem talking to the database: Connection refused' >&2; exit 1");
  try {
    c.poll(id);
    ADD_FAILURE() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the state of run mock:42: squeue: slurm_load_jobs error: "
                                         "Unable to contact slurm controller"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(c.find_run(spec()), ClusterError);
  // Once the controller answers again, the run is followed as before.
  tool("squeue", "echo '42|PENDING|0:00|N/A|N/A|0||Priority|'");
  const RunStatus s = c.poll(id);
  EXPECT_EQ(s.state, RunState::Pending);
  EXPECT_EQ(s.reason, "PENDING Priority");
}

TEST_F(SlurmClusterFakeToolsTest, FindRunMatchesTheExactNameAndTakesTheNewest) {
  tool("squeue", "echo '40|fake-run'; echo '44|fake-run2'; echo '41|fake-run'; exit 0");
  SlurmCluster c(def(), options());
  auto found = c.find_run(spec());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, "41");
  // Not in squeue: sacct (last 7 days).
  tool("squeue", "exit 0");
  tool("sacct", "printf '%s\\n' \"$@\" > \"" + (dir_ / "sacct.args").string() + "\"; echo '12|fake-run'");
  found = c.find_run(spec());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, "12");
  EXPECT_NE(read("sacct.args").find("-S\nnow-7days\n--name=fake-run\n"), std::string::npos) << read("sacct.args");
  tool("sacct", "exit 0");
  EXPECT_FALSE(c.find_run(spec()));
}

TEST_F(SlurmClusterFakeToolsTest, SbatchRefusalAndTimeout) {
  tool("sbatch",
       "echo 'sbatch: error: invalid partition specified: nosuch' >&2\n"
       "echo 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2; exit 1");
  SlurmCluster c(def(), options(0.5));
  TestRun nosuch;
  nosuch.partition = "nosuch";
  const Launch s = launch(nosuch);
  try {
    c.submit(s);
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cluster 'mock' refused run 'fake-run': partition 'nosuch' does not exist on cluster 'mock' "
              "(sbatch: error: Batch job submission failed: Invalid partition name specified)");
  }
  tool("sbatch", "sleep 5");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    c.submit(s);
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out after 0.5 s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("find_run"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  tool("sbatch", "echo 'Submitted batch job 17'");
  EXPECT_THROW(c.submit(s), ClusterError);  // not --parsable output: no id
}

TEST_F(SlurmClusterFakeToolsTest, CancelWaitsForTheEndBounded) {
  const std::string count = (dir_ / "count").string();
  tool("squeue", "n=$(cat '" + count + "' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '" + count +
                     "'\n"
                     "if [ $n -ge 3 ]; then echo '42|CANCELLED|0:03|s|e|15|h100-1|None|'; "
                     "else echo '42|COMPLETING|0:03|s|e|0|h100-1|None|'; fi");
  tool("scancel", "printf '%s\\n' \"$@\" > \"" + (dir_ / "scancel.args").string() + "\"");
  SlurmCluster c(def(), options());
  const RunId id = c.submit(launch());
  c.cancel(id);
  EXPECT_EQ(read("scancel.args"), "42\n");
  EXPECT_EQ(c.poll(id).state, RunState::Cancelled);
  EXPECT_EQ(c.poll(id).reason, "CANCELLED");

  // A job that never ends: the wait is bounded.
  tool("squeue", "echo '43|RUNNING|0:03|s|e|0|h100-1|None|'");
  tool("sbatch", "echo 43");
  SlurmClusterOptions o = options();
  o.cancel_wait_s = 0.5;
  SlurmCluster stuck(def(), o);
  const RunId id2 = stuck.submit(launch());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(stuck.cancel(id2), ClusterError);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

TEST_F(SlurmClusterFakeToolsTest, UnknownIdsAndMissingConfiguration) {
  SlurmCluster c(def(), options());
  EXPECT_THROW(c.poll(RunId{"mock", "7"}), ClusterError);
  EXPECT_THROW(c.poll(RunId{"other", "42"}), ClusterError);
  EXPECT_THROW(c.log(RunId{"mock", "7"}), ClusterError);
  const RunId id = c.submit(launch());
  EXPECT_EQ(c.log(id), "");  // not written yet
  std::ofstream(dir_ / "logs" / "run.log") << "step 1\n";
  EXPECT_EQ(c.log(id), "step 1\n");

  ClusterDefinition d = def();
  d.slurm_conf = (dir_ / "missing.conf").string();
  SlurmCluster missing(d, options());
  try {
    missing.submit(launch({}, d));
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("slurm_conf '" + d.slurm_conf + "' does not exist"), std::string::npos)
        << e.what();
  }
  SlurmClusterOptions o = options();
  o.bin_dir = (dir_ / "nobin").string();
  SlurmCluster nobin(def(), o);
  try {
    nobin.submit(launch());
    ADD_FAILURE() << "accepted";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run sbatch: program '"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attune::cluster
