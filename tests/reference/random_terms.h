// Random MPFR operands for the kernels' tests (exact_fma, exact_dot, fixed_dot, fixed_exp, ziv,
// two_limbs): equal numbers (sign of zero included, NaN equal to NaN) and operands drawn to
// stress limb arithmetic.
#pragma once

#include <mpfr.h>

#include <random>

#include "exec/reference/arith_mpfr.h"

namespace presk::testing {

// GMP's random state, seeded, cleared when it goes.
struct GmpRandom {
  gmp_randstate_t state;
  explicit GmpRandom(unsigned long seed) {
    gmp_randinit_default(state);
    gmp_randseed_ui(state, seed);
  }
  ~GmpRandom() { gmp_randclear(state); }
  GmpRandom(const GmpRandom&) = delete;
  GmpRandom& operator=(const GmpRandom&) = delete;
};

inline bool same_number(mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_nan_p(a) || mpfr_nan_p(b)) return mpfr_nan_p(a) && mpfr_nan_p(b);
  return mpfr_equal_p(a, b) && mpfr_signbit(a) == mpfr_signbit(b);
}

// One operand: style 0 a random significand, 1 one to three set bits, 2 all p bits set; then
// scaled by 2^k, k uniform in [−spread, spread], and given a random sign.
inline void draw(mpfr_ptr v, int style, long spread, std::mt19937_64& rng, gmp_randstate_t state) {
  long p = mpfr_get_prec(v);
  if (style == 0) {
    mpfr_urandomb(v, state);
    if (mpfr_zero_p(v)) mpfr_set_ui(v, 1, MPFR_RNDN);
  } else if (style == 1) {
    mpfr_set_zero(v, 1);
    reference::MpfrBuffer bit(1, p);
    for (int b = 0, n = 1 + static_cast<int>(rng() % 3); b < n; ++b) {
      mpfr_set_ui_2exp(bit.data(), 1, -static_cast<long>(rng() % (p + 2)), MPFR_RNDN);
      mpfr_add(v, v, bit.data(), MPFR_RNDN);
    }
  } else {
    mpfr_set_ui_2exp(v, 1, p, MPFR_RNDN);
    mpfr_sub_ui(v, v, 1, MPFR_RNDN);  // 2^p − 1, exact
    mpfr_mul_2si(v, v, -p, MPFR_RNDN);
  }
  mpfr_mul_2si(v, v, static_cast<long>(rng() % (2 * spread + 1)) - spread, MPFR_RNDN);
  if (rng() & 1) mpfr_neg(v, v, MPFR_RNDN);
}

}  // namespace presk::testing
