// The attune binary on inputs that are not training logs: refused with exit
// status 2 and a message naming the file, never a hang, never unbounded
// memory; every exit status in --help; one FLOPs convention across log
// formats. Every command runs under `timeout`, so code that hangs fails the
// test instead of hanging it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;  // 124 or 137: killed by the timeout
  std::string out;
  double seconds = 0;
};

// As cli_test.cpp's run(), under a 10 s timeout: `redirect` is the shell's
// redirections of attune's stdin or stdout, `pipe_from` a command piped into it.
RunResult run(const std::string& args, const std::string& redirect = "", const std::string& pipe_from = "") {
  const std::string cmd = (pipe_from.empty() ? "" : pipe_from + " | ") + "timeout -s KILL 10 " +
                          std::string(ATTUNE_BINARY) + " " + args + " 2>&1 " + redirect;
  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string example(const std::string& name) { return std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/" + name; }

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// No byte a terminal would act on, but the newlines.
bool printable(const std::string& s) {
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n' && c != '\t') || b == 0x7F) return false;
  }
  return true;
}

class LogInputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attune_log_input_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(LogInputCli, RandomBytesAreNotALog) {
  std::mt19937 rng(1);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
  const fs::path log = dir_ / "random.bin";
  std::ofstream(log, std::ios::binary) << bytes;
  const auto r = run("diagnose " + log.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "attune: error: " + log.string() + ": not a text log (")) << r.out;
  EXPECT_FALSE(has(r.out, "framework")) << r.out;
}

TEST_F(LogInputCli, TheBinaryItselfIsNotALog) {
  const auto r = run(std::string("diagnose ") + ATTUNE_BINARY);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "not a text log (NUL byte at offset ")) << r.out;
  EXPECT_TRUE(printable(r.out));  // no raw bytes of it printed
}

TEST_F(LogInputCli, DevZeroIsRefusedAtOnce) {
  const auto r = run("diagnose /dev/zero");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "attune: error: /dev/zero: log file is a character device, not a regular file")) << r.out;
  EXPECT_LT(r.seconds, 10);
}

TEST_F(LogInputCli, StdinIsRefusedWhateverItIs) {
  const auto device = run("diagnose /dev/stdin", "< /dev/zero");
  EXPECT_EQ(device.status, 2) << device.out;
  EXPECT_TRUE(has(device.out, "character device")) << device.out;
  const auto pipe = run("diagnose /dev/stdin", "", "cat /dev/zero");  // a stream that never ends
  EXPECT_EQ(pipe.status, 2) << pipe.out;
  EXPECT_TRUE(has(pipe.out, "named pipe (FIFO)")) << pipe.out;
}

TEST_F(LogInputCli, FifoIsRefusedByDiagnoseAndLevers) {
  const fs::path fifo = dir_ / "train.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string command : {"diagnose ", "levers ", "diagnose --profile "}) {
    const auto r = run(command + fifo.string());
    EXPECT_EQ(r.status, 2) << command << r.out;
    EXPECT_TRUE(has(r.out, fifo.string() + ": ")) << command << r.out;
    EXPECT_TRUE(has(r.out, "is a named pipe (FIFO), not a regular file")) << command << r.out;
  }
  const auto recipe = run("diagnose " + example("megatron_llama3_8b.sh") + " --recipe " + fifo.string());
  EXPECT_EQ(recipe.status, 2) << recipe.out;
  EXPECT_TRUE(has(recipe.out, "recipe is a named pipe (FIFO)")) << recipe.out;
  const auto dir = run("diagnose " + dir_.string());
  EXPECT_EQ(dir.status, 2) << dir.out;
  EXPECT_TRUE(has(dir.out, "log file is a directory, not a regular file")) << dir.out;
}

// A sparse file reads as zeros forever; its size is refused before a byte is read.
TEST_F(LogInputCli, OverTheSizeCapIsRefusedBeforeReading) {
  const fs::path log = dir_ / "huge.log";
  std::ofstream(log).close();
  fs::resize_file(log, (std::uintmax_t{16} << 30) + 1);
  const auto r = run("diagnose " + log.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.out, "over the 16.0 GiB attune reads from one log")) << r.out;
  EXPECT_LT(r.seconds, 10);
}

TEST_F(LogInputCli, HelpListsEveryExitStatus) {
  const auto r = run("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* status : {"Exit status: 0 success", "1 a negative answer", "2 bad input", "3 internal error",
                             "130 tune interrupted"}) {
    EXPECT_TRUE(has(r.out, status)) << status << "\n" << r.out;
  }
}

// The same simulated run printed by Megatron-LM and by Megatron-DeepSpeed:
// one Megatron-convention figure; DeepSpeed's own, which counts recompute,
// beside it and named.
TEST_F(LogInputCli, DeepSpeedLogGivesTheMegatronConventionFigure) {
  const std::string recipe = example("llama3-8b.attune.yaml");
  std::vector<nlohmann::json> got;
  for (const std::string format : {"megatron", "deepspeed"}) {
    const fs::path log = dir_ / (format + ".log");
    const auto sim = run("sim run " + recipe + " --steps 30 --log-format " + format, "> " + log.string());
    ASSERT_EQ(sim.status, 0) << sim.out;
    const auto r = run("diagnose " + log.string() + " --recipe " + recipe + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    got.push_back(nlohmann::json::parse(r.out)["throughput"]);
    const auto human = run("diagnose " + log.string() + " --recipe " + recipe);
    EXPECT_TRUE(has(human.out, "FLOPs: Megatron convention")) << human.out;
    if (format == "deepspeed") {
      EXPECT_TRUE(has(human.out, "throughput_calculator")) << human.out;
    }
  }
  const double megatron = got[0]["tflops_per_gpu"].get<double>();
  const double deepspeed = got[1]["tflops_per_gpu"].get<double>();
  EXPECT_NEAR(deepspeed / megatron, 1.0, 0.02) << got[0] << "\n" << got[1];
  EXPECT_EQ(got[0]["flops_convention"], got[1]["flops_convention"]);
  EXPECT_TRUE(got[1]["logged_tflops_per_gpu"].is_number());
  EXPECT_NE(got[1]["logged_flops_convention"], got[1]["flops_convention"]);
}

}  // namespace
