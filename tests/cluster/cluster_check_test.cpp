// check_cluster: what `attune cluster check` finds for each kind of cluster —
// sim (nothing to reach), local (the GPUs), a Slurm definition whose
// slurm.conf is missing or whose commands are not on PATH, fake Slurm
// commands answering for partitions, GPU types, account and accounting, and
// a mock whose attune binary is not executable.
#include "attune/cluster/cluster_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace attune::cluster {
namespace {

namespace fs = std::filesystem;

ClusterDefinition definition(const std::string& name, const std::string& backend) {
  ClusterDefinition d;
  d.name = name;
  d.backend = backend;
  return d;
}

CheckContext context(const std::string& attune_binary = "") {
  CheckContext c;
  c.attune_binary = attune_binary;
  c.command_timeout_s = 10;
  return c;
}

const CheckItem* find(const std::vector<CheckItem>& items, const std::string& what) {
  for (const auto& i : items) {
    if (i.what == what) return &i;
  }
  return nullptr;
}

std::string listing(const std::vector<CheckItem>& items) {
  std::string out;
  for (const auto& i : items) out += to_string(i.level) + " " + i.what + ": " + i.detail + "\n";
  return out;
}

// Sets PATH for the life of the object, and puts the old one back. The unit
// tests run on one thread, and run_process reads PATH from the environment
// it copies for the child.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_) ::setenv("PATH", old_->c_str(), 1);
    else ::unsetenv("PATH");
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> old_;
};

class ClusterCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attune_cluster_check_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text, bool executable) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), executable ? 0755 : 0644);
    return p.string();
  }
  // A fake Slurm client command in dir_/bin: a /bin/sh script (nothing else
  // from PATH is needed: echo and case are the shell's own).
  void fake(const std::string& program, const std::string& body) {
    file("bin/" + program, "#!/bin/sh\n" + body, true);
  }
  std::string bin() const { return (dir_ / "bin").string(); }

  fs::path dir_;
};

TEST_F(ClusterCheckTest, SimHasOneOkItem) {
  const auto items = check_cluster(definition("sim", "sim"), context());
  ASSERT_EQ(items.size(), 1u) << listing(items);
  EXPECT_EQ(items[0].what, "simulator");
  EXPECT_EQ(items[0].level, CheckLevel::Ok);
  EXPECT_TRUE(check_passed(items));
}

TEST_F(ClusterCheckTest, LocalReportsItsGpusAndPassesEitherWay) {
  const auto items = check_cluster(definition("local", "local"), context());
  ASSERT_EQ(items.size(), 1u) << listing(items);
  EXPECT_EQ(items[0].what, "gpus");
  EXPECT_NE(items[0].level, CheckLevel::Fail);  // no GPU here is a warning, not a failure
  EXPECT_FALSE(items[0].detail.empty());
  EXPECT_TRUE(check_passed(items));
}

TEST_F(ClusterCheckTest, LocalWithoutNvidiaSmiWarns) {
  const ScopedPath path(bin());  // nothing in it
  const auto items = check_cluster(definition("local", "local"), context());
  ASSERT_EQ(items.size(), 1u) << listing(items);
  EXPECT_EQ(items[0].level, CheckLevel::Warn);
  EXPECT_NE(items[0].detail.find("nvidia-smi"), std::string::npos) << items[0].detail;
  EXPECT_TRUE(check_passed(items));
}

TEST_F(ClusterCheckTest, LocalCountsTheGpusNvidiaSmiLists) {
  fake("nvidia-smi",
       "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\necho 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)'\n");
  const ScopedPath path(bin());
  const auto items = check_cluster(definition("local", "local"), context());
  ASSERT_EQ(items.size(), 1u) << listing(items);
  EXPECT_EQ(items[0].level, CheckLevel::Ok);
  EXPECT_NE(items[0].detail.find("2 GPU(s)"), std::string::npos) << items[0].detail;
  EXPECT_NE(items[0].detail.find("H100"), std::string::npos) << items[0].detail;
}

