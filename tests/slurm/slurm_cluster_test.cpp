// Integration tests of the `slurm` backend against a real Slurm: the mock
// cluster of scripts/mock-slurm (docs/clusters.md). They read SLURM_CONF from
// the environment and skip (fail, with ATTUNE_REQUIRE_SLURM=1) when it is
// unset or the controller does not answer.
//
// Independent of each other, so `ctest -L slurm -j2` runs them in parallel:
// each run has a unique name and its log in a per-test directory under /tmp
// (every "node" is this host). Partitions: the node-down test alone uses b200;
// the others use only h100 and h200. Every wait is bounded, polling with a
// backoff from 0.2 s to 2 s.
#include "attune/cluster/slurm/slurm_cluster.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "attune/cluster/run_watch.h"
#include "attune/cluster/slurm/slurm_state.h"
#include "attune/util/subprocess.h"
#include "../cluster/cluster_test_launch.h"
#include "mock_slurm.h"

namespace attune::cluster {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : fallback;
}

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ATTUNE_NEED_MOCK_SLURM();
    conf_ = env_or("SLURM_CONF");
    std::string pattern = "/tmp/attune-slurm-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    // A failed test leaves no job behind (scancel of a finished job is a no-op).
    if (!submitted_.empty()) {
      std::vector<std::string> argv = {"scancel"};
      argv.insert(argv.end(), submitted_.begin(), submitted_.end());
      ProcessOptions o;
      o.timeout_s = 30;
      run_process(argv, o);
    }
    // Kept for a look when the test failed.
    if (!dir_.empty() && !HasFailure()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }

  ClusterDefinition def(double time_scale = 1) const {
    ClusterDefinition d;
    d.name = "mock";
    d.backend = "slurm";
    d.partition = "h100";
    d.account = "attune";
    d.partitions = {{"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"}};
    d.time_scale = time_scale;
    d.slurm_conf = conf_;
    return d;
  }

  // The settings of a run of this test: one GPU of the partition's type (the
  // mock's partitions are named for theirs), not exclusive, 600 s.
  static TestRun run(const std::string& partition, std::vector<std::string> command) {
    TestRun t;
    t.partition = partition;
    if (partition == "h100" || partition == "h200" || partition == "b200") t.gpu = partition;
    t.command = std::move(command);
    t.exclusive = false;
    t.time_limit_s = 600;
    return t;
  }
  // A unique run name for this test.
  std::string run_name(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return fmt::format("attune-test-{}-{}-{}-{}", info->name(), tag, ::getpid(), ++counter_);
  }
  // Run `t` prepared for cluster `d` (def() unless given) from an approved
  // recipe: a unique name, its log <dir>/<tag>/run.log.
  Launch launch(const std::string& tag, TestRun t, std::optional<ClusterDefinition> d = std::nullopt,
                std::string name = "") {
    if (t.run_dir.empty()) t.run_dir = (dir_ / tag).string();
    return test_launch(dir_, name.empty() ? run_name(tag) : name, d ? *d : def(), t);
  }
  Launch launch(const std::string& tag, const std::string& partition, std::vector<std::string> command) {
    return launch(tag, run(partition, std::move(command)));
  }

  // Submits and remembers the job for TearDown.
  RunId submit(SlurmCluster& c, const Launch& l) {
    RunId id = c.submit(l);
    submitted_.push_back(id.id);
    return id;
  }

  // Polls until `done(status)` or the deadline; the last status.
  template <typename Done>
  RunStatus wait_for(SlurmCluster& c, const RunId& id, double timeout_s, Done done) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    double pause = 0.2;
    while (true) {
      const RunStatus s = c.poll(id);
      if (done(s) || Clock::now() >= deadline) return s;
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      pause = std::min(pause * 1.5, 2.0);
    }
  }
  RunStatus wait_final(SlurmCluster& c, const RunId& id, double timeout_s) {
    return wait_for(c, id, timeout_s, [](const RunStatus& s) { return is_final(s.state); });
  }
  RunStatus wait_running(SlurmCluster& c, const RunId& id, double timeout_s) {
    return wait_for(c, id, timeout_s, [](const RunStatus& s) { return s.state != RunState::Pending; });
  }

  // A Slurm tool's output (SLURM_CONF is in our environment).
  std::string slurm_out(const std::vector<std::string>& argv) {
    ProcessOptions o;
    o.timeout_s = 30;
    const ProcessResult r = run_process(argv, o);
    EXPECT_TRUE(r.ok()) << argv[0] << ": " << r.err << r.error;
    return r.out;
  }

  // sacct's Elapsed of a finished job, once slurmdbd has it (it lags the controller).
  std::optional<double> sacct_elapsed(const std::string& job_id) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    double pause = 0.2;
    while (Clock::now() < deadline) {
      const auto info = parse_sacct_job(slurm_out({"sacct", "-X", "-n", "-P", "-j", job_id, "-o", kSacctFields}), job_id);
      if (info && is_final(run_state_from_slurm(info->state))) return info->elapsed_s;
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      pause = std::min(pause * 1.5, 2.0);
    }
    return std::nullopt;
  }

  std::string conf_;
  std::filesystem::path dir_;
  int counter_ = 0;
  std::vector<std::string> submitted_;
};

