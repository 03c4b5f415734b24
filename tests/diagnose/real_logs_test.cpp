// The diagnoser against real log excerpts from public issues
// (tests/diagnose/real, see SOURCES.md there): each entry of manifest.yaml
// says what a reader sees in the text — the framework, the failure class and
// its evidence line, the step count, the last step and the step time. The
// test diagnoses every excerpt the way `attune diagnose` does, prints a
// per-field accuracy table and every mismatch, and holds each field to the
// accuracy reached so far, so that a regression fails.
#include "attune/diagnose/diagnosis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace attune::diagnose {
namespace {

#ifdef ATTUNE_SOURCE_DIR
const std::filesystem::path kRealDir = std::filesystem::path(ATTUNE_SOURCE_DIR) / "tests/diagnose/real";
#else
const std::filesystem::path kRealDir = std::filesystem::path(__FILE__).parent_path() / "real";
#endif

// The manifest names the tool that wrote the log; the diagnoser names the log
// format (axolotl and LLaMA-Factory print the Hugging Face Trainer's lines).
std::string format_of(const std::string& framework) {
  if (framework == "axolotl") return "hf";
  return framework;
}

struct Entry {
  std::string file;
  std::string framework;  // "unknown": the excerpt has no framework's lines
  std::string log_format; // the format the log shows, where it is not the framework's own
  std::string failure;    // "none" = no failure
  long failure_line = 0;
  std::optional<int> steps;
  std::optional<long> last_step;
  std::optional<double> step_time_s;
};

std::vector<Entry> load_manifest() {
  std::vector<Entry> out;
  const YAML::Node root = YAML::LoadFile((kRealDir / "manifest.yaml").string());
  for (const auto& n : root) {
    Entry e;
    e.file = n["file"].as<std::string>();
    e.framework = n["framework"].as<std::string>("unknown");
    e.log_format = n["log_format"].as<std::string>("");
    e.failure = n["failure"].as<std::string>("none");
    if (n["failure_line"]) e.failure_line = n["failure_line"].as<long>();
    if (n["steps"]) e.steps = n["steps"].as<int>();
    if (const auto f = n["figures"]) {
      if (f["last_step"]) e.last_step = f["last_step"].as<long>();
      if (f["step_time_s"]) e.step_time_s = f["step_time_s"].as<double>();
    }
    out.push_back(std::move(e));
  }
  return out;
}

struct Tally {
  int checked = 0;
  int right = 0;
};

struct Results {
  std::map<std::string, Tally> fields;
  std::vector<std::string> mismatches;
  std::map<std::string, std::map<std::string, bool>> per_file;  // file -> field -> right