TEST_F(ClusterCheckTest, MissingSlurmConfFailsAloneAndSaysSo) {
  // Slurm commands on PATH that would answer: none of them may be run.
  fake("scontrol", "echo called >> \"$0.calls\"; echo 'Slurmctld(primary) at ctl is UP'\n");
  fake("sbatch", "echo called >> \"$0.calls\"; echo 'slurm 22.05.8'\n");
  const ScopedPath path(bin());
  ClusterDefinition d = definition("p5", "slurm");
  d.slurm_conf = (dir_ / "no" / "slurm.conf").string();
  const auto items = check_cluster(d, context());
  ASSERT_EQ(items.size(), 1u) << listing(items);
  EXPECT_EQ(items[0].what, "slurm.conf");
  EXPECT_EQ(items[0].level, CheckLevel::Fail);
  EXPECT_NE(items[0].detail.find(d.slurm_conf), std::string::npos) << items[0].detail;
  EXPECT_NE(items[0].detail.find("does not exist"), std::string::npos) << items[0].detail;
  EXPECT_FALSE(check_passed(items));
  EXPECT_FALSE(fs::exists(dir_ / "bin" / "scontrol.calls"));
  EXPECT_FALSE(fs::exists(dir_ / "bin" / "sbatch.calls"));
}

TEST_F(ClusterCheckTest, MissingMockSlurmConfSaysHowToStartIt) {
  ClusterDefinition d = definition("mock", "slurm");
  d.payload = Payload::Sim;
  d.time_scale = 60;
  d.slurm_conf = (dir_ / "no" / "slurm.conf").string();
  const auto items = check_cluster(d, context("/bin/sh"));
  const CheckItem* conf = find(items, "slurm.conf");
  ASSERT_NE(conf, nullptr) << listing(items);
  EXPECT_EQ(conf->level, CheckLevel::Fail);
  EXPECT_NE(conf->detail.find("scripts/mock-slurm/start.sh"), std::string::npos) << conf->detail;
  EXPECT_EQ(find(items, "sbatch"), nullptr) << listing(items);
  EXPECT_EQ(find(items, "controller"), nullptr) << listing(items);
  // The payload is still checked: everything wrong is said at once.
  const CheckItem* payload = find(items, "payload");
  ASSERT_NE(payload, nullptr) << listing(items);
  EXPECT_EQ(payload->level, CheckLevel::Ok);
  EXPECT_FALSE(check_passed(items));
}

TEST_F(ClusterCheckTest, SlurmCommandsNotOnPathFailEachAndStopThere) {
  const ScopedPath path(bin());  // an empty directory
  const auto items = check_cluster(definition("p5", "slurm"), context());
  const CheckItem* conf = find(items, "slurm.conf");
  ASSERT_NE(conf, nullptr) << listing(items);
  EXPECT_EQ(conf->level, CheckLevel::Ok);  // "": the environment's
  for (const char* program : {"sbatch", "squeue", "sacct", "scontrol", "scancel", "sinfo"}) {
    const CheckItem* i = find(items, program);
    ASSERT_NE(i, nullptr) << program << "\n" << listing(items);
    EXPECT_EQ(i->level, CheckLevel::Fail) << program;
    EXPECT_NE(i->detail.find("not found"), std::string::npos) << i->detail;
    EXPECT_NE(i->detail.find("slurm-client"), std::string::npos) << i->detail;
  }
  EXPECT_EQ(items.size(), 7u) << listing(items);  // no controller, partition or account checks
  EXPECT_EQ(find(items, "controller"), nullptr);
  EXPECT_FALSE(check_passed(items));
}

// Fake client commands that answer like a small cluster with partitions gpu
// (H100 nodes) and h200, when SLURM_CONF is the definition's file.
class ClusterCheckFakeSlurmTest : public ClusterCheckTest {
 protected:
  void SetUp() override {
    ClusterCheckTest::SetUp();
    conf_ = file("slurm.conf", "ClusterName=fake\n", false);
    const std::string version = "if [ \"$1\" = --version ]; then echo 'slurm 22.05.8'; exit 0; fi\n";
    const std::string conf_check = "[ \"$SLURM_CONF\" = '" + conf_ + "' ] || { echo 'wrong SLURM_CONF' >&2; exit 1; }\n";
    for (const char* p : {"squeue", "scancel"}) fake(p, version + "exit 1\n");
    // `sbatch --test-only` validates the request a run would get; it records its argv.
    fake("sbatch", version + conf_check + "echo \"$@\" > \"$0.args\"\n[ \"$1\" = --test-only ] || exit 1\n" +
                       "echo 'sbatch: Job 9 to start at 2026-12-03T10:00:00 using 8 processors on nodes n1 in partition gpu' >&2\n");
    fake("scontrol", version + conf_check +
                         "[ \"$1\" = ping ] && echo 'Slurmctld(primary) at ctl is UP' && exit 0\nexit 1\n");
    fake("sinfo", version + conf_check + "echo 'gpu|gpu:h100:8|h100,ib|64'\necho 'h200|gpu:h200:8|h200|64'\n");
    fake("sacctmgr", conf_check + "echo attune\n");
    fake("sacct", version + conf_check + "echo 17\n");
  }
  ClusterDefinition def() const {
    ClusterDefinition d = definition("fake", "slurm");
    d.slurm_conf = conf_;
    d.partition = "gpu";
    d.account = "attune";
    return d;
  }
  std::string conf_;
};

