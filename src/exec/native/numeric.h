// The native executor's number types: the realization's menu (f64, f32, bf16), their unit
// roundoffs, and the exact/rounding conversions between them. bf16 is held as its 16-bit
// pattern; f32 <-> bf16 goes through support/number_format.h (RNE, the one definition).
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <string_view>

#include "support/number_format.h"

namespace presk::exec::native {

// The real types a site or parameter may take, narrowest last.
enum class RealType : uint8_t { f64, f32, bf16 };

const char* real_type_name(RealType type);                       // "f64", "f32", "bf16"
std::optional<RealType> real_type_from_name(std::string_view name);
double real_unit_roundoff(RealType type);                        // 2^-53, 2^-24, 2^-8
ElementType element_type_of(RealType type);

// True when every value of `from` is a value of `to` (widening is exact).
inline bool is_wider_or_same(RealType to, RealType from) {
  return static_cast<int>(to) <= static_cast<int>(from);
}

// The type an op at a site of `type` computes in: f64 in f64, f32 in f32, bf16 in f32
// (then rounded once, RNE, to bf16 when stored).
template <RealType T>
using ComputeOf = std::conditional_t<T == RealType::f64, double, float>;

// f32 -> bf16, RNE: support's bf16_from_f32 inlined for the kernels' loops (same bits; the
// test NumericTest.Bf16MatchesSupport checks that they agree).
inline uint16_t to_bf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
inline float from_bf16(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
// f64 -> bf16 rounded once (never via f32, which could round twice).
inline uint16_t to_bf16(double x) {
  return bf16_from_f32(static_cast<float>(round_to(x, ElementType::bf16)));
}
// f32 x rounded to bf16 and widened back: the value a bf16 site stores.
inline float round_bf16(float x) { return from_bf16(to_bf16(x)); }

}  // namespace presk::exec::native
