#include "attune/cluster/run_journal.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::cluster {
namespace {

// Every field away from its default.
RunSpec full_spec(const std::string& name) {
  RunSpec s;
  s.name = name;
  s.nodes = 4;
  s.gpus_per_node = 4;
  s.gpu = "h200";
  s.time_limit_s = 7200.25;
  s.log_path = "/scratch/runs/" + name + ".log";
  s.command = {"torchrun", "--nproc_per_node", "4", "pretrain_gpt.py", "--lr", "3e-4", "a \"quoted\" arg\twith\ttabs"};
  s.env = {{"NCCL_DEBUG", "WARN"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"WEIRD", "line\nbreak = 1"}};
  s.workdir = "/opt/megatron";
  s.steps = 123;
  s.expected_step_s = 1.2345678901234567;
  s.partition = "batch";
  s.account = "llm";
  s.qos = "high";
  s.constraint = "h200&ib";
  s.exclusive = false;
  s.container_image = "nvcr.io/nvidia/nemo:25.02";
  s.container_mounts = {"/lustre:/lustre", "/home:/home:ro"};
  s.per_node = false;
  return s;
}

void expect_same(const RunSpec& a, const RunSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.time_limit_s, b.time_limit_s);
  EXPECT_EQ(a.log_path, b.log_path);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.workdir, b.workdir);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.expected_step_s, b.expected_step_s);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.account, b.account);
  EXPECT_EQ(a.qos, b.qos);
  EXPECT_EQ(a.constraint, b.constraint);
  EXPECT_EQ(a.exclusive, b.exclusive);
  EXPECT_EQ(a.container_image, b.container_image);
  EXPECT_EQ(a.container_mounts, b.container_mounts);
  EXPECT_EQ(a.per_node, b.per_node);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class RunJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attune_run_journal_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "campaign" / "runs.jsonl").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void append_raw(const std::string& text) {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST(RunJournalJsonTest, EveryFieldRoundTrips) {
  const RunSpec s = full_spec("round-trip");
  const nlohmann::json j = run_spec_json(s);
  expect_same(run_spec_from_json(j), s);
  expect_same(run_spec_from_json(nlohmann::json::parse(j.dump())), s);  // through text
  expect_same(run_spec_from_json(run_spec_json(RunSpec{})), RunSpec{});  // defaults too

  RunSpec odd;
  odd.time_limit_s = std::numeric_limits<double>::infinity();
  odd.expected_step_s = std::numeric_limits<double>::quiet_NaN();
  const RunSpec back = run_spec_from_json(nlohmann::json::parse(run_spec_json(odd).dump()));
  EXPECT_TRUE(std::isinf(back.time_limit_s));
  EXPECT_TRUE(std::isnan(back.expected_step_s));

  // Absent keys keep the defaults; unknown ones are ignored.
  const RunSpec sparse = run_spec_from_json(nlohmann::json{{"name", "x"}, {"future_field", 1}});
  EXPECT_EQ(sparse.name, "x");
  EXPECT_EQ(sparse.gpus_per_node, RunSpec{}.gpus_per_node);
  try {
    run_spec_from_json(nlohmann::json{{"nodes", "four"}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "nodes");
  }
  EXPECT_THROW(run_spec_from_json(nlohmann::json{{"env", {{"A", 1}}}}), InputError);
  EXPECT_THROW(run_spec_from_json(nlohmann::json::array()), InputError);
}

TEST(RunJournalJsonTest, StatusRoundTrips) {
  RunStatus s;
  s.state = RunState::OutOfMemory;
  s.reason = "the scheduler killed it";
  s.elapsed_s = 1234.5;
  const RunStatus back = run_status_from_json(nlohmann::json::parse(run_status_json(s).dump()));
  EXPECT_EQ(back.state, s.state);
  EXPECT_EQ(back.reason, s.reason);
  EXPECT_EQ(back.elapsed_s, s.elapsed_s);
  EXPECT_EQ(run_status_json(s)["state"], "out_of_memory");
  EXPECT_THROW(run_status_from_json(nlohmann::json{{"state", "exploded"}}), InputError);
  for (const RunState st : {RunState::Pending, RunState::Running, RunState::Completed, RunState::Failed,
                            RunState::Cancelled, RunState::Timeout, RunState::NodeFail, RunState::OutOfMemory,
                            RunState::Preempted, RunState::Hang})
    EXPECT_EQ(run_state_from_string(to_string(st)), st);
  EXPECT_EQ(run_state_from_string("nope"), std::nullopt);
}

TEST_F(RunJournalTest, LaunchingLaunchedFinished) {
  RunJournal j(path_);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "campaign"));  // parent directories created
  EXPECT_TRUE(j.entries().empty());
  const RunSpec s = full_spec("trial-1");
  j.launching("trial-1", "slurm", s, "recipes/trial-1.sh");
  auto e = j.find("trial-1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->state, "launching");
  EXPECT_EQ(e->cluster, "slurm");
  EXPECT_EQ(e->id, "");
  EXPECT_EQ(e->recipe, "recipes/trial-1.sh");
  expect_same(e->spec, s);

  j.launched("trial-1", RunId{"slurm", "123456"});
  e = j.find("trial-1");
  EXPECT_EQ(e->state, "launched");
  EXPECT_EQ(e->id, "123456");

  RunStatus done;
  done.state = RunState::Hang;
  done.reason = "no new step for 600 s (expected step time 4.2 s)";
  done.elapsed_s = 4321;
  j.finished("trial-1", done);
  e = j.find("trial-1");
  EXPECT_EQ(e->state, "hang");
  EXPECT_EQ(e->status.state, RunState::Hang);
  EXPECT_EQ(e->status.reason, done.reason);
  EXPECT_EQ(e->status.elapsed_s, 4321);
  EXPECT_EQ(e->id, "123456");
  EXPECT_FALSE(j.find("nope").has_value());

  // One record a line, each a JSON object with its event.
  const auto lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["event"], "launching");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["event"], "launched");
  EXPECT_EQ(nlohmann::json::parse(lines[2])["event"], "finished");
}

