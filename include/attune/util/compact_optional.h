// CompactOptional<T>: std::optional's interface for a float, double or int in
// the space of the bare value. "Empty" is one reserved bit pattern: a NaN with
// a payload no arithmetic produces (stored NaNs are made the ordinary quiet
// NaN) or, for integers, the lowest value (stored values are clamped above
// it). For records kept by the million, where std::optional's flag doubles
// the size of every field.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

namespace attune {

template <class T>
class CompactOptional {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int>);

 public:
  CompactOptional() = default;
  CompactOptional(std::nullopt_t) {}
  template <class U, class = std::enable_if_t<std::is_arithmetic_v<U>>>
  CompactOptional(U v) {
    set(v);
  }
  template <class U>
  CompactOptional(const std::optional<U>& o) {
    if (o) set(*o);
  }
  template <class U>
  CompactOptional(const CompactOptional<U>& o) {
    if (o) set(*o);
  }

  explicit operator bool() const { return has_value(); }
  bool has_value() const { return !is_empty_pattern(v_); }
  T operator*() const { return v_; }
  T value_or(T fallback) const { return has_value() ? v_ : fallback; }
  void reset() { v_ = empty_pattern(); }
  std::optional<T> to_optional() const { return has_value() ? std::optional<T>(v_) : std::nullopt; }

 private:
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  // NaN payloads that arithmetic and parsing never create.
  static constexpr Bits kEmptyFloat = sizeof(T) == 8 ? Bits(0x7FF4A77E0DEADBEEull) : Bits(0x7FA77E0Du);

  static T empty_pattern() {
    if constexpr (std::is_integral_v<T>) {
      return std::numeric_limits<T>::min();
    } else {
      return std::bit_cast<T>(kEmptyFloat);
    }
  }
  static bool is_empty_pattern(T v) {
    if constexpr (std::is_integral_v<T>) {
      return v == std::numeric_limits<T>::min();
    } else {
      return std::bit_cast<Bits>(v) == kEmptyFloat;
    }
  }
  template <class U>
  void set(U v) {
    if constexpr (std::is_integral_v<T>) {
      constexpr T lo = std::numeric_limits<T>::min() + 1, hi = std::numeric_limits<T>::max();
      if constexpr (std::is_floating_point_v<U>) {
        v_ = v != v ? lo : v <= lo ? lo : v >= hi ? hi : static_cast<T>(v);
      } else {
        v_ = std::cmp_less_equal(v, lo) ? lo : (std::cmp_greater_equal(v, hi) ? hi : static_cast<T>(v));
      }
    } else {
      v_ = static_cast<T>(v);
      if (v_ != v_) v_ = std::numeric_limits<T>::quiet_NaN();
    }
  }

  T v_ = empty_pattern();
};

}  // namespace attune