// The shell line the per-node tests run on each node: fixed test text; what it
// prints comes from Slurm and attune's rendezvous variables.
const std::vector<std::string> kReportNode = {
    "/bin/bash", "-c",
    "echo \"node=$SLURMD_NODENAME rank=$NODE_RANK nnodes=$NNODES gpus=$GPUS_PER_NODE "
    "master=$MASTER_ADDR:$MASTER_PORT rdzv=$PET_RDZV_ENDPOINT id=$PET_RDZV_ID\"; sleep 2"};

TEST_F(SlurmClusterTest, OneNodeRunCompletes) {
  SlurmCluster c(def());
  const Launch l = launch("one", "h100", kReportNode);
  const RunSpec& s = l.spec();
  ASSERT_TRUE(s.per_node);
  const RunId id = submit(c, l);
  EXPECT_EQ(id.cluster, "mock");
  const RunStatus st = wait_final(c, id, 60);
  ASSERT_EQ(st.state, RunState::Completed) << st.reason << "\n" << c.log(id);
  EXPECT_EQ(st.reason, "COMPLETED");
  const std::string log = c.log(id);
  EXPECT_NE(log.find("rank=0 nnodes=1 gpus=1 master=h100-"), std::string::npos) << log;
  EXPECT_NE(log.find("node=h100-"), std::string::npos) << log;
  EXPECT_NE(log.find("id=" + id.id), std::string::npos) << log;
  EXPECT_GE(st.elapsed_s, 2);
  EXPECT_GT(gpu_hours(s, st.elapsed_s), 0);
  // The batch script sits beside the log.
  EXPECT_TRUE(std::filesystem::exists(s.log_path + ".sbatch"));
  // Final: cached, the same again.
  const RunStatus again = c.poll(id);
  EXPECT_EQ(again.state, RunState::Completed);
  EXPECT_EQ(again.elapsed_s, st.elapsed_s);
}

TEST_F(SlurmClusterTest, TwoNodePerNodeRunHasOneLaunchPerNode) {
  SlurmCluster c(def());
  TestRun t = run("h200", kReportNode);
  t.nodes = 2;
  const Launch l = launch("two", t);
  const RunSpec& s = l.spec();
  const RunId id = submit(c, l);
  const RunStatus st = wait_final(c, id, 90);
  ASSERT_EQ(st.state, RunState::Completed) << st.reason << "\n" << c.log(id);
  const std::string log = c.log(id);
  EXPECT_NE(log.find("node=h200-1 rank=0 nnodes=2"), std::string::npos) << log;
  EXPECT_NE(log.find("node=h200-2 rank=1 nnodes=2"), std::string::npos) << log;
  EXPECT_NE(log.find("master=h200-1:29500 rdzv=h200-1:29500"), std::string::npos) << log;
  EXPECT_GT(gpu_hours(s, st.elapsed_s), 0);
}