TEST_F(ClusterCheckFakeSlurmTest, AllOk) {
  const ScopedPath path(bin());
  ClusterDefinition d = def();
  d.partitions = {{"gpu", "h100"}, {"h200", "h200"}};
  const auto items = check_cluster(d, context());
  EXPECT_TRUE(check_passed(items)) << listing(items);
  for (const char* what : {"slurm.conf", "sbatch", "squeue", "sacct", "scontrol", "scancel", "sinfo", "controller",
                           "partition gpu", "partition h200", "account attune", "accounting"}) {
    const CheckItem* i = find(items, what);
    ASSERT_NE(i, nullptr) << what << "\n" << listing(items);
    EXPECT_EQ(i->level, CheckLevel::Ok) << what << ": " << i->detail;
  }
  EXPECT_NE(find(items, "sbatch")->detail.find("22.05.8"), std::string::npos);
  EXPECT_NE(find(items, "controller")->detail.find("UP"), std::string::npos);
  EXPECT_NE(find(items, "partition gpu")->detail.find("gpu:h100:8"), std::string::npos);
  EXPECT_EQ(find(items, "payload"), nullptr);  // payload command: no attune binary needed
}

// The check prints the exact request a run gets and has Slurm validate it
// (`sbatch --test-only`); a constraint names a feature the nodes must have.
TEST_F(ClusterCheckFakeSlurmTest, TheRequestIsPrintedAndValidated) {
  const ScopedPath path(bin());
  ClusterDefinition d = def();
  d.partitions = {{"gpu", "h100"}};
  d.cpus_per_task = 16;
  d.sbatch_args = {"--reservation=llm"};
  d.srun_args = {"--mpi=none"};
  d.constraint = "ib";
  const auto items = check_cluster(d, context());
  EXPECT_TRUE(check_passed(items)) << listing(items);
  const CheckItem* argv = find(items, "sbatch argv");
  ASSERT_NE(argv, nullptr) << listing(items);
  EXPECT_NE(argv->detail.find("--gpus-per-node=h100:8 --constraint=ib --partition=gpu --account=attune"),
            std::string::npos) << argv->detail;
  EXPECT_NE(argv->detail.find("--cpus-per-task=16"), std::string::npos) << argv->detail;
  EXPECT_NE(argv->detail.find("--reservation=llm run.log.sbatch"), std::string::npos) << argv->detail;
  const CheckItem* srun = find(items, "srun argv");
  ASSERT_NE(srun, nullptr) << listing(items);
  EXPECT_NE(srun->detail.find("srun --ntasks-per-node=1 --kill-on-bad-exit=1 --cpus-per-task=16 '--mpi=none'"),
            std::string::npos) << srun->detail;
  EXPECT_EQ(find(items, "request")->level, CheckLevel::Ok);
  EXPECT_EQ(find(items, "constraint")->level, CheckLevel::Ok);
  std::ifstream args(dir_ / "bin" / "sbatch.args");
  std::string line;
  std::getline(args, line);
  EXPECT_EQ(line.rfind("--test-only --job-name=attune-cluster-check", 0), 0u) << line;
  // A feature no node of the partition has, and a request Slurm refuses.
  d.constraint = "ib&nvlink";
  fake("sbatch", "if [ \"$1\" = --version ]; then echo 'slurm 22.05.8'; exit 0; fi\n"
                 "echo 'sbatch: error: Batch job submission failed: Invalid feature specification' >&2; exit 1\n");
  const auto bad = check_cluster(d, context());
  EXPECT_FALSE(check_passed(bad));
  EXPECT_EQ(find(bad, "constraint")->level, CheckLevel::Fail);
  EXPECT_NE(find(bad, "constraint")->detail.find("nvlink"), std::string::npos) << find(bad, "constraint")->detail;
  EXPECT_EQ(find(bad, "request")->level, CheckLevel::Fail);
}

