// Number formats: exact conversions between f32 and bf16 bit patterns, and rounding of a
// double into every ElementType, with the rules each executor and each bound assume.
#pragma once

#include <cstdint>

#include "support/tensor.h"

namespace presk {

// bf16 bit pattern nearest to `value`, ties to even (round-to-nearest-even, RNE).
//   NaN   -> a quiet NaN with the same sign and the top 7 payload bits (quiet bit forced).
//   ±Inf  -> ±Inf;  ±0 -> ±0;  f32 subnormals round like any other value (bf16 has the
//   same exponent range, so its subnormals have 7 fraction bits).
//   Values at or above max_bf16 + ulp/2 (= 2^128 - 2^119) round to ±Inf.
uint16_t bf16_from_f32(float value);
// The f32 with the same value as a bf16 pattern (always exact).
float f32_from_bf16(uint16_t bits);

// Unit roundoff u of a float type: f64 2^-53, f32 2^-24, bf16 2^-8 (0 for integer types).
double unit_roundoff(ElementType type);

// `x` rounded once, correctly, into `type`, returned as a double holding that value exactly:
//   floats: RNE with the type's subnormals and overflow to ±Inf; NaN stays a (quiet) NaN,
//     ±0 and ±Inf are kept. f64 -> bf16 rounds once (never via f32, which could round twice).
//   integers (i4, i8, i32, i64, u8): nearest integer, ties to even, then saturated to the
//     type's range; ±Inf saturates; NaN becomes 0; -0 becomes +0.
//   boolean: an unsigned one-bit integer: rounded to nearest even, saturated to [0, 1]
//     (so 0.5 -> 0, 0.6 -> 1, 7 -> 1, -3 -> 0); NaN becomes 0.
//   i64's largest value is 2^63 - 1024 here (the largest double below 2^63); use
//     Tensor::set_integer for exact 64-bit integers.
double round_to(double x, ElementType type);

}  // namespace presk
