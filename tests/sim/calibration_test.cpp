// Tests for sim/calibration: the CSV reader (quoting, CRLF, errors with
// line/column), the mapping of a published row to a Workload (model names,
// GPU, layout, precision, recompute, notes), the scoring statistics (median,
// nearest-rank p90, Spearman with ties) against hand-computed values, and —
// when ATTUNE_CORPUS is set — every row of the real throughput.csv.
#include "attune/sim/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "attune/util/error.h"

namespace attune::sim {
namespace {

namespace fs = std::filesystem;

const std::string kHeader =
    "source,model,gpu,num_gpus,tp,pp,vp,cp,ep,dp,mbs,gbs,seq_len,precision,recompute,"
    "tokens_per_s_per_gpu,tflops_per_gpu,mfu,notes\n";

// Writes a fixture CSV into the test's temporary directory.
std::string write_csv(const std::string& name, const std::string& content) {
  const fs::path path = fs::path(::testing::TempDir()) / ("attune_calibration_" + name + ".csv");
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

// Expects read_calibration_csv to throw InputError at this place.
void expect_csv_error(const std::string& name, const std::string& content, int line, int column,
                      const std::string& key = "") {
  const std::string path = write_csv(name, content);
  try {
    read_calibration_csv(path);
    ADD_FAILURE() << name << ": no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, path) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

// A row that maps: Llama 3 8B on 8 H100s, data parallel only.
CalibrationRow base_row() {
  CalibrationRow r;
  r.line = 2;
  r.source = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md";
  r.model = "Llama3-8B";
  r.gpu = "H100";
  r.num_gpus = 8;
  r.tp = 1;
  r.pp = 1;
  r.mbs = 1;
  r.gbs = 128;
  r.seq_len = 8192;
  r.precision = "BF16";
  r.recompute = "not stated";
  r.tokens_per_s_per_gpu = 10000;
  return r;
}

Workload map_ok(const CalibrationRow& row) {
  std::string reason;
  auto w = workload_from_row(row, reason);
  EXPECT_TRUE(w.has_value()) << row.model << ": " << reason;
  return w ? *w : Workload{};
}

std::string map_reason(const CalibrationRow& row) {
  std::string reason;
  auto w = workload_from_row(row, reason);
  EXPECT_FALSE(w.has_value()) << row.model;
  return reason;
}

CalibrationRow with_model(std::string model) {
  CalibrationRow r = base_row();
  r.model = std::move(model);
  return r;
}

// ------------------------------------------------------------------ CSV

TEST(CalibrationCsv, QuotedFieldsCrlfAndEmptyNumbers) {
  const std::string csv =
      "source,model,gpu,num_gpus,tp,pp,vp,cp,ep,dp,mbs,gbs,seq_len,precision,recompute,"
      "tokens_per_s_per_gpu,tflops_per_gpu,mfu,notes\r\n"
      "\"src, with comma\",\"GPT-1.7B (h=2048,L=24,heads=16)\",H100,48,1,1,,1,,48,,192,4096,BF16,"
      "not stated,36259,408.8,0.41,\"say \"\"hi\"\", then\r\nnext line\"\r\n"
      "\r\n"
      "s2,Llama3-8B,H200,8,1,1,,1,,8,2,128,8192,FP8,full,597.3,,,\r\n";
  const auto rows = read_calibration_csv(write_csv("quoted", csv));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[0].source, "src, with comma");
  EXPECT_EQ(rows[0].model, "GPT-1.7B (h=2048,L=24,heads=16)");
  EXPECT_EQ(rows[0].num_gpus, 48);
  EXPECT_EQ(rows[0].vp, 0);
  EXPECT_EQ(rows[0].mbs, 0);
  EXPECT_EQ(rows[0].gbs, 192);
  EXPECT_DOUBLE_EQ(rows[0].tflops_per_gpu, 408.8);
  EXPECT_EQ(rows[0].notes, "say \"hi\", then\r\nnext line");
  EXPECT_EQ(rows[1].line, 5);  // the quoted line break and the blank line count
  EXPECT_EQ(rows[1].gpu, "H200");
  EXPECT_DOUBLE_EQ(rows[1].tokens_per_s_per_gpu, 597.3);
  EXPECT_EQ(rows[1].notes, "");
}

TEST(CalibrationCsv, HeaderIsReadByName) {
  const std::string csv =
      "extra,notes,mfu,tflops_per_gpu,tokens_per_s_per_gpu,recompute,precision,seq_len,gbs,mbs,dp,ep,cp,vp,pp,tp,"
      "num_gpus,gpu,model,source\n"
      "x,n,0.5,400,1234.5,full,FP8,4096,64,1,8,,1,,1,1,8,B200,Llama3-8B,src\n";
  const auto rows = read_calibration_csv(write_csv("by_name", csv));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].model, "Llama3-8B");
  EXPECT_EQ(rows[0].gpu, "B200");
  EXPECT_EQ(rows[0].dp, 8);
  EXPECT_EQ(rows[0].seq_len, 4096);
  EXPECT_DOUBLE_EQ(rows[0].tokens_per_s_per_gpu, 1234.5);
  EXPECT_EQ(rows[0].notes, "n");
}

TEST(CalibrationCsv, MalformedFilesNameLineAndColumn) {
  expect_csv_error("missing_column", "source,model,gpu\nsrc,m,H100\n", 1, 0, "num_gpus");
  // "x" in the tp column: line 2, column 12.
  expect_csv_error("bad_int", kHeader + "s,m,H100,8,x,1,,1,,8,1,128,8192,BF16,none,1,,,\n", 2, 12, "tp");
  expect_csv_error("bad_float", kHeader + "s,m,H100,8,1,1,,1,,8,1,128,8192,BF16,none,1.2.3,,,\n", 2, 43,
                   "tokens_per_s_per_gpu");
  expect_csv_error("integer_wanted", kHeader + "s,m,H100,8.5,1,1,,1,,8,1,128,8192,BF16,none,1,,,\n", 2, 10,
                   "num_gpus");
  // Too few fields: reported at the last field; too many: at the first extra one.
  expect_csv_error("short_row", kHeader + "s,m,H100\n", 2, 5);
  expect_csv_error("long_row", kHeader + "s,m,H100,8,1,1,,1,,8,1,128,8192,BF16,none,1,,,,extra\n", 2, 48);
  expect_csv_error("unclosed_quote", kHeader + "s,\"GPT (h=1,\n", 2, 3);
  expect_csv_error("text_after_quote", kHeader + "s,\"GPT\"x,H100\n", 2, 8);
  expect_csv_error("stray_quote", kHeader + "s,GP\"T,H100\n", 2, 5);
}

TEST(CalibrationCsv, MissingFileIsAnInputError) {
  EXPECT_THROW(read_calibration_csv("/nonexistent/attune/throughput.csv"), InputError);
}

// ------------------------------------------------------------------ model names

TEST(CalibrationModel, ExplicitGptArchitecture) {
  const Workload w = map_ok(with_model("GPT-1.7B (h=2048,L=24,heads=16,vocab=131072)"));
  EXPECT_EQ(w.model.name, "gpt-1.7b");
  EXPECT_EQ(w.model.hidden, 2048);
  EXPECT_EQ(w.model.layers, 24);
  EXPECT_EQ(w.model.heads, 16);
  EXPECT_EQ(w.model.kv_heads, 16);  // MHA
  EXPECT_EQ(w.model.ffn, 4 * 2048);
  EXPECT_EQ(w.model.vocab, 131072);
  EXPECT_EQ(w.model.activation, "gelu");
  EXPECT_FALSE(w.model.is_moe());
  EXPECT_EQ(w.plan.model, "gpt-1.7b");
}

TEST(CalibrationModel, ExplicitArchitectureDefaultsAndExtraFields) {
  const Workload a = map_ok(with_model("GPT-22B (h=6144,L=48,heads=64)"));
  EXPECT_EQ(a.model.vocab, 51200);  // the A100 papers' padded GPT-2 vocabulary
  const Workload b = map_ok(with_model("Custom (h=4096, L=32, heads=32, kv_heads=8, ffn=14336)"));
  EXPECT_EQ(b.model.kv_heads, 8);
  EXPECT_EQ(b.model.ffn, 14336);
  EXPECT_NE(map_reason(with_model("GPT-1T (h=25600,L=128)")).find("heads"), std::string::npos);
  EXPECT_NE(map_reason(with_model("GPT (h=2048,L=24,heads=16,depth=3)")).find("depth=3"), std::string::npos);
  EXPECT_NE(map_reason(with_model("GPT (h=2048,L=24,heads=15)")).find("heads must divide h"), std::string::npos);
}

TEST(CalibrationModel, PresetNames) {
  const std::map<std::string, std::string> expected = {
      {"Llama 3 8B", "llama3-8b"},
      {"LLAMA3-70B", "llama3-70b"},
      {"Llama3-70B SFT", "llama3-70b"},
      {"Llama3.1-405B", "llama3-405b"},
      {"Llama3.1-8B", "llama3-8b"},
      {"Mixtral 8x7B", "mixtral-8x7b"},
      {"DeepSeek-V3", "deepseek-v3"},
      {"DeepSeek-V3 671B (MoE 256e top8, MLA)", "deepseek-v3"},
      {"Qwen3 30B-A3B", "qwen3-30b-a3b"},
      {"Qwen3-235B-A22B (MoE 128e top8)", "qwen3-235b-a22b"},
      {"GPT-OSS-120B (MoE 128e top4)", "gpt-oss-120b"},
      {"Qwen3-30B", "qwen3-30b-a3b"},  // from calibration.cpp's alias table
  };
  for (const auto& [text, id] : expected) {
    EXPECT_EQ(map_ok(with_model(text)).model.name, id) << text;
  }
  EXPECT_EQ(map_ok(with_model("DeepSeek-V3")).model.experts, 256);
}

TEST(CalibrationModel, UnknownAndUnsupportedModels) {
  EXPECT_EQ(map_reason(with_model("Nemotron-3-Nano (hybrid Mamba/MoE)")),
            "unknown model 'Nemotron-3-Nano (hybrid Mamba/MoE)'");
  EXPECT_EQ(map_reason(with_model("Nemotron-22B")), "unknown model 'Nemotron-22B'");
  EXPECT_EQ(map_ok(with_model("LLAMA2-7B")).model.ffn, 11008);  // a preset since the calibration rows
  EXPECT_NE(map_reason(with_model("Llama3-70B LoRA")).find("LoRA"), std::string::npos);
}

// ------------------------------------------------------------------ GPU and layout

TEST(CalibrationLayout, GpuIds) {
  const std::map<std::string, std::string> expected = {
      {"H100", "h100"}, {"H200", "h200"}, {"B200", "b200"},       {"GB200", "gb200"},
      {"A100", "a100"}, {"H100-96GB-500W", "h100-96gb"},          {"p5.48xlarge", "h100"},
  };
  for (const auto& [text, id] : expected) {
    CalibrationRow r = base_row();
    r.gpu = text;
    EXPECT_EQ(map_ok(r).plan.gpu, id) << text;
  }
  CalibrationRow r = base_row();
  r.gpu = "MI300X";
  EXPECT_EQ(map_reason(r), "unknown GPU 'MI300X'");
}

TEST(CalibrationLayout, SizesFromTheRow) {
  CalibrationRow r = base_row();
  r.num_gpus = 96;
  r.tp = 2;
  r.pp = 0;   // blank -> 1
  r.vp = 0;
  r.cp = 0;
  r.ep = 0;
  r.dp = 0;   // blank -> num_gpus / (tp*pp*cp)
  r.mbs = 0;  // not stated -> 1
  r.gbs = 192;
  r.seq_len = 4096;
  const recipe::Plan p = map_ok(r).plan;
  EXPECT_EQ(p.world, 96);
  EXPECT_EQ(p.gpus_per_node, 8);
  EXPECT_EQ(p.nodes, 12);
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.pp, 1);
  EXPECT_EQ(p.vp, 1);
  EXPECT_EQ(p.cp, 1);
  EXPECT_EQ(p.ep, 1);
  EXPECT_EQ(p.dp, 48);
  EXPECT_EQ(p.mbs, 1);
  EXPECT_EQ(p.gbs, 192);
  EXPECT_EQ(p.grad_accum, 4);
  EXPECT_EQ(p.seq_len, 4096);
  EXPECT_EQ(p.tokens_per_step, 192LL * 4096);
  EXPECT_EQ(p.framework, "bridge");
}

TEST(CalibrationLayout, PipelineMoeAndPartialNodes) {
  CalibrationRow r = base_row();
  r.model = "Qwen3-235B-A22B";
  r.num_gpus = 20;
  r.tp = 2;
  r.pp = 2;
  r.vp = 4;
  r.cp = 1;
  r.ep = 4;
  r.dp = 5;
  r.mbs = 2;
  r.gbs = 40;
  const recipe::Plan p = map_ok(r).plan;
  EXPECT_EQ(p.vp, 4);
  EXPECT_EQ(p.ep, 4);
  EXPECT_EQ(p.nodes, 3);
  EXPECT_EQ(p.grad_accum, 4);  // 40 / (mbs 2 * dp 5)
  r.pp = 1;  // virtual stages need a pipeline
  r.num_gpus = 10;
  EXPECT_EQ(map_ok(r).plan.vp, 1);
}

TEST(CalibrationLayout, InconsistentOrMissingSizesAreUnsupported) {
  CalibrationRow r = base_row();
  r.gbs = 0;
  EXPECT_EQ(map_reason(r), "no global batch size (gbs)");
  r = base_row();
  r.seq_len = 0;
  EXPECT_EQ(map_reason(r), "no sequence length (seq_len)");
  r = base_row();
  r.dp = 4;
  EXPECT_EQ(map_reason(r), "tp*pp*cp*dp = 4 does not match num_gpus 8");
  r = base_row();
  r.gbs = 100;
  EXPECT_EQ(map_reason(r), "gbs 100 is not a multiple of mbs*dp = 8");
}

// ------------------------------------------------------------------ precision, recompute, notes

TEST(CalibrationKnobs, Precision) {
  struct Case {
    const char* text;
    const char* precision;
    bool fp8;
  };
  const Case cases[] = {
      {"BF16 (inferred: MFU=TFLOPs/989)", "bf16", false}, {"FP16/BF16 mixed", "bf16", false},
      {"FP16 mixed", "fp16", false},                      {"FP8-CS", "fp8", true},
      {"FP8 (current scaling)", "fp8", true},             {"MXFP8", "mxfp8", true},
      {"FP8 presumed (no precision column)", "fp8", true},
  };
  for (const auto& c : cases) {
    CalibrationRow r = base_row();
    r.precision = c.text;
    const Workload w = map_ok(r);
    EXPECT_EQ(w.plan.precision, c.precision) << c.text;
    EXPECT_EQ(w.knobs.fp8, c.fp8) << c.text;
  }
  CalibrationRow r = base_row();
  r.precision = "FP8 (tensorwise, FSDP float8 all-gather)";
  EXPECT_TRUE(map_ok(r).knobs.fp8_param_gather);
  r.precision = "INT4";
  EXPECT_EQ(map_reason(r), "unknown precision 'INT4'");
}

TEST(CalibrationKnobs, Recompute) {
  struct Case {
    const char* text;
    const char* granularity;
    int layers;
  };
  const Case cases[] = {
      {"not stated", "none", 0},
      {"", "none", 0},
      {"none", "none", 0},
      {"recipe default", "none", 0},
      {"full", "full", 0},
      {"full, block, 5 layers (recipe llama3_workload_base_configs.py)", "full", 5},
      {"partial (4 layers)", "full", 4},
      {"selective (per-op SAC)", "selective", 0},
      {"selective: mla_up_proj, mlp", "selective", 0},
      {"recipe default (core_attn only; no full recompute in perf recipe)", "selective", 0},
  };
  for (const auto& c : cases) {
    CalibrationRow r = base_row();
    r.recompute = c.text;
    const Workload w = map_ok(r);
    EXPECT_EQ(w.knobs.recompute_granularity, c.granularity) << c.text;
    EXPECT_EQ(w.plan.recompute, c.granularity) << c.text;
    EXPECT_EQ(w.knobs.recompute_num_layers, c.layers) << c.text;
  }
  CalibrationRow r = base_row();
  r.recompute = "offloaded";
  EXPECT_EQ(map_reason(r), "unknown recompute 'offloaded'");
}

TEST(CalibrationKnobs, Notes) {
  const auto knobs_for = [](const std::string& notes, int dp = 8) {
    CalibrationRow r = base_row();
    r.notes = notes;
    r.dp = dp;
    r.num_gpus = dp;
    r.gbs = 16LL * dp;
    return map_ok(r);
  };
  EXPECT_TRUE(knobs_for("overlap-grad-reduce/param-gather/tp-comm-overlap on").knobs.tp_comm_overlap());
  EXPECT_TRUE(knobs_for("SP on, tp_comm_overlap (userbuffers fp8)").knobs.tp_comm_overlap());
  EXPECT_TRUE(knobs_for("FSDP 8 TP 8 PP 8, AsyncTP, 1F1B schedule").knobs.tp_comm_overlap());
  // A variant reported beside the measured run does not switch the knob.
  EXPECT_FALSE(knobs_for("FSDP 32 + TP 8, compile; with AsyncTP 876 tok/s").knobs.tp_comm_overlap());
  const Workload fsdp = knobs_for("FSDP + torch.compile", 32);
  EXPECT_EQ(fsdp.knobs.zero_stage, 3);
  EXPECT_EQ(fsdp.plan.dp_shard, 32);
  EXPECT_EQ(knobs_for("").knobs.zero_stage, 0);
  EXPECT_EQ(knobs_for("").plan.dp_shard, 0);
  EXPECT_TRUE(knobs_for("CUDA graphs on").knobs.cuda_graphs());
  EXPECT_TRUE(knobs_for("dropless; DeepEP dispatcher").knobs.deepep());
  EXPECT_TRUE(knobs_for("HybridEP dispatcher").knobs.deepep());
  EXPECT_TRUE(knobs_for("").knobs.is(Choice::Dispatcher, dispatcher::kAllToAll));
  EXPECT_TRUE(knobs_for("then PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True").knobs.expandable_segments());
}

TEST(CalibrationKnobs, FrameworkDefaultsAndInterleaving) {
  CalibrationRow r = base_row();
  r.source = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md";
  r.num_gpus = 64;
  r.tp = 8;
  r.pp = 8;
  r.dp = 1;
  r.gbs = 32;
  Workload w = map_ok(r);
  EXPECT_EQ(w.plan.framework, "torchtitan");
  EXPECT_EQ(w.knobs.zero_stage, 3);  // torchtitan's data parallelism is FSDP
  EXPECT_EQ(w.plan.dp_shard, 1);
  EXPECT_EQ(w.plan.vp, 1);
  r.notes = "Interleaved 1F1B schedule (virtual stages per rank not stated), 72.7 GiB";
  w = map_ok(r);
  EXPECT_EQ(w.plan.vp, 2);  // the smallest interleaving
  r.vp = 4;
  EXPECT_EQ(map_ok(r).plan.vp, 4);  // a stated count wins
  const auto result = calibrate({r}, [](const Workload&, std::string&) -> std::optional<double> { return 1; });
  EXPECT_EQ(to_json(result)["per_row"][0]["layout"], "tp8 pp8 vp4 cp1 ep1 dp1 mbs1 gbs32 s8192");
}

TEST(CalibrationKnobs, SequenceParallelOffForPapersThatPredateIt) {
  CalibrationRow r = base_row();
  r.source = "Korthikanti et al. 2022 (arXiv 2205.05198) Table 5";
  r.recompute = "full";
  EXPECT_FALSE(map_ok(r).knobs.sequence_parallel);
  r.recompute = "selective + SP (present work)";
  EXPECT_TRUE(map_ok(r).knobs.sequence_parallel);
  EXPECT_TRUE(map_ok(base_row()).knobs.sequence_parallel);
}

// ------------------------------------------------------------------ scoring

// A row keyed by its global batch, so the fake predictor can tell rows apart.
CalibrationRow scored_row(const std::string& model, const std::string& gpu, long long gbs, double measured) {
  CalibrationRow r = base_row();
  r.line = static_cast<int>(gbs) + 1;
  r.model = model;
  r.gpu = gpu;
  r.num_gpus = 1;
  r.dp = 1;
  r.gbs = gbs;
  r.seq_len = 4096;
  r.tokens_per_s_per_gpu = measured;
  return r;
}

TEST(CalibrationScore, StatisticsByHand) {
  // gbs -> predicted tokens/s/GPU.
  const std::map<long long, double> predicted = {
      // llama3-8b | h100: measured 100..400, predicted with a tie -> rho = 3/sqrt(10).
      {1, 110}, {2, 150}, {3, 150}, {4, 500},
      // llama3-8b | b200: ranking reversed -> rho = -1.
      {5, 30}, {6, 20}, {7, 10},
      // llama3-70b | h100: measured all equal -> no rank correlation, group skipped.
      {8, 55}, {9, 45}, {10, 50},
  };
  std::vector<CalibrationRow> rows = {
      scored_row("Llama3-8B", "H100", 1, 100),      scored_row("LLAMA3-8B", "H100", 2, 200),
      scored_row("Llama3.1-8B", "H100", 3, 300),    scored_row("Llama 3 8B", "H100", 4, 400),
      scored_row("Llama3-8B", "B200", 5, 10),       scored_row("Llama3-8B", "B200", 6, 20),
      scored_row("Llama3-8B", "B200", 7, 30),       scored_row("Llama3-70B", "H100", 8, 50),
      scored_row("Llama3-70B", "H100", 9, 50),      scored_row("Llama3-70B SFT", "H100", 10, 50),
      scored_row("Llama3-8B", "H100", 11, 100),     // predictor declines
      scored_row("Nemotron-22B", "H100", 12, 100),  // unknown model
      scored_row("Llama3-8B", "H100", 13, 0),       // nothing measured
  };
  const Predictor predict = [&](const Workload& w, std::string& reason) -> std::optional<double> {
    auto it = predicted.find(w.plan.gbs);
    if (it == predicted.end()) {
      reason = "predicted OOM";
      return std::nullopt;
    }
    return it->second;
  };
  const CalibrationResult result = calibrate(rows, predict);
  ASSERT_EQ(result.rows.size(), rows.size());
  EXPECT_EQ(result.supported, 10);
  EXPECT_EQ(result.excluded, 3);
  EXPECT_NEAR(result.rows[0].error, 0.10, 1e-12);
  EXPECT_NEAR(result.rows[1].error, -0.25, 1e-12);
  EXPECT_NEAR(result.rows[4].error, 2.0, 1e-12);
  EXPECT_EQ(result.rows[0].group, "llama3-8b | h100");
  EXPECT_EQ(result.rows[4].group, "llama3-8b | b200");
  EXPECT_EQ(result.rows[10].reason, "predicted OOM");
  EXPECT_EQ(result.rows[11].reason, "unknown model 'Nemotron-22B'");
  EXPECT_EQ(result.rows[12].reason, "no measured tokens/s/GPU");
  // |error| sorted: 0 0 .1 .1 .1 .25 .25 .5 .667 2 -> median (.1+.25)/2, p90 = 9th of 10.
  EXPECT_NEAR(result.median_abs_error, 0.175, 1e-12);
  EXPECT_NEAR(result.p90_abs_error, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(result.spearman_groups, 2);
  EXPECT_NEAR(result.spearman, (3.0 / std::sqrt(10.0) - 1.0) / 2.0, 1e-12);
}

TEST(CalibrationScore, OddCountMedianAndSmallGroups) {
  std::vector<CalibrationRow> rows = {
      scored_row("Llama3-8B", "H100", 1, 100),
      scored_row("Llama3-8B", "H100", 2, 100),
      scored_row("Llama3-8B", "B200", 3, 100),
  };
  const std::map<long long, double> predicted = {{1, 130}, {2, 90}, {3, 200}};
  const CalibrationResult result = calibrate(rows, [&](const Workload& w, std::string&) -> std::optional<double> {
    return predicted.at(w.plan.gbs);
  });
  EXPECT_NEAR(result.median_abs_error, 0.3, 1e-12);  // .1 .3 1
  EXPECT_NEAR(result.p90_abs_error, 1.0, 1e-12);     // ceil(2.7) = 3rd
  EXPECT_EQ(result.spearman_groups, 0);             // no group of 3
  EXPECT_EQ(result.spearman, 0);
}

TEST(CalibrationScore, Json) {
  std::vector<CalibrationRow> rows = {scored_row("Llama3-8B", "H100", 3, 100),
                                      scored_row("Mystery-9B", "H100", 4, 100)};
  const auto result = calibrate(rows, [](const Workload&, std::string&) -> std::optional<double> { return 120; });
  const nlohmann::json j = to_json(result);
  EXPECT_EQ(j["rows"], 2);
  EXPECT_EQ(j["supported"], 1);
  EXPECT_EQ(j["excluded"], 1);
  EXPECT_EQ(j["spearman_groups"], 0);
  ASSERT_EQ(j["per_row"].size(), 1u);
  const auto& row = j["per_row"][0];
  EXPECT_EQ(row["line"], 4);
  EXPECT_EQ(row["model"], "Llama3-8B");
  EXPECT_EQ(row["gpu"], "H100");
  EXPECT_EQ(row["layout"], "tp1 pp1 cp1 ep1 dp1 mbs1 gbs3 s4096");
  EXPECT_DOUBLE_EQ(row["measured"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(row["predicted"].get<double>(), 120);
  EXPECT_NEAR(row["error"].get<double>(), 0.2, 1e-12);
  ASSERT_EQ(j["excluded_rows"].size(), 1u);
  EXPECT_EQ(j["excluded_rows"][0]["line"], 5);
  EXPECT_EQ(j["excluded_rows"][0]["reason"], "unknown model 'Mystery-9B'");
  for (const char* key : {"median_abs_error", "p90_abs_error", "spearman"}) EXPECT_TRUE(j.contains(key)) << key;
}

// ------------------------------------------------------------------ corpus

// The published measurements (third-party, not in the repository).
std::string corpus_csv() {
  const char* env = std::getenv("ATTUNE_CORPUS");
  if (!env || !*env) return "";
  const fs::path p = fs::path(env) / "calibration" / "throughput.csv";
  return fs::is_regular_file(p) ? p.string() : "";
}

// Rows of throughput.csv that map to a Workload today. Those that do not are
// models without a preset (GPT-3 5B/20B/175B, Llama 2, Nemotron), LoRA and the
// PTD-P 1T row whose name gives no head count; adding presets raises this.
constexpr int kCorpusMapped = 61;

TEST(CalibrationCorpus, EveryRowParsesAndMostMap) {
  const std::string path = corpus_csv();
  if (path.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  const auto rows = read_calibration_csv(path);
  ASSERT_EQ(rows.size(), 79u);
  int mapped = 0;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.model.empty()) << "line " << row.line;
    EXPECT_GT(row.num_gpus, 0) << "line " << row.line;
    std::string reason;
    if (workload_from_row(row, reason)) {
      ++mapped;
    } else {
      std::cout << "  unmapped line " << row.line << ": " << row.model << " on " << row.gpu << ": " << reason
                << "\n";
    }
  }
  std::cout << "  " << mapped << " of " << rows.size() << " rows map to a Workload\n";
  EXPECT_GE(mapped, kCorpusMapped);

  // Scoring the whole file runs end to end; rows without a measured tokens/s
  // (long-sequence and PTD-P rows report TFLOP/s only) are excluded.
  const auto result = calibrate(rows, [](const Workload&, std::string&) -> std::optional<double> { return 1000; });
  EXPECT_EQ(result.supported + result.excluded, 79);
  EXPECT_GT(result.supported, 0);
  EXPECT_EQ(to_json(result)["per_row"].size(), static_cast<size_t>(result.supported));
}

}  // namespace
}  // namespace attune::sim
