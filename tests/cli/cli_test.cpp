// End-to-end checks of the attune binary: exit codes, JSON shape, and that a
// failed edit writes nothing.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../fixtures/llama3_8b_script.h"

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  std::string out;
};

RunResult run(const std::string& args) {
  std::string cmd = std::string(ATTUNE_BINARY) + " " + args + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string example(const std::string& name) { return std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/" + name; }

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attune_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write_perturbation(const std::string& text) {
    const fs::path p = dir_ / "perturbation.yaml";
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(CliTest, VersionAndHelp) {
  auto v = run("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("attune 0."), std::string::npos);
  auto h = run("levers --help");
  EXPECT_EQ(h.status, 0);
  for (const char* flag : {"--json", "--framework", "--model", "--gpu", "--nodes", "--gpus-per-node", "--all"}) {
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag;
  }
  auto s = run("recipe set --help");
  for (const char* flag : {"--output", "--add", "--json"}) EXPECT_NE(s.out.find(flag), std::string::npos) << flag;
}

TEST_F(CliTest, LeversJsonShape) {
  auto r = run("levers " + example("llama3-8b.attune.yaml") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["framework"], "megatron");
  for (const char* k : {"world", "tp", "pp", "vp", "cp", "ep", "dp", "mbs", "gbs", "grad_accum", "seq_len",
                        "recompute", "precision"}) {
    EXPECT_TRUE(j["plan"].contains(k)) << k;
  }
  EXPECT_EQ(j["plan"]["tp"], 2);
  EXPECT_EQ(j["plan"]["dp"], 4);
  bool found = false;
  for (const auto& l : j["levers"]) {
    if (l["name"] == "tp") {
      found = true;
      EXPECT_EQ(l["key"], "--tensor-model-parallel-size");
      EXPECT_EQ(l["value"], 2);
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(CliTest, EveryExampleLoads) {
  for (const char* f : {"megatron_llama3_8b.sh", "automodel_llama3_8b_pretrain.yaml", "torchtitan_llama3_8b.toml",
                        "hyperpod_hf_llama3_8b.yaml", "axolotl_llama3_8b_fsdp.yaml", "bridge_llama3_8b_pretrain.yaml"}) {
    auto r = run("levers " + example(f) + " --json");
    EXPECT_EQ(r.status, 0) << f << "\n" << r.out;
  }
}

TEST_F(CliTest, SetWritesSameFormatAndDiffShowsIt) {
  fs::path out = dir_ / "tuned.sh";
  auto r = run("recipe set " + example("megatron_llama3_8b.sh") + " tp=1 -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--tensor-model-parallel-size: 2 -> 1"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(out));
  auto d = run("recipe diff " + example("megatron_llama3_8b.sh") + " " + out.string() + " --json");
  ASSERT_EQ(d.status, 0) << d.out;
  auto j = nlohmann::json::parse(d.out);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["key"], "--tensor-model-parallel-size");
  EXPECT_EQ(j["changes"][0]["new"], 1);
}

TEST_F(CliTest, BadInputExitsTwoAndWritesNothing) {
  fs::path out = dir_ / "never.sh";
  struct Case {
    std::string args;
    std::string expect;
  } cases[] = {
      {"recipe set " + example("megatron_llama3_8b.sh") + " tp=3 -o " + out.string(), "heads"},
      {"recipe set " + example("megatron_llama3_8b.sh") + " nosuchlever=3 -o " + out.string(), "unknown lever"},
      {"recipe set " + example("megatron_llama3_8b.sh") + " tp=abc -o " + out.string(), "expected an integer"},
      {"recipe set " + example("megatron_llama3_8b.sh") + " tp -o " + out.string(), "LEVER=VALUE"},
      {"levers " + (dir_ / "missing.yaml").string(), "cannot read"},
      {"levers " + example("megatron_llama3_8b.sh") + " --framework caffe", "unknown framework"},
      {"levers " + example("megatron_llama3_8b.sh") + " --gpu a100", "h100"},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

TEST_F(CliTest, MalformedFileNamesLineAndColumn) {
  fs::path bad = dir_ / "bad.yaml";
  std::ofstream(bad) << "train:\n  micro_batch_size: [1, 2\n";
  auto r = run("levers " + bad.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(bad.string() + ":"), std::string::npos) << r.out;
}

TEST_F(CliTest, InPlaceEditKeepsOtherBytes) {
  fs::path copy = dir_ / "t.toml";
  fs::copy_file(example("torchtitan_llama3_8b.toml"), copy);
  auto r = run("recipe set " + copy.string() + " mbs=1 -o " + copy.string() + " --nodes 1");
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(copy);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("local_batch_size = 1"), std::string::npos);
  EXPECT_NE(text.find("global_batch_size = 16"), std::string::npos) << text;
  EXPECT_NE(text.find("# torchtitan: Llama 3 8B on 8 GPUs (attune example)."), std::string::npos);
}

}  // namespace

namespace {

TEST_F(CliTest, CheckExitCodesAndJson) {
  std::string base = example("megatron_llama3_8b.sh");
  fs::path tuned = dir_ / "tuned.sh";
  ASSERT_EQ(run("recipe set " + base + " tp=1 -o " + tuned.string()).status, 0);
  auto ok = run("check " + base + " " + tuned.string() + " --json");
  ASSERT_EQ(ok.status, 0) << ok.out;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["verdict"], "allow");
  EXPECT_EQ(j["changes"][0]["lever"], "tp");
  EXPECT_EQ(j["invariants"]["gbs"][0], j["invariants"]["gbs"][1]);

  auto refused = run("check " + base + " --edit --lr=1e-3");
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("REFUSED"), std::string::npos);
  EXPECT_NE(refused.out.find("megatron.learning_rate"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("invariants"), std::string::npos);

  auto fp8 = run("check " + base + " --edit --fp8-format=hybrid --json");
  EXPECT_EQ(fp8.status, 1);
  EXPECT_EQ(run("check " + base + " --edit --fp8-format=hybrid --allow fp8").status, 0);

  auto unknown = run("check " + base + " --edit --made-up-knob=3 --json");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_EQ(nlohmann::json::parse(unknown.out)["reasons"][0]["rule"], "unknown-key");
  auto parity = run("check " + base + " --edit --made-up-knob=3 --unknown-keys parity --json");
  EXPECT_EQ(parity.status, 0) << parity.out;
  EXPECT_EQ(nlohmann::json::parse(parity.out)["requires_parity"], true);
  EXPECT_EQ(run("check " + base + " --edit --made-up-knob=3 --allow-key --made-up-knob").status, 0);
}

TEST_F(CliTest, CheckBadInputExitsTwo) {
  std::string base = example("megatron_llama3_8b.sh");
  EXPECT_EQ(run("check " + base).status, 2);                                        // no candidate
  EXPECT_EQ(run("check " + base + " --edit --lr=1 --allow nosuchname").status, 2);   // unknown opt-in
  EXPECT_EQ(run("check " + base + " " + example("torchtitan_llama3_8b.toml")).status, 2);
  fs::path site = dir_ / "site.yaml";
  std::ofstream(site) << "framework: megatron\nrules:\n  - id: megatron.learning_rate\n    category: x\n"
                         "    action: refuse\n    keys: [--x]\n    reason: r\n";
  auto redefine = run("check " + base + " " + base + " --gate-rules " + site.string());
  EXPECT_EQ(redefine.status, 2);
  EXPECT_NE(redefine.out.find("cannot redefine"), std::string::npos) << redefine.out;
}

}  // namespace

namespace {

std::string iteration_line(int it, double ms, double loss) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " [2026-11-30 10:00:00.000000] iteration %8d/%8d | consumed samples: %12d | elapsed time per "
                "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 3.000000E-04 | "
                "global batch size:   128 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.234 | number of skipped "
                "iterations:   0 | number of nan iterations:   0 |",
                it, 50, it * 128, ms, 400.0 * 2000.0 / ms, loss);
  return buf;
}

// A Megatron-LM log as the last rank prints it under torchrun: rank prefixes,
// the first iteration's line, a checkpoint save that slows its interval.
std::string megatron_log() {
  std::string out = "[rank0]: using world size: 8\n";
  for (int it = 1; it <= 50; ++it) {
    if (it != 1 && it % 5 != 0) continue;
    double ms = it == 1 ? 9000.0 : (it == 30 ? 4100.0 : 2000.0);
    if (it == 30) out += "[rank0]: saving checkpoint at iteration      28 to /ckpt\n";
    out += "[rank7]: " + iteration_line(it, ms, 3.0 - it * 0.01) + "\n";
  }
  return out;
}

TEST_F(CliTest, DiagnoseMegatronLog) {
  fs::path log = dir_ / "train.log";
  std::ofstream(log) << megatron_log();
  auto r = run("diagnose " + log.string() + " --json --world 8 --seq-len 8192 --gpu h100 --model llama3-8b");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["framework"], "megatron");
  EXPECT_EQ(j["steps"], 11);
  // 128 samples * 8192 tokens / (2.0 s * 8 GPUs) = 65536 tokens/s/GPU
  EXPECT_NEAR(j["throughput"]["step_time_s"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["throughput"]["tokens_per_s_per_gpu"].get<double>(), 65536.0, 1e-6);
  EXPECT_NEAR(j["throughput"]["tflops_per_gpu"].get<double>(), 400.0, 1e-6);  // as the log prints it
  EXPECT_NEAR(j["throughput"]["mfu"].get<double>(), 400.0 / 989.0, 1e-6);
  EXPECT_TRUE(j["failure"].is_null());
  EXPECT_EQ(j["loss"].size(), 11u);
  auto human = run("diagnose " + log.string());
  EXPECT_EQ(human.status, 0);
  EXPECT_NE(human.out.find("megatron"), std::string::npos);
}

TEST_F(CliTest, DiagnoseFailureAndBadInput) {
  fs::path log = dir_ / "oom.log";
  std::ofstream(log) << "[rank3]: Traceback (most recent call last):\n"
                        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
                        "total capacity of 79.11 GiB of which 1.20 GiB is free.\n";
  auto r = run("diagnose " + log.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["failure"]["kind"], "oom");
  EXPECT_EQ(j["failure"]["line"], 2);
  EXPECT_EQ(j["steps"], 0);
  fs::path binary = dir_ / "binary.log";  // a failure line that is not valid UTF-8
  std::ofstream(binary) << "[rank0]: torch.OutOfMemoryError: CUDA out of memory. \xff\xfe garbage\n";
  auto bad_bytes = run("diagnose " + binary.string() + " --json");
  ASSERT_EQ(bad_bytes.status, 0) << bad_bytes.out;
  EXPECT_EQ(nlohmann::json::parse(bad_bytes.out)["failure"]["kind"], "oom");
  EXPECT_EQ(run("diagnose " + (dir_ / "missing.log").string()).status, 2);
  fs::path empty = dir_ / "empty.log";
  std::ofstream(empty) << "";
  EXPECT_EQ(run("diagnose " + empty.string()).status, 2);
}

TEST_F(CliTest, DiagnoseWithProfile) {
  fs::path log = dir_ / "train.log";
  std::ofstream(log) << megatron_log();
  // One GPU: a GEMM 0-300 us, an NCCL all-reduce 200-400 us on another stream.
  fs::path trace = dir_ / "trace.json";
  std::ofstream(trace) << R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": 1000, "dur": 300},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 20,
     "ts": 1200, "dur": 200}
  ]})";
  auto r = run("diagnose " + log.string() + " --profile " + trace.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["framework"], "megatron");
  ASSERT_TRUE(j["profile"].is_object()) << r.out;
  EXPECT_NEAR(j["profile"]["compute_s"].get<double>(), 300e-6, 1e-12);
  EXPECT_NEAR(j["profile"]["communication_s"].get<double>(), 200e-6, 1e-12);
  EXPECT_NEAR(j["profile"]["exposed_communication_s"].get<double>(), 100e-6, 1e-12);
  auto alone = run("diagnose --profile " + trace.string());
  EXPECT_EQ(alone.status, 0) << alone.out;
  EXPECT_NE(alone.out.find("exposed communication"), std::string::npos) << alone.out;
  EXPECT_EQ(run("diagnose").status, 2);                                     // neither a log nor a profile
  EXPECT_EQ(run("diagnose --profile " + log.string()).status, 2);          // a log is not a profile
}

