// Benchmark: loading a recipe and computing its plan (target: under 5 ms).
// Run: ./build/bench/recipe_load_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "attune/recipe/recipe.h"
#include "attune/util/file.h"

namespace {

void load_and_plan(benchmark::State& state, const std::string& name) {
  std::string path = std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/" + name;
  std::string text = attune::read_file(path);
  for (auto _ : state) {
    attune::recipe::Recipe r = attune::recipe::Recipe::from_text(path, text);
    attune::recipe::Plan p = r.plan();
    benchmark::DoNotOptimize(p.gbs);
  }
}

void set_lever(benchmark::State& state) {
  std::string path = std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/megatron_llama3_8b.sh";
  std::string text = attune::read_file(path);
  for (auto _ : state) {
    attune::recipe::Recipe r = attune::recipe::Recipe::from_text(path, text);
    auto e = r.set("tp", "1");
    benchmark::DoNotOptimize(e.after.dp);
  }
}

// Every recipe of $ATTUNE_CORPUS/recipes, loaded and planned once per
// iteration; the figure divided by the file count is the mean per recipe.
void load_and_plan_corpus(benchmark::State& state) {
  const char* corpus = std::getenv("ATTUNE_CORPUS");
  if (!corpus) {
    state.SkipWithError("ATTUNE_CORPUS not set");
    return;
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(corpus) + "/recipes")) {
    if (!e.is_regular_file()) continue;
    std::string path = e.path().string();
    try {
      std::string text = attune::read_file(path);
      attune::recipe::Recipe::from_text(path, text);
      files.emplace_back(path, text);
    } catch (const std::exception&) {
      // not a recipe: skipped
    }
  }
  for (auto _ : state) {
    for (const auto& [path, text] : files) {
      attune::recipe::Recipe r = attune::recipe::Recipe::from_text(path, text);
      benchmark::DoNotOptimize(r.plan().gbs);
    }
  }
  state.counters["recipes"] = static_cast<double>(files.size());
}

}  // namespace

BENCHMARK(load_and_plan_corpus)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_and_plan, megatron_script, std::string("megatron_llama3_8b.sh"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_and_plan, torchtitan_toml, std::string("torchtitan_llama3_8b.toml"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_and_plan, automodel_yaml, std::string("automodel_llama3_8b_pretrain.yaml"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_and_plan, hyperpod_yaml, std::string("hyperpod_hf_llama3_8b.yaml"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_and_plan, axolotl_yaml, std::string("axolotl_llama3_8b_fsdp.yaml"))->Unit(benchmark::kMillisecond);
BENCHMARK(set_lever)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
