#include "attune/util/compact_optional.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace attune {
namespace {

TEST(CompactOptional, IsTheSizeOfTheBareValue) {
  static_assert(sizeof(CompactOptional<float>) == sizeof(float));
  static_assert(sizeof(CompactOptional<double>) == sizeof(double));
  static_assert(sizeof(CompactOptional<int>) == sizeof(int));
}

TEST(CompactOptional, EmptyUntilSetAndAfterReset) {
  CompactOptional<float> f;
  EXPECT_FALSE(f);
  EXPECT_EQ(f.value_or(7.0f), 7.0f);
  f = 2.5;
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, 2.5f);
  f.reset();
  EXPECT_FALSE(f.has_value());
  f = std::optional<double>(1.25);
  EXPECT_EQ(*f, 1.25f);
  f = std::optional<double>();
  EXPECT_FALSE(f);
  f = std::nullopt;
  EXPECT_FALSE(f.to_optional());
}

TEST(CompactOptional, NanAndInfinityAreValuesNotEmpty) {
  CompactOptional<double> d = std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(d);
  EXPECT_TRUE(std::isnan(*d));
  CompactOptional<float> f = -std::numeric_limits<double>::infinity();
  ASSERT_TRUE(f);
  EXPECT_TRUE(std::isinf(*f));
  // A NaN carrying the very payload used for "empty" is stored as a plain NaN.
  CompactOptional<double> sneaky = std::bit_cast<double>(std::uint64_t{0x7FF4A77E0DEADBEEull});
  EXPECT_TRUE(sneaky);
}

TEST(CompactOptional, IntegersClampAwayFromTheEmptyPattern) {
  CompactOptional<int> i = 128L;
  EXPECT_EQ(*i, 128);
  i = std::numeric_limits<long>::min();
  ASSERT_TRUE(i);
  EXPECT_EQ(*i, std::numeric_limits<int>::min() + 1);
  i = 1e12;
  EXPECT_EQ(*i, std::numeric_limits<int>::max());
  i = std::optional<long>();
  EXPECT_FALSE(i);
}

}  // namespace
}  // namespace attune
