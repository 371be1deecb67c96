// Array conversions between f32 and bf16 (16-bit patterns), Highway SIMD with dynamic
// dispatch (AVX-512, AVX2, SSE4, …): the same bits as numeric.h's to_bf16 / from_bf16 for every
// input, NaN included (tests/native/convert_test.cpp checks all 2^32 f32 inputs).
#pragma once

#include <cstddef>
#include <cstdint>

namespace presk::exec::native {

// to[i] = to_bf16(from[i]): RNE, overflow to ±∞, a NaN quieted (bit 6 of the pattern set).
void round_to_bf16(const float* from, uint16_t* to, size_t n);
// to[i] = from_bf16(from[i]) (exact).
void widen_bf16(const uint16_t* from, float* to, size_t n);
// to[i] = round_bf16(from[i]) = from_bf16(to_bf16(from[i])); `from` and `to` may be the same.
void round_through_bf16(const float* from, float* to, size_t n);

}  // namespace presk::exec::native