TEST_F(RunJournalTest, UnfinishedAndReopenFromDisk) {
  {
    RunJournal j(path_);
    j.launching("a", "local", full_spec("a"), "a.sh");
    j.launching("b", "local", full_spec("b"), "b.sh");
    j.launching("c", "local", full_spec("c"), "c.sh");
    j.launched("a", {"local", "101"});
    j.launched("b", {"local", "102"});
    RunStatus ok;
    ok.state = RunState::Completed;
    ok.elapsed_s = 12.5;
    j.finished("b", ok);
    const auto open = j.unfinished();
    ASSERT_EQ(open.size(), 2u);
    EXPECT_EQ(open[0].run, "a");
    EXPECT_EQ(open[1].run, "c");
  }
  const RunJournal again(path_);  // a restarted attune
  const auto all = again.entries();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].run, "a");  // launch order
  EXPECT_EQ(all[1].run, "b");
  EXPECT_EQ(all[2].run, "c");
  EXPECT_EQ(all[0].state, "launched");
  EXPECT_EQ(all[0].id, "101");
  EXPECT_EQ(all[1].state, "completed");
  EXPECT_EQ(all[1].status.elapsed_s, 12.5);
  EXPECT_EQ(all[2].state, "launching");
  expect_same(all[2].spec, full_spec("c"));
  EXPECT_EQ(all[2].recipe, "c.sh");
  const auto open = again.unfinished();
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(open[0].run, "a");
  EXPECT_EQ(open[1].run, "c");
}

TEST_F(RunJournalTest, MisuseIsRefused) {
  RunJournal j(path_);
  EXPECT_THROW(j.launched("ghost", {"local", "1"}), std::invalid_argument);
  RunStatus ok;
  ok.state = RunState::Completed;
  EXPECT_THROW(j.finished("ghost", ok), std::invalid_argument);
  j.launching("a", "local", full_spec("a"), "a.sh");
  RunStatus running;
  running.state = RunState::Running;
  EXPECT_THROW(j.finished("a", running), std::invalid_argument);  // not final
  EXPECT_THROW(j.launched("a", {"local", ""}), std::invalid_argument);
  // Still launching (a restart found it never reached the cluster): again is fine.
  RunSpec respec = full_spec("a");
  respec.nodes = 2;
  j.launching("a", "local", respec, "a2.sh");
  EXPECT_EQ(j.find("a")->spec.nodes, 2);
  EXPECT_EQ(j.entries().size(), 1u);
  j.launched("a", {"local", "7"});
  EXPECT_THROW(j.launching("a", "local", respec, "a.sh"), std::invalid_argument);  // names are unique
  EXPECT_EQ(RunJournal(path_).find("a")->state, "launched");
  j.finished("a", ok);
  EXPECT_THROW(j.launched("a", {"local", "8"}), std::invalid_argument);  // finished runs stay finished
  EXPECT_EQ(j.find("a")->state, "completed");
}

