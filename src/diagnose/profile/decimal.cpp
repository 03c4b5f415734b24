#include "decimal.h"

#include <limits>

namespace attune::diagnose::profile {
namespace {

constexpr std::uint64_t kMantissaLimit = 1'000'000'000'000'000'000ull;  // 1e18: 19 digits fit in uint64
constexpr int kExponentCap = 10'000;  // beyond this every result under/overflows anyway

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Decimal {
  std::uint64_t mantissa = 0;
  int exp10 = 0;
  bool negative = false;
};

// Digits beyond 19 significant ones only move the decimal exponent.
void take_digit(Decimal& d, char c, bool fraction) {
  if (d.mantissa < kMantissaLimit) {
    d.mantissa = d.mantissa * 10 + static_cast<std::uint64_t>(c - '0');
    if (fraction) --d.exp10;
  } else if (!fraction) {
    ++d.exp10;
  }
}

std::optional<Decimal> parse_decimal(std::string_view s) {
  Decimal d;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.negative = s[i++] == '-';
  std::size_t digits = 0;
  for (; i < s.size() && is_digit(s[i]); ++i, ++digits) take_digit(d, s[i], false);
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && is_digit(s[i]); ++i, ++digits) take_digit(d, s[i], true);
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg_exp = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg_exp = s[i++] == '-';
    int e = 0;
    const std::size_t first = i;
    for (; i < s.size() && is_digit(s[i]); ++i) e = e < kExponentCap ? e * 10 + (s[i] - '0') : e;
    if (i == first) return std::nullopt;
    d.exp10 += neg_exp ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  return d;
}

std::optional<std::int64_t> scale(std::uint64_t m, int e) {
  constexpr std::uint64_t kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (m == 0) return 0;
  for (; e > 0; --e) {
    if (m > kMax / 10) return std::nullopt;
    m *= 10;
  }
  if (e < -19) return 0;
  std::uint64_t divisor = 1;
  for (; e < 0; ++e) divisor *= 10;
  const std::uint64_t q = m / divisor;
  const std::uint64_t r = m % divisor;
  const std::uint64_t rounded = q + (r >= divisor - r ? 1 : 0);  // half up, without 2·r overflowing
  if (rounded > kMax) return std::nullopt;
  return static_cast<std::int64_t>(rounded);
}

}  // namespace

std::optional<std::int64_t> parse_scaled_decimal(std::string_view text, int scale_exp10) {
  const std::optional<Decimal> d = parse_decimal(text);
  if (!d) return std::nullopt;
  const std::optional<std::int64_t> v = scale(d->mantissa, d->exp10 + scale_exp10);
  if (!v) return std::nullopt;
  return d->negative ? -*v : *v;
}

}  // namespace attune::diagnose::profile
