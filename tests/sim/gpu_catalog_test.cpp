// One GPU catalog: the simulator's GpuSystem takes its peaks and usable HBM
// from recipe::gpu_spec, so the simulator (what fits, step times) and the
// diagnoser (HBM headroom, MFU) agree for every GPU type attune knows.
#include "attune/sim/gpu_system.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "attune/diagnose/diagnosis.h"
#include "attune/recipe/hardware.h"

namespace attune::sim {
namespace {

TEST(GpuCatalog, TheSimulatorReadsTheRecipeCatalog) {
  ASSERT_EQ(gpu_systems().size(), recipe::gpu_specs().size());
  std::set<std::string> names;
  for (const recipe::GpuSpec& spec : recipe::gpu_specs()) {
    names.insert(spec.name);
    const GpuSystem* g = find_gpu_system(spec.name);
    ASSERT_NE(g, nullptr) << spec.name;
    EXPECT_EQ(g->id, spec.name);
    EXPECT_EQ(g->hbm_gib, spec.hbm_gib) << spec.name;
    EXPECT_EQ(g->bf16_tflops, spec.bf16_tflops) << spec.name;
    EXPECT_EQ(g->fp8_tflops, spec.fp8_tflops) << spec.name;
    EXPECT_GT(spec.hbm_gib, 0) << spec.name;
    EXPECT_GT(spec.bf16_tflops, 0) << spec.name;
    EXPECT_EQ(recipe::gpu_spec(spec.name), &spec);
  }
  EXPECT_EQ(names.size(), recipe::gpu_specs().size());  // no name twice
  EXPECT_TRUE(names.count("a100"));
}

TEST(GpuCatalog, SpellingsFindTheSameEntryInBoth) {
  for (const char* text : {"H100", "h100-sxm", "p5.48xlarge", "ml.p5e.48xlarge", "B200", "H100-96GB", "GB200"}) {
    const recipe::GpuSpec* spec = recipe::gpu_spec(text);
    const GpuSystem* g = find_gpu_system(text);
    ASSERT_NE(spec, nullptr) << text;
    ASSERT_NE(g, nullptr) << text;
    EXPECT_EQ(g->id, spec->name) << text;
  }
  EXPECT_EQ(recipe::gpu_spec("h100")->hbm_gib, 79.1);  // usable, not the marketed 80 GB as 10^9 bytes
  EXPECT_EQ(recipe::gpu_spec("tpu"), nullptr);
  EXPECT_EQ(find_gpu_system("tpu"), nullptr);
}

// The diagnoser's capacity and peak for a log on each GPU are the simulator's.
TEST(GpuCatalog, TheDiagnoserHeadroomUsesTheSameHbm) {
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / ("attune_gpu_catalog_" + std::to_string(::getpid()) + ".log");
  {
    std::ofstream out(log);
    for (int n = 1; n <= 3; ++n)
      out << " [2026-11-30 10:00:0" << n << "] iteration        " << n
          << "/     100 | consumed samples:          128 | elapsed time per iteration (ms): 1234.5 | learning rate: "
             "3.000000E-04 | global batch size:   128 | lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: 1.000 "
             "| number of skipped iterations:   0 | number of nan iterations:   0 |\n"
          << "[Rank 0] (after " << n
          << " iterations) memory (MB) | allocated: 20480.00 | max allocated: 40960.00 | reserved: 51200.00 | max "
             "reserved: 51200.00\n";
  }
  for (const GpuSystem& g : gpu_systems()) {
    diagnose::DiagnoseOptions o;
    o.framework = "megatron";
    o.gpu = g.id;
    const diagnose::Diagnosis d = diagnose::diagnose_logs({log.string()}, o);
    ASSERT_TRUE(d.capacity_gib.has_value()) << g.id;
    EXPECT_EQ(*d.capacity_gib, g.hbm_gib) << g.id;
    ASSERT_TRUE(d.peak_tflops.has_value()) << g.id;
    EXPECT_EQ(*d.peak_tflops, g.bf16_tflops) << g.id;
    ASSERT_TRUE(d.headroom_gib.has_value()) << g.id;
    EXPECT_NEAR(*d.headroom_gib, g.hbm_gib - 50.0, 1e-9) << g.id;  // 51200 MB reserved is 50 GiB
  }
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace attune::sim