// Typed gres asks for the type in a node's gres: a type only in the features
// would be refused.
TEST_F(ClusterCheckFakeSlurmTest, AGpuTypeOnlyInTheFeaturesFailsTypedGres) {
  fake("sinfo", "if [ \"$1\" = --version ]; then echo 'slurm 22.05.8'; exit 0; fi\necho 'gpu|gpu:8|h100,ib|64'\n");
  const ScopedPath path(bin());
  ClusterDefinition d = def();
  d.partitions = {{"gpu", "h100"}};
  EXPECT_EQ(find(check_cluster(d, context()), "partition gpu")->level, CheckLevel::Fail);
  d.typed_gres = false;
  EXPECT_EQ(find(check_cluster(d, context()), "partition gpu")->level, CheckLevel::Ok);
}

TEST_F(ClusterCheckFakeSlurmTest, WrongPartitionGpuAndAccountFail) {
  fake("sacctmgr", "echo\n");  // no such account
  const ScopedPath path(bin());
  ClusterDefinition d = def();
  d.partition = "nosuch";
  d.partitions = {{"gpu", "h100"}, {"h200", "b200"}};
  const auto items = check_cluster(d, context());
  EXPECT_FALSE(check_passed(items));
  const CheckItem* missing = find(items, "partition nosuch");
  ASSERT_NE(missing, nullptr) << listing(items);
  EXPECT_EQ(missing->level, CheckLevel::Fail);
  EXPECT_NE(missing->detail.find("gpu, h200"), std::string::npos) << missing->detail;
  const CheckItem* wrong_gpu = find(items, "partition h200");
  ASSERT_NE(wrong_gpu, nullptr) << listing(items);
  EXPECT_EQ(wrong_gpu->level, CheckLevel::Fail);
  EXPECT_NE(wrong_gpu->detail.find("b200"), std::string::npos) << wrong_gpu->detail;
  EXPECT_EQ(find(items, "partition gpu")->level, CheckLevel::Ok);
  EXPECT_EQ(find(items, "account attune")->level, CheckLevel::Fail);
  EXPECT_EQ(find(items, "accounting")->level, CheckLevel::Ok);
}

TEST_F(ClusterCheckFakeSlurmTest, ControllerDownStopsThere) {
  fake("scontrol", "if [ \"$1\" = --version ]; then echo 'slurm 22.05.8'; exit 0; fi\n"
                   "echo 'Slurmctld(primary) at ctl is DOWN'; exit 1\n");
  const ScopedPath path(bin());
  const auto items = check_cluster(def(), context());
  const CheckItem* ctl = find(items, "controller");
  ASSERT_NE(ctl, nullptr) << listing(items);
  EXPECT_EQ(ctl->level, CheckLevel::Fail);
  EXPECT_NE(ctl->detail.find("DOWN"), std::string::npos) << ctl->detail;
  EXPECT_EQ(find(items, "partition gpu"), nullptr) << listing(items);
  EXPECT_EQ(find(items, "account attune"), nullptr) << listing(items);
  EXPECT_FALSE(check_passed(items));
}

TEST_F(ClusterCheckFakeSlurmTest, AccountingDownOnlyWarns) {
  fake("sacct", "if [ \"$1\" = --version ]; then echo 'slurm 22.05.8'; exit 0; fi\n"
                "echo 'Slurm accounting storage is disabled' >&2; exit 1\n");
  fake("sacctmgr", "echo 'sacctmgr: error: no connection' >&2; exit 1\n");
  const ScopedPath path(bin());
  const auto items = check_cluster(def(), context());
  EXPECT_TRUE(check_passed(items)) << listing(items);
  EXPECT_EQ(find(items, "accounting")->level, CheckLevel::Warn);
  EXPECT_NE(find(items, "accounting")->detail.find("accounting storage is disabled"), std::string::npos);
  EXPECT_EQ(find(items, "account attune")->level, CheckLevel::Warn);
}

