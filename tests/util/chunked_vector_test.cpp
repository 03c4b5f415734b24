#include "attune/util/chunked_vector.h"

#include <gtest/gtest.h>

#include <string>

namespace attune {
namespace {

TEST(ChunkedVector, KeepsOrderAcrossChunksAndNeverMovesElements) {
  ChunkedVector<long> v;
  // Chunks of 16, 32, ... up to 4 MiB (524288 longs): 1.2 M spans the
  // growing chunks and three of the largest.
  const long n = 1200000;
  for (long i = 0; i < n; ++i) v.push_back(i * 3);
  const long* first = &v[0];
  v.push_back(-1);
  EXPECT_EQ(&v[0], first);  // growth never relocates
  ASSERT_EQ(v.size(), static_cast<std::size_t>(n + 1));
  for (long i : {0L, 15L, 16L, 47L, 48L, 524271L, 524272L, 1048559L, 1048560L, n - 1}) EXPECT_EQ(v[i], i * 3) << i;
  EXPECT_EQ(v.back(), -1);
  long sum = 0, count = 0;
  for (long x : v) {
    sum += x;
    ++count;
  }
  EXPECT_EQ(count, n + 1);
  EXPECT_EQ(sum, 3 * (n - 1) * n / 2 - 1);
}

TEST(ChunkedVector, OwnsNonTrivialElementsAndCopiesAndMoves) {
  ChunkedVector<std::string> v = {"a", "bb"};
  v.push_back(std::string(100, 'x'));  // heap-allocated: ASan sees a leak if not destroyed
  ChunkedVector<std::string> copy = v;
  ChunkedVector<std::string> moved = std::move(v);
  EXPECT_TRUE(v.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  ASSERT_EQ(copy.size(), 3u);
  ASSERT_EQ(moved.size(), 3u);
  EXPECT_EQ(copy[1], "bb");
  EXPECT_EQ(moved.back(), std::string(100, 'x'));
  copy = moved;
  EXPECT_EQ(copy.front(), "a");
}

}  // namespace
}  // namespace attune
