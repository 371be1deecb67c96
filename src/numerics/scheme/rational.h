// Exact roundings of rationals (GMP) that the meaning (meaning.cpp, attention.cpp) is written in.
#pragma once

#include <gmpxx.h>

#include <limits>
#include <vector>

#include "numerics/scheme/contract.h"
#include "numerics/scheme/meaning.h"

namespace presk::numerics {

inline constexpr int kNoLimit = std::numeric_limits<int>::min();

// The nearest whole number of q, ties to even.
mpz_class nearest_even(const mpq_class& q);

// a ≥ 0 rounded to `precision` (≤ 53) significant bits with quanta no finer than 2^quantum_min
// (kNoLimit: none), to nearest (ties to even) or upward; +∞ when it reaches 2^exponent_max.
double round_format(const mpq_class& a, int precision, int quantum_min, int exponent_max, bool upward);

// x rounded once to the nearest number of a float format (ties to even, subnormals, ±∞ beyond),
// or of binary64.
double round_rational(const mpq_class& x, FloatFormat format);
double nearest_binary64(const mpq_class& x);

// A block of exact values in `scheme` (negative values taken as 0 under an unsigned scale).
QuantizedBlock quantize_rationals(std::vector<mpq_class> x, const Scheme& scheme);

}  // namespace presk::numerics
