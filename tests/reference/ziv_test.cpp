// exp, log and tanh through Arb (ziv.h) against MPFR's own functions, bit for bit: random
// inputs over wide magnitudes at precisions on and between limb boundaries, the inputs Arb
// does not take (zeros, infinities, NaN, huge, log of a negative) and exact cases (log 1).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <limits>
#include <random>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ziv.h"
#include "reference/random_terms.h"

namespace presk::testing {
namespace {

using reference::correctly_rounded;
using reference::Elementary;
using reference::MpfrBuffer;

void by_mpfr(Elementary f, mpfr_ptr r, mpfr_srcptr x) {
  if (f == Elementary::Exp) mpfr_exp(r, x, MPFR_RNDN);
  if (f == Elementary::Log) mpfr_log(r, x, MPFR_RNDN);
  if (f == Elementary::Tanh) mpfr_tanh(r, x, MPFR_RNDN);
}

TEST(ReferenceZiv, ExpLogTanhAreMpfrBitForBit) {
  std::mt19937_64 rng(11);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 5);
  int64_t checked = 0;
  for (long p : {53L, 64L, 65L, 128L, 129L, 256L, 1024L}) {
    MpfrBuffer v(3, p);
    __mpfr_struct *x = v.data(), *got = x + 1, *want = x + 2;
    for (int trial = 0; trial < 400; ++trial) {
      mpfr_urandomb(x, state);
      mpfr_mul_2si(x, x, static_cast<long>(rng() % 60) - 40, MPFR_RNDN);
      if (rng() & 1) mpfr_neg(x, x, MPFR_RNDN);
      for (Elementary f : {Elementary::Exp, Elementary::Log, Elementary::Tanh}) {
        correctly_rounded(f, got, x);
        by_mpfr(f, want, x);
        ASSERT_TRUE(same_number(got, want)) << "p = " << p << ", f " << static_cast<int>(f);
        ++checked;
      }
    }
    // what Arb does not take, and exact values
    const double inf = std::numeric_limits<double>::infinity();
    for (double special : {0.0, -0.0, 1.0, -1.0, 1e300, -1e300, 1e6, -1e6, inf, -inf,
                           std::numeric_limits<double>::quiet_NaN()}) {
      mpfr_set_d(x, special, MPFR_RNDN);
      for (Elementary f : {Elementary::Exp, Elementary::Log, Elementary::Tanh}) {
        correctly_rounded(f, got, x);
        by_mpfr(f, want, x);
        EXPECT_TRUE(same_number(got, want)) << "p = " << p << ", x = " << special;
      }
    }
    mpfr_set_d(x, 0.75, MPFR_RNDN);  // in place: r and x the same number
    correctly_rounded(Elementary::Exp, x, x);
    mpfr_set_d(want, 0.75, MPFR_RNDN);
    mpfr_exp(want, want, MPFR_RNDN);
    EXPECT_TRUE(same_number(x, want)) << p;
  }
  gmp_randclear(state);
  EXPECT_EQ(checked, 7 * 400 * 3);
}

}  // namespace
}  // namespace presk::testing