TEST_F(CliTest, SimPredictRunAndCalibrate) {
  auto p = run("sim predict " + example("megatron_llama3_8b.sh") + " --gpu h100 --json");
  ASSERT_EQ(p.status, 0) << p.out;
  auto j = nlohmann::json::parse(p.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_GT(j["tokens_per_s_per_gpu"].get<double>(), 1000);
  EXPECT_GT(j["breakdown"]["compute_s"].get<double>(), 0);
  EXPECT_EQ(run("sim predict " + example("megatron_llama3_8b.sh")).status, 2);  // no GPU type: say so

  auto r = run("sim run " + example("megatron_llama3_8b.sh") + " --gpu h100 --steps 5 --seed 3");
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("elapsed time per iteration (ms)"), std::string::npos);

  fs::path csv = dir_ / "measured.csv";
  std::ofstream(csv) << "source,model,gpu,num_gpus,tp,pp,vp,cp,ep,dp,mbs,gbs,seq_len,precision,recompute,"
                        "tokens_per_s_per_gpu,tflops_per_gpu,mfu,notes\n"
                        "test,Llama3-8B,H100,8,1,1,,1,,8,1,128,8192,BF16,full,9000,,,\n"
                        "test,Llama3-70B,H100,64,4,4,,1,,4,1,128,8192,BF16,full,1400,,,\n"
                        "test,Unknown-3B,H100,8,1,1,,1,,8,1,128,8192,BF16,none,9000,,,\n";
  auto c = run("sim calibrate --csv " + csv.string() + " --json");
  ASSERT_EQ(c.status, 0) << c.out;
  auto cj = nlohmann::json::parse(c.out);
  EXPECT_EQ(cj["rows"], 3);
  EXPECT_EQ(cj["supported"], 2);
  EXPECT_EQ(cj["excluded"], 1);
  EXPECT_GT(cj["median_abs_error"].get<double>(), 0);
}

std::string scenario(const std::string& name) {
  return std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/" + name + "/scenario.yaml";
}

