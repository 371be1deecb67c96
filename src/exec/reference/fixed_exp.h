// exp and tanh at up to two limbs of precision (≤ 128 bits) on 192-bit fixed-point integers,
// rounded by Ziv's test on the integers (limbs::round_decided): the fast path of ziv.h's
// correctly_rounded, taken before Arb's. A result it cannot decide (within its error bound of
// a rounding boundary, about one call in 2^50 at 128 bits; an input out of its range) is left
// to the caller, so the bits are mpfr_exp's and mpfr_tanh's either way.
//
// exp: x = k·ln 2 + R, 0 ≤ R < ln 2 (R within 3 units of 2^-192 of the exact remainder; k from
// a binary64 estimate, corrected on R's integer bits). R's top four bytes index four tables,
// R = j₁·2^-8 + j₂·2^-16 + j₃·2^-24 + j₄·2^-32 + t with t < 2^-32, so
//   exp(R)/2 = E₁[j₁]·(1 + E₂[j₂])·(1 + E₃[j₃])·(1 + E₄[j₄])·(1 + P(t)),
// E₁[j] = exp(j/2^8)/2, E_m[j] = expm1(j·2^-8m), each ⌊·2^192⌋, and P(t) = t + t²/2 + … + t⁵/120
// (the tail below 2^-201). Every product keeps the partial products at or above the output's
// lowest limb's column minus one and floors, so each value is at most its exact one; the
// errors, in units of 2^-192 on a number below 1, add to less than 29 (the argument 3, each
// table entry 1, each product 3, P 9.3), bounded here by 2^7. exp(x) = 2^(k+1)·Y.
//
// tanh: |tanh x| = (1 − z)/(1 + z) = 2/(1 + z) − 1, z = exp(−2|x|) from the same kernel
// (within 30.3 units with the argument's own cut), the reciprocal from binary64 and one
// correction of third order (fixed_exp.cpp, tanh_quotient): within 2·9 + 2·30.3 units,
// bounded by 2^8 for the rounding.
#pragma once

#include <mpfr.h>

#include <cstdint>

namespace presk::reference {

// The largest precision the fixed point serves.
constexpr long kFixedExpMaxBits = 128;

// exp(v)/2^(k+1) as 192-bit fixed point, for v = ±magnitude·2^-192 (magnitude 4 limbs,
// |v| < 2^21): y (3 limbs, below 1), at most 28.3 units below exp(v)·2^(−k−1)·2^192 and at
// most 1.01 above it; false where k could not be settled (v within a unit of k·ln 2, as
// the floors see it: the caller takes another path).
struct FixedExp {
  uint64_t y[3];
  int64_t k;
};
constexpr int kFixedExpErrorBits = 7;  // the bound the rounding assumes, 2^7 > 29.4 units
bool exp_fixed(bool negative, const uint64_t* magnitude, FixedExp* out);

// tanh(v/2) as 192-bit fixed point, for v = magnitude·2^-192 (|v| < 2^6): q (3 limbs) within
// 2·9 + 2·30.3 < 2^7 units of tanh(v/2)·2^192; false where z = exp(−v) is within the bound of
// 1 (tanh too small to decide).
bool tanh_fixed(const uint64_t* magnitude, uint64_t* q);

// r ← ∘(exp(x)) or ∘(tanh(x)) to nearest at r's precision when the fixed point decides it;
// false (r untouched) when it does not, or when r's precision is above kFixedExpMaxBits, x is
// not regular or |x| ≥ 2^20 (exp) or 2^5 (tanh). r and x may be the same number.
bool exp_decided(mpfr_ptr r, mpfr_srcptr x);
bool tanh_decided(mpfr_ptr r, mpfr_srcptr x);

}  // namespace presk::reference
