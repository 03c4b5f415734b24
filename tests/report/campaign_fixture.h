// A small campaign directory written by hand, as `attune tune` lays one out:
// a baseline of two runs, a failed trial (an OOM whose evidence holds markup),
// an accepted trial proposed by an LLM (tool calls with their rationale) whose
// log gave no memory figure, a trial the gate refused, the verification, the
// summary and best/. Tests damage it as they need.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace attune::test {

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline nlohmann::json run_finished(int trial, int run, const char* purpose, bool ok, double tokens,
                                   const nlohmann::json& peak, const char* failure = "", const char* evidence = "") {
  nlohmann::json blocks = ok ? nlohmann::json::array({tokens * 0.99, tokens, tokens * 1.01, tokens}) : nlohmann::json::array();
  return {{"event", "run_finished"}, {"trial", trial}, {"run", run}, {"purpose", purpose}, {"gpu_hours", 1.0},
          {"measurement",
           {{"ok", ok}, {"tokens_per_s_per_gpu", ok ? tokens : 0.0}, {"blocks", blocks}, {"peak_reserved_gib", peak},
            {"failure", failure}, {"evidence", evidence}, {"state", ok ? "completed" : "failed"}}}};
}

// Writes the campaign under `dir`; returns the journal's text.
inline std::string write_campaign_fixture(const std::filesystem::path& dir) {
  using nlohmann::json;
  const json exchanges = json::array(
      {{{"user", "state"}},
       {{"assistant",
         {{"text", "TP communication is exposed."},
          {"tool_calls", json::array({{{"id", "c1"}, {"name", "predict"}, {"arguments", {{"lever_or_key", "tp"}, {"value", "1"}}}},
                                      {{"id", "c2"},
                                       {"name", "propose"},
                                       {"arguments", json({{"lever_or_key", "tp"}, {"value", "1"},
                                                           {"rationale", "halve TP: <b>all-reduce</b> & \"gathers\" exposed"},
                                                           {"expected_effect", "+20%"}})
                                                         .dump()}}})}}}}});
  const json events = json::array({
      {{"event", "campaign"}, {"inputs", {{"policy", "hybrid"}, {"cluster", "sim"}, {"seed", 7}, {"version", "0.1.0"}}}},
      run_finished(0, 1, "baseline", true, 1000, 40.0),
      run_finished(0, 2, "baseline", true, 1010, 41.0),
      {{"event", "trial"}, {"trial", 0}, {"outcome", "baseline"}, {"failure", ""}, {"reason", ""}, {"tokens_per_s_per_gpu", 1005.0}},
      {{"event", "proposal"}, {"trial", 1}, {"parent", 0},
       {"proposal", {{"changes", json::array({{{"dimension", "mbs"}, {"from", "1"}, {"to", "4"}}})}, {"rule", "fit.mbs"}}}},
      run_finished(1, 1, "screen", false, 0, nullptr, "oom", "torch.OutOfMemoryError: <script>alert(1)</script> 80.00 GiB"),
      {{"event", "trial"}, {"trial", 1}, {"outcome", "failed"}, {"failure", "oom"},
       {"reason", "torch.OutOfMemoryError: <script>alert(1)</script> 80.00 GiB"}, {"tokens_per_s_per_gpu", nullptr}},
      {{"event", "proposal"}, {"trial", 2}, {"parent", 0},
       {"proposal", {{"changes", json::array({{{"dimension", "tp"}, {"from", "2"}, {"to", "1"}}})}}},
       {"policy", {{"llm", {{"provider", "openai"}, {"model", "gpt-4o"}, {"exchanges", exchanges}}}}}},
      run_finished(2, 1, "screen", true, 1300, nullptr),
      {{"event", "verdict"}, {"trial", 2}, {"against", 0}, {"verdict", {{"decision", "confirm"}, {"why", "may win"}}}},
      run_finished(2, 2, "confirm", true, 1310, nullptr),
      {{"event", "verdict"}, {"trial", 2}, {"against", 0}, {"verdict", {{"decision", "accept"}, {"why", "+30% > 2% and U-test p = 0.001 < 0.05"}}}},
      {{"event", "trial"}, {"trial", 2}, {"outcome", "accepted"}, {"failure", ""}, {"reason", "+30%"}, {"tokens_per_s_per_gpu", 1305.0}},
      {{"event", "proposal"}, {"trial", 3}, {"parent", 2},
       {"proposal", {{"changes", json::array({{{"dimension", "fp8"}, {"from", "false"}, {"to", "true"}}})}}}},
      {{"event", "trial"}, {"trial", 3}, {"outcome", "refused"}, {"failure", ""}, {"reason", "fp8 changes numerics | needs --allow fp8"}},
      run_finished(2, 3, "verify", true, 1305, nullptr),
      {{"event", "verification"}, {"trial", 2}, {"loss", {{"suspect", false}, {"difference", 0.001}, {"allowed", 0.01}, {"steps", 50}}}},
  });
  std::string journal;
  for (const json& e : events) journal += e.dump() + "\n";
  const json summary = {{"baseline", {{"tokens_per_s_per_gpu", 1005.0}}},
                        {"best", {{"tokens_per_s_per_gpu", 1305.0}, {"trial", 2},
                                  {"edits", json::array({{{"lever", "tp"}, {"from", "2"}, {"to", "1"}}})},
                                  {"changes", json::array({"tensor_parallel_size: 2 -> 1"})}}},
                        {"gain", 0.2985}, {"gpu_hours", 6.0}, {"budget_gpu_hours", 50.0}, {"policy", "hybrid"},
                        {"cluster", "sim"}, {"trials", 3}, {"stop_reason", "--max-trials 3 reached"},
                        {"verification", "passed (mean loss difference 0.001 over 50 steps)"}};
  write_text(dir / "journal.jsonl", journal);
  write_text(dir / "summary.json", summary.dump(2));
  const std::string original = "tensor_parallel_size: 2\nmicro_batch_size: 1\n";
  const std::string tuned = "tensor_parallel_size: 1\nmicro_batch_size: 1\n";
  write_text(dir / "best/train.yaml", tuned);
  write_text(dir / "best/train.yaml.diff",
             "--- a/train.yaml\n+++ b/train.yaml\n@@ -1,2 +1,2 @@\n-tensor_parallel_size: 2\n+tensor_parallel_size: 1\n micro_batch_size: 1\n");
  const std::string wrapper = "framework: axolotl\nconfig: train.yaml\nmodel: llama3-8b\nhardware:\n  gpu: h100\n  nodes: 2\n  gpus_per_node: 8\n";
  for (const char* run : {"trials/0000-baseline/run-1", "trials/0000-baseline/run-2"}) {
    write_text(dir / run / "train.yaml", original);
    write_text(dir / run / "train.attune.yaml", wrapper);
    write_text(dir / run / "run.log", std::string("step 1 loss 10.9 from ") + run + "\n");
    write_text(dir / run / "diagnosis.json", R"({"framework":"hf","memory":{"capacity_gib":79.1,"peak_reserved_gib":null}})");
  }
  write_text(dir / "trials/0001-mbs/run-1/run.log", "torch.OutOfMemoryError\n");
  for (const char* run : {"trials/0002-tp/run-1", "trials/0002-tp/run-2", "trials/0002-tp/run-3"}) {
    write_text(dir / run / "run.log", std::string("step 1 loss 10.9 from ") + run + "\n");
  }
  return journal;
}

}  // namespace attune::test