TEST_F(CliTest, SimOptimumOnAScenario) {
  auto o = run("sim optimum " + scenario("llama3-8b-h100-script-on-b200") + " --json");
  ASSERT_EQ(o.status, 0) << o.out;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_GT(j["settings_searched"].get<double>(), 0);
  EXPECT_GE(j["optimum"]["tokens_per_s_per_gpu"].get<double>(), j["baseline"]["tokens_per_s_per_gpu"].get<double>());
  EXPECT_TRUE(j["optimum"]["edits"].is_array());
  EXPECT_TRUE(j["optimum"]["prediction"]["ok"].get<bool>());
  EXPECT_TRUE(j["greedy"].is_object());

  // The hidden truth applies only when asked for: plain `sim predict` is the
  // nominal model, --truth the scenario's truth.yaml, --truth-file any other.
  const std::string s = scenario("llama3-8b-h100-script-on-b200");
  auto nominal = run("sim predict " + s + " --json");
  auto truth = run("sim predict " + s + " --truth --json");
  auto same = run("sim predict " + s + " --truth-file " + write_perturbation("# nominal\n") + " --json");
  ASSERT_EQ(nominal.status, 0) << nominal.out;
  ASSERT_EQ(truth.status, 0) << truth.out;
  ASSERT_EQ(same.status, 0) << same.out;
  const auto tps = [](const RunResult& r) { return nlohmann::json::parse(r.out)["tokens_per_s_per_gpu"].get<double>(); };
  EXPECT_NE(tps(nominal), tps(truth));
  EXPECT_DOUBLE_EQ(tps(nominal), tps(same));

  auto e = run("sim predict " + s + " --truth-file " + write_perturbation("gemm: 0.9\nnetwrok: 0.5\n"));
  EXPECT_EQ(e.status, 2);
  EXPECT_NE(e.out.find("perturbation.yaml:2"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("netwrok"), std::string::npos) << e.out;
  // --truth needs a scenario.
  EXPECT_EQ(run("sim predict " + example("megatron_llama3_8b.sh") + " --gpu h100 --truth").status, 2);
}

TEST_F(CliTest, SimScenariosMeasuresOneScenarioAndRecordsIt) {
  const fs::path copy = dir_ / "llama3-8b-h100-script-on-b200";
  fs::copy(fs::path(ATTUNE_SOURCE_DIR) / "recipes/scenarios/llama3-8b-h100-script-on-b200", copy);
  auto j = run("sim scenarios " + copy.string() + " --json");
  // One scenario cannot meet the set's targets: exit 1, figures still printed.
  EXPECT_EQ(j.status, 1) << j.out;
  const auto report = nlohmann::json::parse(j.out);
  ASSERT_EQ(report["scenarios"].size(), 1u);
  EXPECT_FALSE(report["targets"]["met"].get<bool>());
  const double baseline = report["scenarios"][0]["baseline_tokens_per_s_per_gpu"].get<double>();
  EXPECT_GT(baseline, 0);
  // --record rewrites the harness's figures, keeping the rest.
  std::ofstream(copy / "harness.yaml") << "what_is_off: kept\nbudget_gpu_hours: 250\nbaseline_tokens_per_s_per_gpu: 1\n";
  EXPECT_EQ(run("sim scenarios " + copy.string() + " --record").status, 1);
  std::ifstream in(copy / "harness.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("what_is_off: kept"), std::string::npos) << text;
  EXPECT_NE(text.find("budget_gpu_hours: 250"), std::string::npos) << text;
  const std::string recorded = "baseline_tokens_per_s_per_gpu: " + std::to_string(std::llround(baseline)) + "\n";
  EXPECT_NE(text.find(recorded), std::string::npos) << text;
  EXPECT_EQ(text.find("baseline_tokens_per_s_per_gpu: 1\n"), std::string::npos) << text;
}

// A cluster launch passes its 64-bit launch seed: every value of it is a seed.
TEST_F(CliTest, SimJobTakesEverySixtyFourBitSeed) {
  auto j = run("sim job " + example("megatron_llama3_8b.sh") + " --gpu h100 --steps 2 --time-scale 1000 --seed 16680400028206955467");
  EXPECT_EQ(j.status, 0) << j.out;
  auto bad = run("sim job " + example("megatron_llama3_8b.sh") + " --gpu h100 --seed -1");
  EXPECT_EQ(bad.status, 2) << bad.out;
}

TEST_F(CliTest, SimJobTakesTheScaledDurationAndFailsLikeTheRun) {
  const auto start = std::chrono::steady_clock::now();
  fs::path log = dir_ / "job.log";
  auto j = run("sim job " + example("megatron_llama3_8b.sh") + " --gpu h100 --steps 3 --time-scale 1000 --log " +
               log.string());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(j.status, 0) << j.out;
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("iteration        3/       3"), std::string::npos) << text;
  // 60 s of start-up and a slow first step, at 1000x: at least 0.06 s, well under the unscaled minutes.
  EXPECT_GT(took, 0.06);
  EXPECT_LT(took, 30);

  // A run that would OOM prints the OOM and exits 1.
  auto oom = run("sim job " + example("megatron_llama3_8b.sh") +
                 " --gpu h100 --steps 3 --time-scale 1000 --truth-file " + write_perturbation("memory: 10\n"));
  EXPECT_EQ(oom.status, 1);
  EXPECT_NE(oom.out.find("CUDA out of memory"), std::string::npos) << oom.out;
}

}  // namespace

// ---------------------------------------------------------------- attune run / attune cluster

