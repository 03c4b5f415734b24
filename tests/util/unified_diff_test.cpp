#include "attune/util/unified_diff.h"

#include <gtest/gtest.h>

namespace attune {
namespace {

TEST(UnifiedDiff, EqualTextsHaveNoDiff) { EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "a", "b"), ""); }

TEST(UnifiedDiff, OneChangedLineWithThreeLinesOfContext) {
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n", after = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
  EXPECT_EQ(unified_diff(before, after, "a/x", "b/x"),
            "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, DistantChangesMakeTwoHunksAndAMissingNewlineIsMarked) {
  std::string before, after;
  for (int i = 1; i <= 20; ++i) {
    before += std::to_string(i) + "\n";
    after += (i == 2 ? std::string("two") : std::to_string(i)) + "\n";
  }
  after += "21";
  const std::string d = unified_diff(before, after, "a", "b");
  EXPECT_NE(d.find("@@ -1,5 +1,5 @@"), std::string::npos) << d;
  EXPECT_NE(d.find("@@ -18,3 +18,4 @@"), std::string::npos) << d;
  EXPECT_NE(d.find("+21\n\\ No newline at end of file\n"), std::string::npos) << d;
}

TEST(UnifiedDiff, InsertionIntoAnEmptyFile) {
  EXPECT_EQ(unified_diff("", "x\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
}

}  // namespace
}  // namespace attune
