// Benchmark: one correctness-gate check of a candidate against its original
// (target: under 2 ms). The recipes are loaded once; the check compares the
// files' settings, judges every changed key and recomputes the invariants.
// Run: ./build/bench/gate_check_bench
#include <benchmark/benchmark.h>

#include <string>

#include "attune/gate/correctness_gate.h"
#include "attune/util/file.h"

namespace {

using attune::recipe::Recipe;

void check(benchmark::State& state, const std::string& file, const std::string& lever, const std::string& value,
           int nodes) {
  attune::recipe::RecipeOptions o;
  o.hardware.nodes = nodes;
  Recipe original = Recipe::load(std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/" + file, o);
  Recipe candidate = original;
  candidate.set(lever, value);
  candidate.document().set(candidate.adapter().doc_key(candidate, "env.NCCL_NVLS_ENABLE"),
                           attune::recipe::Value::parse("0"));
  attune::gate::CorrectnessGate gate;
  for (auto _ : state) {
    attune::gate::Verdict v = gate.check(original, candidate);
    benchmark::DoNotOptimize(v.allowed);
  }
}

void check_refused(benchmark::State& state) {
  Recipe original = Recipe::load(std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/megatron_llama3_8b.sh");
  Recipe candidate = original;
  candidate.document().set("--lr", attune::recipe::Value::parse("1e-3"));
  candidate.document().set("--global-batch-size", attune::recipe::Value::parse("512"));
  attune::gate::CorrectnessGate gate;
  for (auto _ : state) {
    attune::gate::Verdict v = gate.check(original, candidate);
    benchmark::DoNotOptimize(v.allowed);
  }
}

}  // namespace

BENCHMARK_CAPTURE(check, megatron_tp, std::string("megatron_llama3_8b.sh"), std::string("tp"), std::string("1"), 0)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(check, torchtitan_tp, std::string("torchtitan_llama3_8b.toml"), std::string("tp"), std::string("2"), 2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(check, hyperpod_tp, std::string("hyperpod_hf_llama3_8b.yaml"), std::string("tp"), std::string("1"), 0)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(check, automodel_mbs, std::string("automodel_llama3_8b_pretrain.yaml"), std::string("mbs"),
                  std::string("4"), 0)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(check_refused)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