TEST_F(SlurmClusterTest, HostileValuesReachTheCommandVerbatim) {
  const std::string marker = (dir_ / "MARKER").string();
  const std::filesystem::path workdir = dir_ / "w $(touch MARKER) `touch MARKER`; 'q' \"d\" %j";
  std::filesystem::create_directories(workdir);
  const std::vector<std::string> values = {"$(touch " + marker + ")",
                                           "`touch " + marker + "`",
                                           "a; touch " + marker,
                                           "line1\nline2\n$(touch " + marker + ")",
                                           "it's \"quoted\" '' \"\"",
                                           "$HOME ${PATH} $$ $1 %j %x",
                                           "*",
                                           "",
                                           "back\\slash",
                                           "|& > " + marker};
  std::vector<std::string> command = {
      "/bin/bash", "-c", "printf '%s\\n' \"$@\"; printf '%s\\n' \"$INJ_ONE\" \"$INJ_TWO\"; pwd", "attune-test"};
  command.insert(command.end(), values.begin(), values.end());
  SlurmCluster c(def());
  TestRun t = run("h100", command);
  t.workdir = workdir.string();
  t.env = {{"INJ_ONE", "$(touch " + marker + ") `touch " + marker + "`"},
           {"INJ_TWO", "x'; touch " + marker + "; echo '\nnext \"line\""}};
  t.run_dir = (dir_ / "log %j $(touch MARKER) 'q'").string();
  const std::string name = run_name("inj") + " $(touch MARKER) `touch MARKER`; 'q' \"d\"";

  // Newlines in what becomes an sbatch option are refused before sbatch runs.
  for (auto set : std::vector<void (*)(TestRun&, std::string&)>{
           [](TestRun& r, std::string&) { r.partition = "h100\n--uid=0"; },
           [](TestRun&, std::string& n) { n += "\n--uid=0"; },
           [](TestRun& r, std::string&) { r.workdir += "\nx"; },
           [](TestRun& r, std::string&) { r.run_dir += "\nx"; },
           [](TestRun& r, std::string&) { r.account = "attune\n"; },
           [](TestRun& r, std::string&) { r.constraint = "h100\n"; }}) {
    TestRun bad = t;
    std::string bad_name = name;
    set(bad, bad_name);
    try {
      c.submit(launch("inj-bad", bad, std::nullopt, bad_name));
      ADD_FAILURE() << "a control character in an option value was accepted";
    } catch (const ClusterError& e) {
      EXPECT_NE(std::string(e.what()).find("contains a control character"), std::string::npos) << e.what();
    }
  }

  const Launch l = launch("inj", t, std::nullopt, name);
  const RunSpec& s = l.spec();
  const RunId id = submit(c, l);
  const RunStatus st = wait_final(c, id, 60);
  ASSERT_EQ(st.state, RunState::Completed) << st.reason << "\n" << c.log(id);
  std::string expected;
  for (const auto& v : values) expected += v + "\n";
  expected += s.env.at("INJ_ONE") + "\n" + s.env.at("INJ_TWO") + "\n" + workdir.string() + "\n";
  EXPECT_EQ(c.log(id), expected);
  EXPECT_TRUE(std::filesystem::exists(s.log_path)) << "Slurm expanded a % in the log path";
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(workdir / "MARKER"));
  EXPECT_FALSE(std::filesystem::exists("MARKER"));
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    EXPECT_NE(it->path().filename(), "MARKER") << it->path();
  // Slurm kept the name as given.
  EXPECT_EQ(slurm_out({"squeue", "-h", "-t", "all", "-j", id.id, "-o", "%j"}), s.name + "\n");
}

TEST_F(SlurmClusterTest, TimeLimitEndsInTimeout) {
  SlurmCluster c(def());
  TestRun t = run("h100", {"sleep", "300"});
  t.time_limit_s = 60;
  const Launch l = launch("timeout", t);
  const auto t0 = Clock::now();
  const RunId id = submit(c, l);
  // Slurm checks limits every 30 s: TIMEOUT comes 60-90 s after the start.
  const RunStatus st = wait_final(c, id, 240);
  ASSERT_EQ(st.state, RunState::Timeout) << st.reason;
  EXPECT_EQ(st.reason, "TIMEOUT TimeLimit");
  EXPECT_GE(st.elapsed_s, 60);
  EXPECT_LT(st.elapsed_s, 200);
  EXPECT_LT(seconds_since(t0), 240);
  EXPECT_NE(c.log(id).find("DUE TO TIME LIMIT"), std::string::npos) << c.log(id);
}

TEST_F(SlurmClusterTest, CancelEndsTheRun) {
  SlurmCluster c(def());
  const RunId id = submit(c, launch("cancel", "h200", {"sleep", "300"}));
  ASSERT_EQ(wait_running(c, id, 60).state, RunState::Running);
  const auto t0 = Clock::now();
  c.cancel(id);
  EXPECT_LT(seconds_since(t0), 31);
  const RunStatus st = c.poll(id);
  EXPECT_EQ(st.state, RunState::Cancelled) << st.reason;
  EXPECT_EQ(st.reason.rfind("CANCELLED", 0), 0u) << st.reason;
  // Cancelling again is a no-op.
  EXPECT_NO_THROW(c.cancel(id));
  EXPECT_EQ(c.poll(id).state, RunState::Cancelled);
}

