// Exact decimal → fixed-point conversion for profile timestamps. Kineto writes
// microseconds since the epoch (~1.7e15, sometimes with a fraction) and nsys
// nanoseconds; a double would lose the nanoseconds, so the digits are scaled
// as integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace attune::diagnose::profile {

// round(value × 10^scale_exp10) for a decimal number such as "12", "-3.25",
// "1.5e3" (JSON number syntax, also a leading '+'). nullopt when the text is
// not exactly one number or the result does not fit in int64.
std::optional<std::int64_t> parse_scaled_decimal(std::string_view text, int scale_exp10);

}  // namespace attune::diagnose::profile