TEST_F(ClusterCheckFakeSlurmTest, PayloadSimBinaryMustBeExecutable) {
  const ScopedPath path(bin());
  ClusterDefinition d = def();
  d.payload = Payload::Sim;
  const std::string not_executable = file("attune", "#!/bin/sh\n", false);
  const auto bad = check_cluster(d, context(not_executable));
  const CheckItem* payload = find(bad, "payload");
  ASSERT_NE(payload, nullptr) << listing(bad);
  EXPECT_EQ(payload->level, CheckLevel::Fail);
  EXPECT_NE(payload->detail.find(not_executable), std::string::npos) << payload->detail;
  EXPECT_FALSE(check_passed(bad));
  EXPECT_EQ(find(bad, "controller")->level, CheckLevel::Ok);  // the rest still checked

  const std::string executable = file("attune-ok", "#!/bin/sh\n", true);
  const auto good = check_cluster(d, context(executable));
  ASSERT_NE(find(good, "payload"), nullptr) << listing(good);
  EXPECT_EQ(find(good, "payload")->level, CheckLevel::Ok);
  EXPECT_NE(find(good, "payload")->detail.find(executable), std::string::npos);
  EXPECT_TRUE(check_passed(good)) << listing(good);

  // A missing or unnamed binary fails the same way (a missing slurm.conf
  // keeps these from running the Slurm commands again).
  d.slurm_conf = (dir_ / "no" / "slurm.conf").string();
  for (const std::string& b : {(dir_ / "missing").string(), std::string()}) {
    const auto items = check_cluster(d, context(b));
    ASSERT_NE(find(items, "payload"), nullptr) << b << "\n" << listing(items);
    EXPECT_EQ(find(items, "payload")->level, CheckLevel::Fail) << b;
  }
}

// A directory is searchable (X_OK) but no program.
TEST_F(ClusterCheckTest, PayloadBinaryThatIsADirectoryFails) {
  ClusterDefinition d = definition("mock", "slurm");
  d.payload = Payload::Sim;
  d.slurm_conf = (dir_ / "no" / "slurm.conf").string();  // no Slurm command runs
  const auto items = check_cluster(d, context(bin()));
  ASSERT_NE(find(items, "payload"), nullptr) << listing(items);
  EXPECT_EQ(find(items, "payload")->level, CheckLevel::Fail);
}

TEST_F(ClusterCheckTest, PayloadSimOnALocalClusterChecksTheBinaryToo) {
  ClusterDefinition d = definition("m", "local");
  d.payload = Payload::Sim;
  const auto items = check_cluster(d, context(file("attune", "", false)));
  const CheckItem* payload = find(items, "payload");
  ASSERT_NE(payload, nullptr) << listing(items);
  EXPECT_EQ(payload->level, CheckLevel::Fail);
  EXPECT_FALSE(check_passed(items));
}

// ---------------------------------------------------------------- results

TEST(ClusterCheckResult, PassedLevelsJsonAndText) {
  EXPECT_TRUE(check_passed({}));
  EXPECT_TRUE(check_passed({{"a", CheckLevel::Ok, ""}, {"b", CheckLevel::Warn, ""}}));
  EXPECT_FALSE(check_passed({{"a", CheckLevel::Ok, ""}, {"b", CheckLevel::Fail, ""}, {"c", CheckLevel::Warn, ""}}));

  EXPECT_EQ(to_string(CheckLevel::Ok), "ok");
  EXPECT_EQ(to_string(CheckLevel::Warn), "warn");
  EXPECT_EQ(to_string(CheckLevel::Fail), "FAIL");

  const nlohmann::json j = to_json({{"sbatch", CheckLevel::Ok, "slurm 22.05.8"},
                                    {"accounting", CheckLevel::Warn, "sacct does not answer"},
                                    {"partition x", CheckLevel::Fail, "no such partition"}});
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0], (nlohmann::json{{"what", "sbatch"}, {"level", "ok"}, {"detail", "slurm 22.05.8"}}));
  EXPECT_EQ(j[1]["level"], "warn");
  EXPECT_EQ(j[2]["level"], "fail");  // lower case in JSON
  EXPECT_EQ(j[2]["what"], "partition x");
  EXPECT_EQ(j[2]["detail"], "no such partition");
  EXPECT_TRUE(to_json({}).is_array());
  EXPECT_TRUE(to_json({}).empty());
}

}  // namespace
}  // namespace attune::cluster