// The hang watchdog on Slurm: a job whose log stops showing new steps is
// cancelled through scancel and recorded as a hang.
TEST_F(SlurmClusterTest, HangWatchdogCancelsAStalledJob) {
  SlurmCluster c(def());
  const auto lines = dir_ / "lines.txt";
  std::ofstream out(lines);
  for (int n = 1; n <= 3; ++n)
    out << fmt::format(
               " [2026-11-30 10:00:0{}] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per "
               "iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 400.1 | learning rate: 3.000000E-04 | "
               "global batch size:   128 | lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: 1.000 | number of "
               "skipped iterations:   0 | number of nan iterations:   0 |",
               n, n, 100, n * 128)
        << "\n";
  out.close();
  TestRun t = run("h200", {"/bin/sh", "-c", "cat \"$0\"; sleep 300", lines.string()});
  t.expected_step_s = 0.1;
  const Launch l = launch("hang", t);
  const RunSpec& s = l.spec();
  const RunId id = submit(c, l);
  WatchOptions o;
  o.poll_min_s = 0.2;
  o.poll_max_s = 1;
  o.min_hang_s = 4;
  o.startup_allowance_s = 20;
  long steps = 0;
  o.on_progress = [&](const WatchProgress& p) { steps = p.steps; };
  const auto t0 = Clock::now();
  const RunStatus st = watch_run(c, id, s, o);
  EXPECT_EQ(st.state, RunState::Hang) << st.reason;
  EXPECT_NE(st.reason.find("no new step"), std::string::npos) << st.reason;
  EXPECT_EQ(steps, 3);
  EXPECT_LT(seconds_since(t0), 60);
  const auto info = parse_squeue_job(slurm_out({"squeue", "-h", "-t", "all", "-j", id.id, "-O", kSqueueFormat}), id.id);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->state.rfind("CANCELLED", 0), 0u) << info->state;
}

// Sets a node back to service however the test ends.
struct NodeResumer {
  std::string node;
  ~NodeResumer() {
    if (node.empty()) return;
    ProcessOptions o;
    o.timeout_s = 30;
    const ProcessResult r = run_process({"scontrol", "update", "nodename=" + node, "state=resume"}, o);
    if (!r.ok()) ADD_FAILURE() << "could not resume " << node << ": " << r.err << r.error;
  }
};

TEST_F(SlurmClusterTest, NodeDownEndsInNodeFail) {
  SlurmCluster c(def());
  TestRun t = run("b200", {"sleep", "300"});
  t.gpus_per_node = 8;
  t.exclusive = true;
  const RunId id = submit(c, launch("nodedown", t));
  ASSERT_EQ(wait_running(c, id, 60).state, RunState::Running);
  std::string node = slurm_out({"squeue", "-h", "-j", id.id, "-o", "%N"});
  while (!node.empty() && (node.back() == '\n' || node.back() == ' ')) node.pop_back();
  ASSERT_EQ(node.rfind("b200-", 0), 0u) << node;
  NodeResumer resume{node};
  slurm_out({"scontrol", "update", "nodename=" + node, "state=down", "reason=attune-test"});
  const auto t0 = Clock::now();
  const RunStatus st = wait_final(c, id, 30);
  EXPECT_EQ(st.state, RunState::NodeFail) << st.reason;
  EXPECT_EQ(st.reason, "NODE_FAIL NodeDown");
  EXPECT_LT(seconds_since(t0), 30);
}

