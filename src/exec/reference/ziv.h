// Correctly rounded exp, log and tanh for the MPFR arithmetic, faster than MPFR's own at a few
// limbs of precision. Up to 128 bits, exp and tanh first take the fixed point of fixed_exp.h.
// Then Arb evaluates the function on the exact input at p + kZivExtraBits bits,
// a ball that contains the exact value; when both ends of the ball round (to nearest, ties to
// even) to the same p-bit number, that number is the correctly rounded result. Otherwise — the
// exact value lies within the ball's width of a rounding boundary, about one call in
// 2^kZivExtraBits, or the input is a zero, an infinity, a NaN or very large — MPFR's own
// function decides. Either way the result is the bits of mpfr_exp / mpfr_log / mpfr_tanh.
#pragma once

#include <mpfr.h>

#include <type_traits>

namespace presk::reference {

constexpr long kZivExtraBits = 24;

enum class Elementary { Exp, Log, Tanh };

// r ← ∘(f(x)) to nearest at r's precision (r and x may be the same number).
void correctly_rounded(Elementary f, mpfr_ptr r, mpfr_srcptr x);

// The ops' exp, log and tanh over an arithmetic policy (arith_mpfr.h, arith_ball.h): MPFR's
// through correctly_rounded (the same bits as MpfrArith's mpfr_exp/mpfr_log/mpfr_tanh), Arb's
// as the policy defines them.
template <class A>
void elementary(const A& a, Elementary f, typename A::Number* r, const typename A::Number* x) {
  if constexpr (std::is_same_v<typename A::Number, __mpfr_struct>) {
    correctly_rounded(f, r, x);
  } else if (f == Elementary::Exp) {
    a.exp(r, x);
  } else if (f == Elementary::Log) {
    a.log(r, x);
  } else {
    a.tanh(r, x);
  }
}

}  // namespace presk::reference
