// The contraction kernel of the MPFR arithmetic: a chain of fused multiply–adds
// r ← ∘(xᵢ·yᵢ + r), each term's product exact and the sum rounded once to nearest (ties to
// even) at r's precision — bit for bit what a loop of mpfr_fma computes, several times faster.
// It works on MPFR's limbs directly (GMP's representation: a normalized significand of
// ⌈p/64⌉ limbs and an exponent), without MPFR's per-call flag, exponent-range and temporary
// bookkeeping; a term with a zero, infinite or NaN operand, an exponent near the end of the
// range or a precision it does not cover is handed to mpfr_fma itself.
#pragma once

#include <mpfr.h>

#include <cstdint>

namespace presk::reference {

// Precisions up to this many bits take the limb kernel; larger ones use mpfr_fma throughout.
constexpr long kExactFmaMaxBits = 16 * 64;

// r ← ∘(xₖ·yₖ + r) for k = 0, 1, …, count − 1 in that order (strides in numbers). Every
// number has the same precision. The result and every intermediate are identical to
// `for k: mpfr_fma(r, x + k·x_stride, y + k·y_stride, r, MPFR_RNDN)`; MPFR's inexact and
// other flags are not maintained by the terms the kernel computes.
void fma_chain(__mpfr_struct* r, const __mpfr_struct* x, int64_t x_stride,
               const __mpfr_struct* y, int64_t y_stride, int64_t count);

}  // namespace presk::reference
