#include "../../src/diagnose/parsers/parse_util.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace attune::diagnose::detail {
namespace {

double reference(std::string_view s) {
  double v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

TEST(ToDouble, FastPathGivesExactlyWhatFromCharsGives) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mantissa(0.0, 10.0);
  std::uniform_int_distribution<int> exponent(-30, 30), precision(0, 16);
  char buf[64];
  for (int i = 0; i < 20000; ++i) {
    const double x = mantissa(rng) * std::pow(10.0, exponent(rng));
    const int p = precision(rng);
    const char* fmt = i % 3 == 0 ? "%.*E" : (i % 3 == 1 ? "%.*f" : "%.*g");
    const int n = std::snprintf(buf, sizeof buf, fmt, p, x);
    const std::string_view text(buf, static_cast<std::size_t>(n));
    auto v = to_double(text);
    ASSERT_TRUE(v) << text;
    ASSERT_EQ(*v, reference(text)) << text;
  }
}

TEST(ToDouble, LogSpellings) {
  EXPECT_EQ(*to_double("  2.345678E+00 |"), 2.345678);
  EXPECT_EQ(*to_double("+1.5"), 1.5);
  EXPECT_EQ(*to_double("-0.000123"), -0.000123);
  EXPECT_EQ(*to_double("3.000000E-04"), 3e-4);
  EXPECT_EQ(*to_double("128"), 128.0);
  EXPECT_EQ(*to_double("1."), 1.0);
  EXPECT_EQ(*to_double(".5"), 0.5);
  EXPECT_EQ(*to_double("1e5x"), 1e5);
  EXPECT_EQ(*to_double("7e"), 7.0);                      // no exponent digits: the number ends before 'e'
  EXPECT_EQ(*to_double("12345678901234567890"), 12345678901234567890.0);  // too long for the fast path
  EXPECT_EQ(*to_double("1e300"), 1e300);
  EXPECT_TRUE(std::isnan(*to_double("nan")));
  EXPECT_TRUE(std::isinf(*to_double("inf")));
  EXPECT_FALSE(to_double("."));
  EXPECT_FALSE(to_double("-"));
  EXPECT_FALSE(to_double("abc"));
  EXPECT_FALSE(to_double(""));
}

}  // namespace
}  // namespace attune::diagnose::detail