  void check(const std::string& file, const std::string& field, bool ok, const std::string& expected,
             const std::string& got) {
    Tally& t = fields[field];
    ++t.checked;
    if (ok) ++t.right;
    per_file[file][field] = ok;
    if (!ok) mismatches.push_back(fmt::format("{}: {}: expected {}, got {}", file, field, expected, got));
  }
};

std::string opt_str(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : "none"; }

Results run_all() {
  Results r;
  for (const Entry& e : load_manifest()) {
    const std::string path = (kRealDir / e.file).string();
    Diagnosis d;
    try {
      d = diagnose_logs({path}, DiagnoseOptions{});
    } catch (const std::exception& ex) {
      r.check(e.file, "read", false, "a diagnosis", ex.what());
      continue;
    }
    // "unknown": no framework's lines are in the excerpt, and the diagnoser must say so.
    const std::string want = !e.log_format.empty() ? e.log_format : e.framework == "unknown" ? "unknown" : format_of(e.framework);
    r.check(e.file, "framework", d.framework == want, want, d.framework.empty() ? "\"\"" : d.framework);
    const std::string got_kind = d.failure ? to_string(d.failure->kind) : "none";
    r.check(e.file, "failure", got_kind == e.failure, e.failure, got_kind);
    if (e.failure != "none") {
      const long got_line = d.failure ? d.failure->line : 0;
      r.check(e.file, "failure_line", got_line == e.failure_line, std::to_string(e.failure_line),
              d.failure ? fmt::format("{} ({})", got_line, d.failure->evidence.substr(0, 100)) : "no failure");
    }
    if (e.steps) {
      r.check(e.file, "steps", d.timed_steps == *e.steps, std::to_string(*e.steps), std::to_string(d.timed_steps));
    }
    if (e.last_step) {
      r.check(e.file, "last_step", d.last_step == *e.last_step, std::to_string(*e.last_step),
              std::to_string(d.last_step));
    }
    if (e.step_time_s) {
      const bool ok = d.step_time_s && std::abs(*d.step_time_s - *e.step_time_s) <= 0.02 * *e.step_time_s;
      r.check(e.file, "step_time_s", ok, opt_str(e.step_time_s), opt_str(d.step_time_s));
    }
  }
  return r;
}

const Results& results() {
  static const Results r = run_all();
  return r;
}

TEST(RealLogs, AccuracyTable) {
  const Results& r = results();
  std::string table = fmt::format("\n{:<14} {:>8} {:>6} {:>7}\n", "field", "checked", "right", "acc");
  for (const auto& [field, t] : r.fields) {
    table += fmt::format("{:<14} {:>8} {:>6} {:>6.1f}%\n", field, t.checked, t.right,
                         t.checked ? 100.0 * t.right / t.checked : 0.0);
  }
  table += fmt::format("mismatches: {}\n", r.mismatches.size());
  for (const auto& m : r.mismatches) table += "  " + m + "\n";
  std::printf("%s", table.c_str());
  EXPECT_EQ(r.fields.count("read"), 0u) << "every excerpt is readable";
}

// The accuracy reached so far: a change that reads fewer entries right fails.
TEST(RealLogs, AccuracyFloors) {
  const std::map<std::string, int> floors = {
      {"framework", 97}, {"failure", 97}, {"failure_line", 68}, {"steps", 87}, {"last_step", 27}, {"step_time_s", 15},
  };
  const Results& r = results();
  for (const auto& [field, floor] : floors) {
    const auto it = r.fields.find(field);
    ASSERT_NE(it, r.fields.end()) << field;
    EXPECT_GE(it->second.right, floor) << field << ": " << it->second.right << " of " << it->second.checked;
  }
}

// Entries the diagnoser once misread: failure texts as real runs print them.
TEST(RealLogs, FailuresAsRealRunsPrintThem) {
  const std::vector<std::pair<std::string, std::string>> fixed = {
      {"009-flash-attn-missing-backticked-traceback.log", "failure"},      // traceback behind a backtick
      {"010-flash-attn-traceback-flattened-one-line.log", "failure"},      // whole traceback on one line
      {"011-megatron-te-no-attribute-pytorch.log", "failure"},             // broken Transformer Engine
      {"018-nemo2-srun-interleaved-ranks-pp-divisibility-assert.log", "failure"},
      {"020-megatron-llm-bad-grad-norm-warning-skipped-iter.log", "failure"},  // grad_norm=nan
      {"033-hf-trainer-deepspeed-fp16-overflow-all-steps-skipped.log", "failure"},  // skipped=1995 of 2000
      {"039-tqdm-glued-nccl-socket-errors-then-watchdog.log", "failure"},  // "Some NCCL operations have failed"
      {"040-hf-llamafactory-multinode-torchrun-not-found.log", "failure"},  // command_not_found
      {"041-subprocess-torchrun-not-found-then-traceback.log", "failure"},
      {"042-script-accelerate-command-not-found.log", "failure"},
      {"043-hf-llamafactory-deepspeed-not-available-importerror.log", "failure"},  // excerpt starts mid-traceback
      {"045-bridge-nccl-warn-cuda-failure-2-out-of-memory.log", "failure"},  // NCCL WARN Cuda failure 2
      {"054-childfailed-sigsegv-exitcode-11.log", "failure"},                // SIGSEGV: unknown
      {"055-tqdm-glued-segmentation-fault-core-dumped.log", "failure"},
      {"057-loading-shards-progress-glued-killed.log", "failure"},           // bare Killed: host OOM
      {"058-kernel-oom-killer-dmesg-python-killed.log", "failure"},          // kernel OOM killer line
      {"059-deepspeed-launcher-sigkill-at-checkpoint-save.log", "failure"},
      {"060-megatron-validate-args-moe-tp-requires-sp.log", "failure"},      // frame without "Traceback"
      {"061-megatron-parse-args-bare-assertionerror-first.log", "failure"},  // assert line, no AssertionError
      {"062-megatron-swift-rank-prefixed-validate-args-pp-layers.log", "failure"},
      {"068-nemo1-progress-bar-glued-hydra-error-traceback.log", "failure"},  // glued to a parsed bar
      // What the cluster and the hardware say when the framework says nothing.
      {"069-slurm-cgroup-oom-kill-then-srun-task-out-of-memory.log", "failure"},  // slurmstepd oom-kill
      {"072-slurm-oom-kill-stepid-form-two-lines.log", "failure"},
      {"073-slurm-newest-oom-kill-events-wording-placeholders.log", "failure"},     // "oom_kill events"
      {"077-m4-validation-then-srun-node-failure.log", "failure"},                 // srun: Node failure on
      {"078-megatron-deepspeed-backward-traceback-uncorrectable-ecc.log", "failure"},  // ECC, not python_error
      {"080-dmesg-nvrm-xid-lines-pt-main-thread.log", "failure"},                   // NVRM: Xid
      {"082-bloom-default-prefixed-cuda-unknown-error-cleanup-loop.log", "failure"},  // CUDA error: unknown error
      {"085-watchdog-heartbeat-stuck-480-seconds.log", "failure"},                 // heartbeat monitor: a hang
      {"086-watchdog-heartbeat-stuck-hard-wrapped-116-cols.log", "failure"},
      {"064-arctictraining-watchdog-stuck-heartbeat-and-allgather-timeout.log", "failure"},  // the timeout is the cause
      {"087-deepspeed-loss-scale-minimum-interleaved-ranks.log", "failure"},      // loss scale at its minimum
      {"090-hf-trainer-grad-norm-nan-then-loss-zero.log", "failure"},
      {"092-bloom-megatron-deepspeed-seconds-per-iteration-prefixed.log", "step_time_s"},  // (s), not (ms)
      // A log of no known framework is "unknown", not Megatron's.
      {"096-nanotron-iteration-lines-si-suffixed-values.log", "framework"},
      {"001-line-numbered-nccl-watchdog-allreduce-timeout.log", "framework"},
      {"005-automodel-ci-watchdog-illegal-memory-access.log", "framework"},
      {"013-hf-llamafactory-oom-interleaved-rank-traceback.log", "framework"},
      {"044-axolotl-fsdp-oom-hard-wrapped-100-cols.log", "framework"},
      {"048-deepspeed-launcher-oom-quoted-with-gt-prefix.log", "framework"},
      {"068-nemo1-progress-bar-glued-hydra-error-traceback.log", "framework"},
  };
  const Results& r = results();
  for (const auto& [file, field] : fixed) {
    const auto f = r.per_file.find(file);
    ASSERT_NE(f, r.per_file.end()) << file;
    const auto ok = f->second.find(field);
    ASSERT_NE(ok, f->second.end()) << file << " " << field;
    EXPECT_TRUE(ok->second) << file << ": " << field;
    if (field == "failure") {
      const auto line = f->second.find("failure_line");
      ASSERT_NE(line, f->second.end()) << file;
      EXPECT_TRUE(line->second) << file << ": failure_line";
    }
  }
}

}  // namespace
}  // namespace attune::diagnose