TEST_F(SlurmClusterTest, RefusalsNameTheSetting) {
  SlurmCluster c(def());
  const auto refusal = [&](const Launch& l) -> std::string {
    try {
      c.submit(l);
    } catch (const ClusterError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const Launch p = launch("nopart", "nosuch", {"true"});
  std::string e = refusal(p);
  EXPECT_NE(e.find("cluster 'mock' refused run '" + p.spec().name +
                   "': partition 'nosuch' does not exist on cluster 'mock'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("(sbatch: error: Batch job submission failed: Invalid partition name specified)"),
            std::string::npos)
      << e;

  TestRun g = run("h100", {"true"});
  g.gpus_per_node = 9;
  e = refusal(launch("nine", g));
  EXPECT_NE(e.find("no node in partition 'h100' has 9 GPUs of type 'h100' per node"), std::string::npos) << e;
  EXPECT_NE(e.find("Requested node configuration is not available"), std::string::npos) << e;

  TestRun a = run("h100", {"true"});
  a.account = "nosuch";
  e = refusal(launch("acct", a));
  EXPECT_NE(e.find("account 'nosuch' does not exist on cluster 'mock'"), std::string::npos) << e;

  TestRun t = run("h100", {"true"});
  t.time_limit_s = 3 * 86400;
  e = refusal(launch("time", t));
  EXPECT_NE(e.find("time limit: 4320 minutes"), std::string::npos) << e;

  TestRun n = run("h200", {"true"});
  n.nodes = 3;
  e = refusal(launch("nodes", n));
  EXPECT_NE(e.find("nodes: partition 'h200' does not allow 3 nodes"), std::string::npos) << e;
  // (No launch asks for fewer than one node: sbatch_job's own check of that
  // is tested on a RunSpec in tests/cluster.)
}

TEST_F(SlurmClusterTest, RestartFindsAndAttachesTheRun) {
  const Launch l = launch("restart", "h200", {"sleep", "5"});
  const RunSpec& s = l.spec();
  RunId id;
  {
    SlurmCluster first(def());
    id = submit(first, l);
  }  // attune "restarts": the job goes on
  SlurmCluster second(def());
  const auto found = second.find_run(s);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->cluster, "mock");
  EXPECT_EQ(found->id, id.id);
  EXPECT_THROW(second.poll(id), ClusterError);  // not tracked before attach
  second.attach(*found, s);
  const RunStatus st = wait_final(second, *found, 60);
  EXPECT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_GE(st.elapsed_s, 5);

  const RunSpec never = launch("never", "h200", {"true"}).spec();
  EXPECT_FALSE(second.find_run(never));
  try {
    second.attach(RunId{"mock", "99999999"}, never);
    ADD_FAILURE() << "attached a job Slurm never had";
  } catch (const ClusterError& e) {
    EXPECT_EQ(std::string(e.what()), "run mock:99999999 is gone");
  }
}

TEST_F(SlurmClusterTest, TwentyRunsAtOnce) {
  SlurmCluster c(def());
  std::vector<RunSpec> specs;
  std::vector<RunId> ids;
  for (int i = 0; i < 20; ++i) {
    TestRun t = run(i % 2 == 0 ? "h100" : "h200", {"sleep", "2"});
    t.gpus_per_node = 8;
    t.exclusive = true;
    const Launch l = launch(fmt::format("many{}", i), t);
    ids.push_back(submit(c, l));
    specs.push_back(l.spec());
  }
  const auto deadline = Clock::now() + std::chrono::seconds(240);
  std::vector<RunStatus> final(20);
  std::vector<bool> done(20, false);
  int left = 20;
  double pause = 0.2;
  while (left > 0 && Clock::now() < deadline) {
    for (int i = 0; i < 20; ++i) {
      if (done[i]) continue;
      final[i] = c.poll(ids[i]);
      if (is_final(final[i].state)) {
        done[i] = true;
        --left;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 1.5, 2.0);
  }
  ASSERT_EQ(left, 0) << "runs still going after 240 s";
  double total = 0, expected_total = 0;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(final[i].state, RunState::Completed) << specs[i].name << ": " << final[i].reason;
    EXPECT_GE(final[i].elapsed_s, 2) << specs[i].name;
    total += gpu_hours(specs[i], final[i].elapsed_s);
    expected_total += 8 * final[i].elapsed_s / 3600;
    const auto sacct = sacct_elapsed(ids[i].id);
    ASSERT_TRUE(sacct) << "sacct does not have job " << ids[i].id;
    EXPECT_NEAR(final[i].elapsed_s, *sacct, 1.0) << specs[i].name;
  }
  EXPECT_NEAR(total, expected_total, 1e-9);
  EXPECT_GT(total, 20 * 8 * 2 / 3600.0 - 1e-9);
}

TEST_F(SlurmClusterTest, TimeScaleScalesTheLimitAndTheElapsedTime) {
  SlurmCluster c(def(60));
  TestRun t = run("h100", {"sleep", "2"});
  t.time_limit_s = 7200;  // two simulated hours: two real minutes
  const RunId id = submit(c, launch("scaled", t, def(60)));
  const std::string job = slurm_out({"scontrol", "show", "job", "-o", id.id});
  EXPECT_NE(job.find("TimeLimit=00:02:00"), std::string::npos) << job;
  const RunStatus st = wait_final(c, id, 60);
  ASSERT_EQ(st.state, RunState::Completed) << st.reason;
  EXPECT_GE(st.elapsed_s, 120);
  EXPECT_EQ(std::fmod(st.elapsed_s, 60.0), 0.0) << st.elapsed_s;  // whole real seconds x 60
  const auto sacct = sacct_elapsed(id.id);
  ASSERT_TRUE(sacct);
  EXPECT_NEAR(st.elapsed_s, *sacct * 60, 60.0);
}

}  // namespace
}  // namespace attune::cluster