TEST_F(RunJournalTest, TornLastLineIsIgnoredAndRepaired) {
  {
    RunJournal j(path_);
    j.launching("a", "local", full_spec("a"), "a.sh");
    j.launched("a", {"local", "101"});
  }
  append_raw(R"({"event":"finished","run":"a","status":{"state":"compl)");  // crash mid-write
  {
    RunJournal j(path_);
    EXPECT_EQ(j.find("a")->state, "launched");
    ASSERT_EQ(j.unfinished().size(), 1u);
    j.launching("b", "local", full_spec("b"), "b.sh");  // cuts the torn tail first
  }
  const auto lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) EXPECT_NO_THROW(nlohmann::json::parse(line)) << line;
  const RunJournal j(path_);
  EXPECT_EQ(j.entries().size(), 2u);

  // A last line that ends but is no record is torn too.
  append_raw("{\"event\":\"launched\",\"run\":\"b\",\"id\":\n");
  const RunJournal k(path_);
  EXPECT_EQ(k.find("b")->state, "launching");
}

TEST_F(RunJournalTest, CorruptMiddleLineIsAnInputErrorNamingFileAndLine) {
  {
    RunJournal j(path_);
    j.launching("a", "local", full_spec("a"), "a.sh");
  }
  append_raw("this is not json\n");
  {
    RunJournal j(path_);  // still the last line: torn, ignored
    EXPECT_EQ(j.entries().size(), 1u);
  }
  append_raw(R"({"event":"launched","run":"a","cluster":"local","id":"5"})" "\n");
  try {
    RunJournal j(path_);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path_);
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find(path_ + ":2:"), std::string::npos) << e.what();
  }
  // A well-formed JSON line that is no record is corrupt too.
  std::filesystem::remove(path_);
  append_raw(R"({"event":"exploded","run":"a"})" "\n" R"({"event":"launched","run":"a","id":"5"})" "\n");
  try {
    RunJournal j(path_);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_NE(std::string(e.what()).find("exploded"), std::string::npos) << e.what();
  }
}

TEST_F(RunJournalTest, TwoJournalsOnOneFileNeverInterleaveLines) {
  constexpr int kRuns = 25;
  std::filesystem::create_directories(dir_ / "campaign");
  RunJournal first(path_), second(path_);
  const auto write = [](RunJournal& j, const std::string& prefix) {
    RunSpec s = full_spec(prefix);
    s.command.assign(40, std::string(100, 'x'));  // long lines: several KiB each
    for (int i = 0; i < kRuns; ++i) {
      const std::string run = prefix + std::to_string(i);
      s.name = run;
      j.launching(run, "local", s, "r.sh");
      j.launched(run, {"local", std::to_string(1000 + i)});
    }
  };
  std::thread a([&] { write(first, "a"); });
  std::thread b([&] { write(second, "b"); });
  a.join();
  b.join();
  const auto lines = lines_of(path_);
  ASSERT_EQ(lines.size(), 4u * kRuns);
  for (const auto& line : lines) ASSERT_NO_THROW(nlohmann::json::parse(line));
  const RunJournal all(path_);
  EXPECT_EQ(all.entries().size(), 2u * kRuns);
  EXPECT_EQ(all.unfinished().size(), 2u * kRuns);
  EXPECT_EQ(all.find("b7")->id, "1007");
  EXPECT_EQ(all.find("a24")->spec.command.size(), 40u);
}

}  // namespace
}  // namespace attune::cluster