namespace {

struct SplitResult {
  int status = -1;
  std::string out;  // stdout alone (the JSON)
  std::string err;  // stderr
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<nlohmann::json> journal_of(const fs::path& run_dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(run_dir / "journal.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

long count_events(const std::vector<nlohmann::json>& journal, const std::string& event) {
  long n = 0;
  for (const auto& r : journal) n += r.value("event", "") == event ? 1 : 0;
  return n;
}

// Five Megatron-LM iterations as `attune sim run ... --gpu h100 --steps 5` prints them.
const char* kFiveIterations[] = {
    "[rank7]:  [2026-11-30 10:11:59.618671] iteration        1/       5 | consumed samples:          256 | elapsed "
    "time per iteration (ms): 659618.7 | throughput per GPU (TFLOP/s/GPU): 20.5 | learning rate: 3.000000E-05 | "
    "global batch size:   256 | lm loss: 1.095958E+01 | loss scale: 1.0 | grad norm: 1.196 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
    "[rank7]:  [2026-11-30 10:12:35.819634] iteration        2/       5 | consumed samples:          512 | elapsed "
    "time per iteration (ms): 36201.0 | throughput per GPU (TFLOP/s/GPU): 372.7 | learning rate: 6.000000E-05 | "
    "global batch size:   256 | lm loss: 1.088197E+01 | loss scale: 1.0 | grad norm: 1.192 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
    "[rank7]:  [2026-11-30 10:13:09.514293] iteration        3/       5 | consumed samples:          768 | elapsed "
    "time per iteration (ms): 33694.7 | throughput per GPU (TFLOP/s/GPU): 400.4 | learning rate: 9.000000E-05 | "
    "global batch size:   256 | lm loss: 1.081531E+01 | loss scale: 1.0 | grad norm: 1.188 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
    "[rank7]:  [2026-11-30 10:13:42.586886] iteration        4/       5 | consumed samples:         1024 | elapsed "
    "time per iteration (ms): 33072.6 | throughput per GPU (TFLOP/s/GPU): 408.0 | learning rate: 1.200000E-04 | "
    "global batch size:   256 | lm loss: 1.074793E+01 | loss scale: 1.0 | grad norm: 1.185 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
    "[rank7]:  [2026-11-30 10:14:15.296388] iteration        5/       5 | consumed samples:         1280 | elapsed "
    "time per iteration (ms): 32709.5 | throughput per GPU (TFLOP/s/GPU): 412.5 | learning rate: 1.500000E-04 | "
    "global batch size:   256 | lm loss: 1.071408E+01 | loss scale: 1.0 | grad norm: 1.181 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
};

// A Llama 3 8B Megatron-LM script on one H100 node (TP 2, global batch 256).
const std::string kLocalScript = attune::test::llama3_8b_script(8, 2, 256);

class CliRunTest : public CliTest {
 protected:
  // The binary with stdout and stderr apart, and a config directory of its
  // own (no user's clusters.yaml).
  SplitResult attune(const std::string& args) {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = "env XDG_CONFIG_HOME=" + (dir_ / "config").string() + " " + ATTUNE_BINARY + " " + args +
                            " 2>" + err.string();
    SplitResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = slurp(err);
    return r;
  }
  nlohmann::json json_of(const SplitResult& r) {
    try {
      return nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << "not JSON: " << e.what() << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err;
      return nullptr;
    }
  }
  // A wrapper around kLocalScript whose launch.command is `/bin/sh -c SCRIPT`
  // (SCRIPT as a YAML block: one line per shell line).
  // The wrapper's measure.steps is what a run measures (0: not stated).
  std::string local_wrapper(const std::vector<std::string>& script_lines, int measure_steps = 0) {
    std::ofstream(dir_ / "train.sh") << kLocalScript;
    std::string y =
        "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\nhardware: {gpu: h100, nodes: 1, gpus_per_node: 8}\n";
    if (measure_steps > 0) y += "measure: {steps: " + std::to_string(measure_steps) + "}\n";
    y += "launch:\n  command:\n    - /bin/sh\n    - -c\n    - |\n";
    for (const auto& l : script_lines) y += "      " + l + "\n";
    const fs::path w = dir_ / "local.attune.yaml";
    std::ofstream(w) << y;
    return w.string();
  }
  // Starts the binary in the background (stdout and stderr to `out`); its pid.
  pid_t start(const std::vector<std::string>& args, const fs::path& out) {
    std::vector<std::string> argv = {ATTUNE_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    const std::string config = (dir_ / "config").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("XDG_CONFIG_HOME", config.c_str(), 1);
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(ATTUNE_BINARY, c.data());
      ::_exit(127);
    }
    return pid;
  }
  // Waits (bounded) for the journal's `launched` record; the run's id ("" if none came).
  std::string wait_launched(const fs::path& run_dir, double seconds = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        for (const auto& r : journal_of(run_dir))
          if (r.value("event", "") == "launched") return r.value("id", "");
      } catch (const nlohmann::json::exception&) {  // a line being written
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }
  static bool wait_for_file(const fs::path& p, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!fs::exists(p)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }
  static int exit_status_of(pid_t pid) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
};

TEST_F(CliRunTest, RunOnSimCompletesJournalsAndDiagnoses) {
  const fs::path d = dir_ / "run";
  const std::string args = "run " + example("llama3-8b.attune.yaml") + " --cluster sim --run-dir " + d.string() + " --json";
  auto r = attune(args);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = json_of(r);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["cluster"], "sim");
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["reattached"], false);
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_EQ(j["gpus_per_node"], 8);
  EXPECT_DOUBLE_EQ(j["time_limit_s"].get<double>(), 3600);  // the wrapper's launch.slurm.time_limit: 60m
  EXPECT_EQ(j["run_dir"], d.string());
  EXPECT_EQ(j["log"], (d / "run.log").string());
  ASSERT_TRUE(j["diagnosis"].is_object()) << r.out;
  EXPECT_EQ(j["diagnosis"]["steps"], 60);  // the wrapper's measure.steps
  EXPECT_TRUE(j["diagnosis"]["failure"].is_null());
  const double elapsed = j["elapsed_s"].get<double>();
  EXPECT_GT(elapsed, 60);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 8 * elapsed / 3600, 1e-9);
  for (const char* f : {"journal.jsonl", "run.log", "megatron_llama3_8b.sh", "megatron_llama3_8b.attune.yaml"}) {
    EXPECT_TRUE(fs::exists(d / f)) << f;
  }
  EXPECT_EQ(slurp(d / "megatron_llama3_8b.sh"), slurp(example("megatron_llama3_8b.sh")));  // no edit
  EXPECT_NE(slurp(d / "run.log").find("iteration       60/      60"), std::string::npos);
  EXPECT_NE(r.err.find("launched"), std::string::npos) << r.err;

  // Journalled: `launching` with the unique name and the whole spec, then `launched` with the id.
  const auto journal = journal_of(d);
  ASSERT_GE(journal.size(), 2u);
  EXPECT_EQ(journal[0]["event"], "launching");
  EXPECT_EQ(journal[0]["run"], j["run"]);
  EXPECT_EQ(journal[0]["cluster"], "sim");
  EXPECT_EQ(journal[0]["spec"]["steps"], 60);
  EXPECT_EQ(journal[0]["spec"]["log_path"], (d / "run.log").string());
  EXPECT_EQ(journal[1]["event"], "launched");
  EXPECT_EQ(journal[1]["id"], j["id"]);

  // The same command again: the journal says it ended; nothing is launched.
  auto again = attune(args);
  EXPECT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("already ended"), std::string::npos) << again.err;
  const auto j2 = json_of(again);
  EXPECT_EQ(j2["state"], "completed");
  EXPECT_EQ(j2["reattached"], true);
  EXPECT_EQ(j2["run"], j["run"]);
  EXPECT_DOUBLE_EQ(j2["elapsed_s"].get<double>(), elapsed);
  EXPECT_EQ(count_events(journal_of(d), "launching"), 1);
  EXPECT_EQ(count_events(journal_of(d), "launched"), 1);
}

TEST_F(CliRunTest, RunBudgetCutsTheTimeLimitAndTimesOut) {
  const fs::path d = dir_ / "run";
  auto r = attune("run " + example("llama3-8b.attune.yaml") + " --cluster sim --run-dir " + d.string() +
                  " --budget-gpu-hours 1 --json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const auto j = json_of(r);
  EXPECT_EQ(j["state"], "timeout");
  EXPECT_DOUBLE_EQ(j["time_limit_s"].get<double>(), 450);  // 1 GPU-hour on 8 GPUs
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 1.0, 1e-9);
  EXPECT_NE(r.err.find("time limit 7m30s"), std::string::npos) << r.err;
}

