// Corpus test: the real PyTorch profiler (Kineto) trace excerpt from
// DeepSeek's EP64 training run under $ATTUNE_CORPUS/profiles (third-party
// data, not in the repository). Its 11 events: one per category (cpu_op,
// user_annotation ProfilerStep#1, cuda_runtime, ac2g flow, cuda_driver,
// Trace span, metadata) and four GPU activities on device 0:
//   per_token_cast_to_fp8 kernel   ts ...471346 µs, dur 52    (compute)
//   Memcpy DtoD                    ts ...476346,    dur 1     (memory)
//   Memset                         ts ...476569,    dur 0     (memory)
//   dpsk::ep::internode::combine   ts ...483541,    dur 6549  (DeepEP: communication)
// window 471346 → 490090 = 18744 µs; busy 52 + 1 + 6549 = 6602 → idle 12142;
// nothing overlaps, so all 6549 µs of communication are exposed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "attune/diagnose/profile.h"

namespace attune::diagnose {
namespace {

constexpr double kUs = 1e-6;

std::string excerpt_path() {
  const char* env = std::getenv("ATTUNE_CORPUS");
  if (env == nullptr || *env == '\0') return "";
  return (std::filesystem::path(env) / "profiles" / "pytorch-kineto-trace-excerpt-deepseek-train.json").string();
}

TEST(ProfileCorpus, DeepSeekKinetoExcerpt) {
  const std::string path = excerpt_path();
  if (path.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const ProfileSummary p = read_profile(path);
  EXPECT_EQ(p.source, "chrome_trace");
  EXPECT_EQ(p.devices, 1);
  EXPECT_EQ(p.steps, 1);
  EXPECT_EQ(p.kernel_launches, 4);
  EXPECT_NEAR(p.window_s.value_or(0), 18744 * kUs, 1e-9);
  EXPECT_NEAR(p.compute_s, 52 * kUs, 1e-9);
  EXPECT_NEAR(p.communication_s, 6549 * kUs, 1e-9);
  EXPECT_NEAR(p.memory_s, 1 * kUs, 1e-9);
  EXPECT_NEAR(p.exposed_communication_s.value_or(0), 6549 * kUs, 1e-9);
  EXPECT_NEAR(p.idle_s.value_or(0), 12142 * kUs, 1e-9);
  EXPECT_NEAR(p.overlap_pct.value_or(-1), 0, 1e-9);
  EXPECT_NEAR(p.summed_kernel_s, 6602 * kUs, 1e-9);
  ASSERT_EQ(p.top_kernels.size(), 4u);
  EXPECT_NE(p.top_kernels[0].name.find("dpsk::ep::internode::combine"), std::string::npos);
  EXPECT_EQ(p.top_kernels[0].kind, "communication");
  EXPECT_EQ(p.top_kernels[0].count, 1);
  EXPECT_NEAR(p.top_kernels[0].share, 6549.0 / 6602, 1e-9);
  EXPECT_NE(p.top_kernels[1].name.find("per_token_cast_to_fp8"), std::string::npos);
  EXPECT_EQ(p.top_kernels[1].kind, "compute");
  EXPECT_EQ(p.top_kernels[2].name, "Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(p.top_kernels[2].kind, "memory");
  EXPECT_EQ(p.top_kernels[3].name, "Memset (Device)");
  EXPECT_EQ(p.top_kernels[3].kind, "memory");
}

}  // namespace
}  // namespace attune::diagnose