// What a run measures is the wrapper's, which the gate approved: no flag
// changes it.
TEST_F(CliRunTest, RunMeasuresTheWrappersStepsAndTakesNoStepsFlag) {
  auto r = attune("run " + example("llama3-8b.attune.yaml") + " --cluster sim --run-dir " + (dir_ / "run").string() +
                  " --steps 7 --json");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--steps"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST_F(CliRunTest, RunDirOfAnotherClustersRunIsRefused) {
  const fs::path d = dir_ / "run";
  auto first = attune("run " + example("llama3-8b.attune.yaml") + " --cluster sim --run-dir " + d.string());
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  auto other = attune("run " + example("llama3-8b.attune.yaml") + " --cluster local --run-dir " + d.string());
  EXPECT_EQ(other.status, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("--run-dir"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("'sim'"), std::string::npos) << other.err;
  EXPECT_EQ(count_events(journal_of(d), "launching"), 1);
}

TEST_F(CliRunTest, RunUnknownClusterExitsTwoNamingTheKnown) {
  const fs::path d = dir_ / "run";
  auto r = attune("run " + example("llama3-8b.attune.yaml") + " --cluster nosuch --run-dir " + d.string());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sim, local, mock"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d));  // nothing written
}

TEST_F(CliRunTest, RunBadClustersFileNamesFileLineAndKey) {
  const fs::path clusters = dir_ / "clusters.yaml";
  std::ofstream(clusters) << "clusters:\n  p5:\n    backend: slrum\n";
  const fs::path d = dir_ / "run";
  auto r = attune("run " + example("llama3-8b.attune.yaml") + " --clusters " + clusters.string() +
                  " --cluster p5 --run-dir " + d.string());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(clusters.string() + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("clusters.p5.backend"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("slrum"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d));
  auto list = attune("cluster list --clusters " + clusters.string());
  EXPECT_EQ(list.status, 2) << list.out << list.err;
  EXPECT_NE(list.err.find("clusters.p5.backend"), std::string::npos) << list.err;
}

TEST_F(CliRunTest, RunOnLocalIsDiagnosedFromTheCommandsLog) {
  std::vector<std::string> script;
  for (const char* line : kFiveIterations) script.push_back(std::string("echo '") + line + "'");
  // docs/clusters.md: torchrun's single-node settings and ATTUNE_RUN reach the
  // child, and stderr goes to run.log too.
  script.push_back("echo \"env: $PET_NNODES $PET_NPROC_PER_NODE $ATTUNE_RUN\" >&2");
  const std::string wrapper = local_wrapper(script);
  const fs::path d = dir_ / "run";
  auto r = attune("run " + wrapper + " --cluster local --run-dir " + d.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = json_of(r);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["backend"], "local");
  ASSERT_TRUE(j["diagnosis"].is_object()) << r.out;
  EXPECT_EQ(j["diagnosis"]["framework"], "megatron");
  EXPECT_EQ(j["diagnosis"]["steps"], 5);
  EXPECT_TRUE(j["diagnosis"]["failure"].is_null());
  EXPECT_DOUBLE_EQ(j["time_limit_s"].get<double>(), 7200);  // none stated: 2 h
  const std::string log = slurp(d / "run.log");
  EXPECT_NE(log.find("iteration        5/       5"), std::string::npos) << log;
  EXPECT_NE(log.find("env: 1 8 " + j["run"].get<std::string>()), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(d / "train.sh"));
  EXPECT_TRUE(fs::exists(d / "train.attune.yaml"));
}

// A real run is a measurement: once its log shows the steps to measure it is
// stopped and counts as completed; --to-end lets it finish by itself.
TEST_F(CliRunTest, RunOnLocalStopsAfterTheStepsToMeasure) {
  std::vector<std::string> script;
  for (const char* line : kFiveIterations) script.push_back(std::string("echo '") + line + "'; sleep 0.1");
  script.push_back("sleep 30");
  const std::string wrapper = local_wrapper(script, 2);
  const auto started = std::chrono::steady_clock::now();
  auto r = attune("run " + wrapper + " --cluster local --run-dir " + (dir_ / "m").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 20);
  const auto j = json_of(r);
  EXPECT_EQ(j["state"], "completed");
  EXPECT_EQ(j["reason"].get<std::string>().rfind("stopped after ", 0), 0u) << j["reason"];
  EXPECT_GE(j["diagnosis"]["steps"].get<int>(), 2);  // polls come every 0.5 s or more: a few more may be in

  std::vector<std::string> whole;
  for (const char* line : kFiveIterations) whole.push_back(std::string("echo '") + line + "'");
  whole.push_back("exit 0");
  auto e = attune("run " + local_wrapper(whole, 2) + " --cluster local --to-end --run-dir " + (dir_ / "e").string() +
                  " --json");
  ASSERT_EQ(e.status, 0) << e.out << e.err;
  EXPECT_EQ(json_of(e)["reason"], "exit status 0");
  EXPECT_EQ(json_of(e)["diagnosis"]["steps"], 5);

  // Exit status 0 before the first step measured nothing: the run failed.
  auto none = attune("run " + local_wrapper({"echo 'starting'", "exit 0"}, 2) + " --cluster local --to-end --run-dir " +
                     (dir_ / "none").string() + " --json");
  EXPECT_EQ(none.status, 1) << none.out << none.err;
  EXPECT_EQ(json_of(none)["state"], "failed");
  EXPECT_EQ(json_of(none)["reason"], "exited before its first step (exit status 0, no step in its log)");
}

TEST_F(CliRunTest, RunOnLocalFailingCommandFails) {
  const std::string wrapper = local_wrapper({"echo 'starting'", "exit 3"});
  auto r = attune("run " + wrapper + " --cluster local --run-dir " + (dir_ / "run").string() + " --json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const auto j = json_of(r);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_NE(j["reason"].get<std::string>().find("3"), std::string::npos) << j["reason"];
}

// A used run directory takes only the request its run was launched for: any
// other is refused, not handed the old run's result; the same recipe bytes
// and spec, from wherever, are the same request.
TEST_F(CliRunTest, RunDirOfAnotherRequestIsRefused) {
  const fs::path d = dir_ / "run";
  const std::string same = "run " + example("llama3-8b.attune.yaml") + " --cluster sim --run-dir " + d.string();
  auto first = attune(same + " --json");
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  const std::string name = json_of(first)["run"];
  const std::string launched_script = slurp(d / "megatron_llama3_8b.sh");
  const auto refused = [&](const std::string& args, const std::string& differs) {
    auto r = attune(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    for (const std::string& part : {"holds run " + name, std::string("llama3-8b.attune.yaml"),
                                    std::string("other settings"), differs, std::string("--run-dir")})
      EXPECT_NE(r.err.find(part), std::string::npos) << args << ": no '" << part << "' in\n" << r.err;
    EXPECT_EQ(r.err.find("already ended"), std::string::npos) << r.err;
  };
  refused(same + " --gpu h200", "gpu");                        // other hardware
  refused(same + " --budget-gpu-hours 1", "time_limit_s");     // another time limit
  // Another recipe: the same wrapper beside an edited script.
  fs::create_directories(dir_ / "edited");
  std::ofstream(dir_ / "edited" / "llama3-8b.attune.yaml") << slurp(example("llama3-8b.attune.yaml"));
  std::ofstream(dir_ / "edited" / "megatron_llama3_8b.sh") << slurp(example("megatron_llama3_8b.sh")) << "# edited\n";
  refused("run " + (dir_ / "edited" / "llama3-8b.attune.yaml").string() + " --cluster sim --run-dir " + d.string(),
          "the recipe file megatron_llama3_8b.sh");
  // Other steps to measure: another wrapper.
  std::string wrapper = slurp(example("llama3-8b.attune.yaml"));
  wrapper.replace(wrapper.find("steps: 60"), 9, "steps: 30");
  fs::create_directories(dir_ / "steps");
  std::ofstream(dir_ / "steps" / "llama3-8b.attune.yaml") << wrapper;
  std::ofstream(dir_ / "steps" / "megatron_llama3_8b.sh") << slurp(example("megatron_llama3_8b.sh"));
  refused("run " + (dir_ / "steps" / "llama3-8b.attune.yaml").string() + " --cluster sim --run-dir " + d.string(),
          "steps");

  // The same bytes from another path are the same request: the old result.
  fs::create_directories(dir_ / "copy");
  for (const char* f : {"llama3-8b.attune.yaml", "megatron_llama3_8b.sh"})
    std::ofstream(dir_ / "copy" / f) << slurp(example(f));
  auto copy = attune("run " + (dir_ / "copy" / "llama3-8b.attune.yaml").string() + " --cluster sim --run-dir " +
                     d.string() + " --json");
  EXPECT_EQ(copy.status, 0) << copy.out << copy.err;
  EXPECT_NE(copy.err.find("already ended"), std::string::npos) << copy.err;
  EXPECT_EQ(json_of(copy)["run"], name);
  // Nothing was launched, and the run's files are as it launched them.
  EXPECT_EQ(count_events(journal_of(d), "launching"), 1);
  EXPECT_EQ(slurp(d / "megatron_llama3_8b.sh"), launched_script);
}

// The run directory is locked for the whole run: a second attune there is
// refused, naming the first's pid, and launches nothing.
TEST_F(CliRunTest, ASecondAttuneInARunDirectoryIsRefusedNamingTheFirst) {
  std::vector<std::string> script;
  for (const char* line : kFiveIterations) script.push_back(std::string("echo '") + line + "'");
  script.push_back("sleep 30");
  const std::string wrapper = local_wrapper(script, 100);
  const fs::path d = dir_ / "run";
  const pid_t first = start({"run", wrapper, "--cluster", "local", "--run-dir", d.string(), "--json"}, dir_ / "first.out");
  ASSERT_FALSE(wait_launched(d).empty()) << slurp(dir_ / "first.out");
  auto second = attune("run " + wrapper + " --cluster local --run-dir " + d.string());
  EXPECT_EQ(second.status, 2) << second.out << second.err;
  EXPECT_NE(second.err.find("another attune (pid " + std::to_string(first) + ")"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("--run-dir"), std::string::npos) << second.err;
  ::kill(first, SIGINT);  // Ctrl-C: cancels the run
  EXPECT_EQ(exit_status_of(first), 1) << slurp(dir_ / "first.out");
  const auto journal = journal_of(d);
  EXPECT_EQ(count_events(journal, "launching"), 1);
  ASSERT_FALSE(journal.empty());
  EXPECT_EQ(journal.back()["status"]["state"], "cancelled");
  // Once the first is gone the directory is free: the same request reports its run.
  auto after = attune("run " + wrapper + " --cluster local --run-dir " + d.string());
  EXPECT_EQ(after.status, 1) << after.out << after.err;
  EXPECT_NE(after.err.find("already ended"), std::string::npos) << after.err;
}

// Ctrl-C in a campaign: the run in flight is cancelled (its process group
// ends), the summary is written with what was spent, and tune exits 130;
// --resume then carries the campaign on.
TEST_F(CliRunTest, CtrlCInATuneCancelsTheRunWritesTheSummaryAndExits130) {
  std::vector<std::string> script;
  for (const char* line : kFiveIterations) script.push_back(std::string("echo '") + line + "'");
  script.push_back("sleep 60");
  const std::string wrapper = local_wrapper(script, 100);
  const fs::path d = dir_ / "campaign";
  const pid_t tune = start({"tune", wrapper, "--cluster", "local", "--budget", "40gpuh", "--out", d.string(), "--no-lessons",
                            "--seed", "1", "--json"},
                           dir_ / "tune.out");
  const fs::path run_dir = d / "trials" / "0000-baseline" / "run-1";
  const std::string id = wait_launched(run_dir);
  ASSERT_FALSE(id.empty()) << slurp(dir_ / "tune.out");
  const pid_t run_pid = std::stoi(id.substr(id.find(':') + 1));
  ::kill(tune, SIGINT);
  EXPECT_EQ(exit_status_of(tune), 130) << slurp(dir_ / "tune.out");
  EXPECT_EQ(journal_of(run_dir).back()["status"]["state"], "cancelled");
  // Its processes are gone once init has reaped them.
  for (int i = 0; i < 250 && ::kill(-run_pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(::kill(-run_pid, 0), 0) << "the run's process group is still alive";
  ASSERT_TRUE(fs::exists(d / "summary.json"));
  const auto summary = nlohmann::json::parse(slurp(d / "summary.json"));
  EXPECT_EQ(summary["stop_reason"], "interrupted");
  EXPECT_GT(summary["gpu_hours"].get<double>(), 0);
  const auto printed = nlohmann::json::parse(slurp(dir_ / "tune.out").substr(slurp(dir_ / "tune.out").find('{')));
  EXPECT_EQ(printed["stop_reason"], "interrupted");
}

// attune killed mid-run, the run ending before attune is started again: its
// monitor's record says how it ended, so the same command reports that.
TEST_F(CliRunTest, RunThatEndedWhileAttuneWasDeadReportsItsExitStatus) {
  std::vector<std::string> script;
  for (const char* line : kFiveIterations) script.push_back(std::string("echo '") + line + "'");
  script.push_back("sleep 1");
  script.push_back("exit 3");
  const std::string wrapper = local_wrapper(script);
  const fs::path d = dir_ / "run";
  const std::vector<std::string> args = {"run", wrapper, "--cluster", "local", "--run-dir", d.string(), "--json"};
  const pid_t first = start(args, dir_ / "first.out");
  const std::string id = wait_launched(d);
  ASSERT_FALSE(id.empty()) << slurp(dir_ / "first.out");
  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
  ASSERT_TRUE(wait_for_file(d / "run.log.exit", 10));
  auto again = attune("run " + wrapper + " --cluster local --run-dir " + d.string() + " --json");
  EXPECT_EQ(again.status, 1) << again.out << again.err;
  const auto j = json_of(again);
  EXPECT_EQ(j["id"], id);
  EXPECT_EQ(j["reattached"], true);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["reason"], "exit status 3");
  EXPECT_EQ(j["diagnosis"]["steps"], 5);
  EXPECT_EQ(journal_of(d).back()["status"]["reason"], "exit status 3");
}

// A run whose monitor was killed too left no record: the error says the run
// cannot be followed and to use another --run-dir; the cluster is not to blame.
TEST_F(CliRunTest, RunThatIsTrulyGoneIsNotBlamedOnTheCluster) {
  const std::string wrapper = local_wrapper({"sleep 30"});
  const fs::path d = dir_ / "run";
  const pid_t first = start({"run", wrapper, "--cluster", "local", "--run-dir", d.string()}, dir_ / "first.out");
  const std::string id = wait_launched(d);
  ASSERT_FALSE(id.empty()) << slurp(dir_ / "first.out");
  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
  std::ifstream stat("/proc/" + id + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  ASSERT_NE(paren, std::string::npos) << text;
  const pid_t monitor = std::stoi(text.substr(paren + 4));  // ") S <ppid>"
  ::kill(monitor, SIGKILL);
  ::kill(-std::stoi(id), SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto again = attune("run " + wrapper + " --cluster local --run-dir " + d.string());
  EXPECT_EQ(again.status, 2) << again.out << again.err;
  EXPECT_NE(again.err.find("run local:" + id + " is gone"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--run-dir"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("--cluster"), std::string::npos) << again.err;
}

// A reader that goes away (`attune run ... | head -1`) does not kill attune:
// the run is still followed to its end and journalled.
TEST_F(CliRunTest, AClosedOutputDoesNotStopTheRun) {
  const fs::path d = dir_ / "run";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // no reader at all: every write is EPIPE (or SIGPIPE)
  std::vector<std::string> argv = {ATTUNE_BINARY, "run", example("llama3-8b.attune.yaml"), "--cluster", "sim",
                                   "--run-dir", d.string(), "--json"};
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  const std::string config = (dir_ / "config").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("XDG_CONFIG_HOME", config.c_str(), 1);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::execv(ATTUNE_BINARY, c.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  EXPECT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
  const auto journal = journal_of(d);
  ASSERT_FALSE(journal.empty());
  EXPECT_EQ(journal.back()["event"], "finished");
  EXPECT_EQ(journal.back()["status"]["state"], "completed");
}

TEST_F(CliRunTest, ClusterListAndCheckSim) {
  auto l = attune("cluster list --json");
  ASSERT_EQ(l.status, 0) << l.out << l.err;
  const auto j = json_of(l);
  ASSERT_TRUE(j.is_array());
  for (const char* n : {"sim", "local", "mock"}) {
    bool listed = false;
    for (const auto& c : j) listed = listed || c["name"] == n;
    EXPECT_TRUE(listed) << n;
  }
  for (const auto& c : j) {
    if (c["name"] == "mock") {
      EXPECT_EQ(c["backend"], "slurm");
      EXPECT_EQ(c["payload"], "sim");
      EXPECT_DOUBLE_EQ(c["time_scale"].get<double>(), 60);
    }
  }
  auto human = attune("cluster list");
  EXPECT_EQ(human.status, 0);
  EXPECT_NE(human.out.find("mock"), std::string::npos) << human.out;

  auto c = attune("cluster check sim");
  EXPECT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("ready"), std::string::npos) << c.out;
  auto cj = attune("cluster check sim --json");
  ASSERT_EQ(cj.status, 0) << cj.out << cj.err;
  const auto k = json_of(cj);
  EXPECT_EQ(k["passed"], true);
  EXPECT_EQ(k["checks"].size(), 1u);
  auto none = attune("cluster check nosuch");
  EXPECT_EQ(none.status, 2) << none.out << none.err;
  EXPECT_NE(none.err.find("sim, local, mock"), std::string::npos) << none.err;
}

TEST_F(CliRunTest, RunHelpMentionsEveryFlag) {
  auto h = attune("run --help");
  EXPECT_EQ(h.status, 0);
  for (const char* flag : {"--cluster", "--clusters", "--run-dir", "--budget-gpu-hours", "--hang-factor",
                           "--startup-allowance", "--to-end", "--json"}) {
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace

// ---------------------------------------------------------------- messages

namespace {

// One line, `attune: error: ...`, exit status 2: none of CLI11's own wording.
void expect_plain_error(const RunResult& r, const std::string& args, const std::string& message) {
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("attune: error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(message), std::string::npos) << args << ": no '" << message << "' in\n" << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  for (const char* leak : {"Run with --help", "not in range", "1797693134862315708", "is required",
                           "was not expected", "were not expected", "Could not convert", "required INT",
                           "A subcommand", "does not exist:", " not in {"}) {
    EXPECT_EQ(r.out.find(leak), std::string::npos) << args << ": CLI11's '" << leak << "' in\n" << r.out;
  }
}

TEST_F(CliTest, ParseErrorsArePlainWords) {
  const std::string base = example("megatron_llama3_8b.sh");
  const std::string wrapper = example("llama3-8b.attune.yaml");
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"levers " + base + " --nodes 0", "attune: error: --nodes: expected a whole number of at least 1, got '0'"},
      {"levers " + base + " --gpus-per-node 1.5", "--gpus-per-node: expected a whole number of at least 1, got '1.5'"},
      {"levers " + base + " --nodes abc", "--nodes: expected a whole number of at least 1, got 'abc'"},
      {"levers " + base + " --nodes", "--nodes needs a whole number after it"},
      {"sim run " + base + " --gpu h100 --steps 0", "--steps: expected a whole number of at least 1, got '0'"},
      {"sim job " + base + " --gpu h100 --time-scale 0", "--time-scale: expected a number greater than 0, got '0'"},
      {"run " + wrapper + " --hang-factor -1", "--hang-factor: expected a number greater than 0, got '-1'"},
      {"run " + wrapper + " --startup-allowance -1", "--startup-allowance: expected a number of at least 0, got '-1'"},
      {"diagnose x.log --world 0", "--world: expected a whole number of at least 1, got '0'"},
      {"tune " + wrapper + " --max-trials many", "--max-trials: expected a whole number of at least 0, got 'many'"},
      {"levers", "attune: error: missing FILE for 'attune levers'"},
      {"recipe diff " + base, "missing B for 'attune recipe diff'"},
      {"levers " + base + " extra", "unexpected argument 'extra' for 'attune levers'"},
      {"levers " + base + " --bogus", "unknown option '--bogus' for 'attune levers'"},
      {"levers " + base + " --bogus=3", "unknown option '--bogus' for 'attune levers'"},
      {"levers " + base + " --gpu a100", "--gpu: unknown GPU type 'a100' (expected one of: h100, h200, b200)"},
      {"levers " + base + " --json=maybe", "--json is a flag: give it alone, without a value (got 'maybe')"},
      {"check " + base + " --unknown-keys", "--unknown-keys needs a value after it"},
      {"run " + wrapper + " --clusters " + (dir_ / "none.yaml").string(),
       "--clusters: no such file '" + (dir_ / "none.yaml").string() + "'"},
      {"sim scenarios " + (dir_ / "none").string(), "DIR: no such directory '" + (dir_ / "none").string() + "'"},
  };
  for (const auto& c : cases) expect_plain_error(run(c.args), c.args, c.message);

  // --help is as it was: exit 0, the usage and the flags with their types.
  auto h = run("levers --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("Usage:"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("--nodes INT:POSITIVE"), std::string::npos) << h.out;
  EXPECT_EQ(h.out.find("attune: error"), std::string::npos) << h.out;
  EXPECT_EQ(run("--help").status, 0);
}

TEST_F(CliTest, UnknownCommandsNameTheCommandsThereAre) {
  expect_plain_error(run("frobnicate"), "frobnicate",
                     "attune: error: unknown command 'frobnicate' (expected one of: levers, recipe, check, diagnose, "
                     "sim, run, cluster, tune, replay, bench, report, export)");
  expect_plain_error(run(""), "(nothing)", "attune: error: missing command (expected one of: levers, recipe,");
  expect_plain_error(run("sim nosuch"), "sim nosuch",
                     "unknown command 'nosuch' for 'attune sim' (expected one of: predict, run, job, optimum, "
                     "scenarios, score, calibrate)");
  expect_plain_error(run("recipe nosuch"), "recipe nosuch",
                     "unknown command 'nosuch' for 'attune recipe' (expected one of: set, diff)");
  expect_plain_error(run("cluster nosuch"), "cluster nosuch",
                     "unknown command 'nosuch' for 'attune cluster' (expected one of: check, list)");
  expect_plain_error(run("cluster"), "cluster", "missing command for 'attune cluster' (expected one of: check, list)");
  expect_plain_error(run("--bogus"), "--bogus", "unknown option '--bogus'");
}

// `check --edit` takes what `recipe set` takes, and makes the same candidate.
TEST_F(CliTest, CheckEditTakesWhatRecipeSetTakes) {
  const std::string base = example("megatron_llama3_8b.sh");
  for (const char* edit : {"tp=1", "mbs=2", "--micro-batch-size=2"}) {
    const fs::path tuned = dir_ / "tuned.sh";
    fs::remove(tuned);
    ASSERT_EQ(run("recipe set " + base + " " + edit + " -o " + tuned.string()).status, 0) << edit;
    auto from_file = run("check " + base + " " + tuned.string() + " --json");
    auto from_edit = run("check " + base + " --edit " + edit + " --json");
    ASSERT_EQ(from_edit.status, 0) << edit << "\n" << from_edit.out;
    ASSERT_EQ(from_file.status, 0) << edit << "\n" << from_file.out;
    const auto f = nlohmann::json::parse(from_file.out);
    const auto e = nlohmann::json::parse(from_edit.out);
    EXPECT_EQ(e["verdict"], "allow") << edit;
    EXPECT_EQ(e["changes"], f["changes"]) << edit;
    EXPECT_EQ(e["invariants"], f["invariants"]) << edit;
  }
  auto tp = nlohmann::json::parse(run("check " + base + " --edit tp=1 --json").out);
  EXPECT_EQ(tp["changes"][0]["key"], "--tensor-model-parallel-size");
  EXPECT_EQ(tp["changes"][0]["lever"], "tp");
  // A bad edit is bad input, as in `recipe set`.
  auto bad = run("check " + base + " --edit tp=3");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("heads"), std::string::npos) << bad.out;
  auto no_value = run("check " + base + " --edit tp");
  EXPECT_EQ(no_value.status, 2) << no_value.out;
  EXPECT_NE(no_value.out.find("LEVER=VALUE"), std::string::npos) << no_value.out;
}

// The README's spelling, `recipe set FILE --micro-batch-size=2`, without `--`.
TEST_F(CliTest, RecipeSetTakesARawFlagEditWithoutDashDash) {
  const std::string base = example("megatron_llama3_8b.sh");
  for (const std::string& args : {base + " --micro-batch-size=2", base + " -- --micro-batch-size=2",
                                 base + " --json --micro-batch-size=2", base + " --micro-batch-size=2 --json"}) {
    auto r = run("recipe set " + args);
    ASSERT_EQ(r.status, 0) << args << "\n" << r.out;
    const bool json = args.find("--json") != std::string::npos;
    EXPECT_NE(r.out.find(json ? "\"--micro-batch-size\"" : "--micro-batch-size: 1 -> 2"), std::string::npos) << r.out;
  }
  const fs::path out = dir_ / "tuned.sh";
  ASSERT_EQ(run("recipe set " + base + " --micro-batch-size=2 -o " + out.string()).status, 0);
  EXPECT_NE(slurp(out).find("MICRO_BATCH=2\n"), std::string::npos) << slurp(out);

  auto spaced = run("recipe set " + base + " --micro-batch-size 2");
  expect_plain_error(spaced, "--micro-batch-size 2", "unknown option '--micro-batch-size' for 'attune recipe set'");
  EXPECT_NE(spaced.out.find("--micro-batch-size=2"), std::string::npos) << spaced.out;
  expect_plain_error(run("recipe set " + base + " tp=1 --micro-batch-size=2"), "two edits", "one edit at a time");
  expect_plain_error(run("recipe set " + base), "no edit", "LEVER=VALUE");
  expect_plain_error(run("recipe set " + base + " tp=1 extra"), "extra", "unexpected argument 'extra'");
}

// Every --framework says which values it takes, and refuses any other by name.
TEST_F(CliTest, FrameworkFlagsListTheirValues) {
  const std::string frameworks = "megatron, automodel, torchtitan, hyperpod, axolotl, bridge";
  for (const char* cmd : {"levers", "recipe set", "recipe diff", "check", "sim predict", "sim run", "sim job",
                          "sim optimum", "sim score", "run", "tune"}) {
    auto h = run(std::string(cmd) + " --help");
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_NE(h.out.find(frameworks), std::string::npos) << cmd << "\n" << h.out;
  }
  const std::string base = example("megatron_llama3_8b.sh");
  expect_plain_error(run("levers " + base + " --framework caffe"), "levers --framework caffe",
                     "attune: error: --framework: unknown framework 'caffe' (expected one of: " + frameworks + ")");
  expect_plain_error(run("check " + base + " --edit tp=1 --framework caffe"), "check --framework caffe",
                     "--framework: unknown framework 'caffe' (expected one of: " + frameworks + ")");
  EXPECT_EQ(run("levers " + base + " --framework megatron-lm --json").status, 0);  // spellings still accepted

  // diagnose: a log format, and says so.
  auto d = run("diagnose --help");
  EXPECT_NE(d.out.find("log format"), std::string::npos) << d.out;
  for (const char* f : {"megatron", "bridge", "nemo", "automodel", "torchtitan", "deepspeed", "hf"}) {
    EXPECT_NE(d.out.find(f), std::string::npos) << f;
  }
  fs::path log = dir_ / "train.log";
  std::ofstream(log) << "starting\n";
  expect_plain_error(run("diagnose " + log.string() + " --framework caffe"), "diagnose --framework caffe",
                     "--framework: unknown framework 'caffe' for the log format (expected one of: megatron, ");
  expect_plain_error(run("sim run " + base + " --gpu h100 --log-format caffe"), "--log-format caffe",
                     "--log-format: unknown log format 'caffe' (expected one of: megatron, bridge, nemo, automodel, "
                     "torchtitan, deepspeed, hf)");
}

}  // namespace

namespace {

// `cluster check NAME` of a name nobody defined blames the name, says where
// attune looked and lists the names there are; it is no `--cluster` flag.
TEST_F(CliRunTest, ClusterCheckOfAnUndefinedNameSaysWhereItLooked) {
  auto none = attune("cluster check nosuch");
  EXPECT_EQ(none.status, 2) << none.out << none.err;
  const std::string default_file = (dir_ / "config" / "attune" / "clusters.yaml").string();
  for (const std::string& part : {std::string("attune: error: cluster 'nosuch' is not defined"), default_file,
                                  std::string("does not exist"), std::string("the defined clusters are sim, local, mock")}) {
    EXPECT_NE(none.err.find(part), std::string::npos) << "no '" << part << "' in\n" << none.err;
  }
  EXPECT_EQ(none.err.find("'--cluster'"), std::string::npos) << none.err;

  const fs::path clusters = dir_ / "clusters.yaml";
  std::ofstream(clusters) << "clusters:\n  p5:\n    backend: slurm\n    partition: gpu\n";
  auto other = attune("cluster check nosuch --clusters " + clusters.string());
  EXPECT_EQ(other.status, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("looked in the built-in clusters and in " + clusters.string() + ";"), std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("sim, local, mock, mock-emulate, p5"), std::string::npos) << other.err;
}

// What `attune run` prints names only flags and arguments `run` has: its
// diagnosis does not tell it to pass `--recipe` (it has RECIPE already).
TEST_F(CliRunTest, RunSuggestsNoFlagItDoesNotHave) {
  const std::string wrapper = local_wrapper({"echo 'starting'", "exit 3"});
  auto r = attune("run " + wrapper + " --cluster local --run-dir " + (dir_ / "run").string());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no step lines found"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--recipe"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("--recipe"), std::string::npos) << r.err;
  // `attune diagnose` without a recipe still says where it takes the figures from.
  auto d = attune("diagnose " + (dir_ / "run" / "run.log").string() + " --json");
  ASSERT_EQ(d.status, 0) << d.out << d.err;
  const auto notes = json_of(d)["notes"].dump();
  EXPECT_NE(notes.find("--recipe FILE"), std::string::npos) << notes;
  EXPECT_NE(notes.find("global batch, sequence length and world size"), std::string::npos) << notes;
}

}  // namespace
