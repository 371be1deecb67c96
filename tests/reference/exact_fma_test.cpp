// The contraction kernel (exact_fma.h) against the chain of mpfr_fma it replaces: identical
// bits on random, sparse (exact ties), all-ones (carries), far-apart and cancelling terms,
// zeros and infinities, at precisions on and between limb boundaries.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <random>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "reference/random_terms.h"
#include "exec/reference/exact_fma.h"

namespace presk::testing {
namespace {

using reference::fma_chain;
using reference::MpfrBuffer;

TEST(ReferenceExactFma, EqualsTheMpfrFmaChainBitForBit) {
  std::mt19937_64 rng(42);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 7);
  int64_t terms = 0;
  for (long p : {53L, 64L, 65L, 127L, 128L, 129L, 192L, 256L, 300L, 1024L, 1100L}) {
    for (int trial = 0; trial < 60; ++trial) {
      int64_t n = 1 + static_cast<int64_t>(rng() % 40);
      MpfrBuffer x(n, p), y(n, p), chain(1, p), reference(1, p);
      int mode = trial % 5;  // styles and exponent spreads
      long spread = mode == 1 ? 400 : (mode == 2 ? 3 : 20);
      for (int64_t i = 0; i < n; ++i) {
        for (__mpfr_struct* v : {x.data() + i, y.data() + i}) {
          draw(v, mode == 4 ? static_cast<int>(rng() % 3) : (mode == 3 ? 1 : 0), spread, rng, state);
        }
        if (rng() % 40 == 0) mpfr_set_zero(x.data() + i, (rng() & 1) ? 1 : -1);
        if (rng() % 200 == 0) mpfr_set_inf(y.data() + i, 1);
        if (i > 0 && rng() % 8 == 0) {  // this term cancels the previous one exactly
          mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
          mpfr_set(y.data() + i, y.data() + i - 1, MPFR_RNDN);
        }
      }
      if (trial % 2) draw(reference.data(), 0, 20, rng, state);  // a nonzero start
      mpfr_set(chain.data(), reference.data(), MPFR_RNDN);
      for (int64_t i = 0; i < n; ++i) {
        mpfr_fma(reference.data(), x.data() + i, y.data() + i, reference.data(), MPFR_RNDN);
      }
      fma_chain(chain.data(), x.data(), 1, y.data(), 1, n);
      ++terms;
      ASSERT_TRUE(same_number(chain.data(), reference.data())) << "p = " << p << ", trial " << trial;
    }
  }
  gmp_randclear(state);
  EXPECT_GT(terms, 600);
}

TEST(ReferenceExactFma, TiesRoundToEven) {
  for (long p : {53L, 128L, 129L, 256L}) {
    MpfrBuffer v(4, p);
    __mpfr_struct *r = v.data(), *x = r + 1, *y = r + 2, *want = r + 3;
    mpfr_set_ui(r, 1, MPFR_RNDN);
    mpfr_set_ui_2exp(x, 1, -p, MPFR_RNDN);  // 1 + 2^−p: halfway, 1 is even
    mpfr_set_ui(y, 1, MPFR_RNDN);
    fma_chain(r, x, 1, y, 1, 1);
    EXPECT_TRUE(mpfr_cmp_ui(r, 1) == 0) << p;
    mpfr_set_ui_2exp(want, 1, 1 - p, MPFR_RNDN);
    mpfr_add_ui(r, want, 1, MPFR_RNDN);  // 1 + 2^(1−p): odd last bit
    fma_chain(r, x, 1, y, 1, 1);          // + 2^−p: halfway, rounds up to 1 + 2^(2−p)
    mpfr_set_ui_2exp(want, 1, 2 - p, MPFR_RNDN);
    mpfr_add_ui(want, want, 1, MPFR_RNDN);
    EXPECT_TRUE(mpfr_equal_p(r, want)) << p;
    mpfr_set_ui_2exp(r, 1, 0, MPFR_RNDN);  // 1 − 2^(−p−1): halfway below 1, 1 is even
    mpfr_set_si_2exp(x, -1, -p - 1, MPFR_RNDN);
    fma_chain(r, x, 1, y, 1, 1);
    EXPECT_TRUE(mpfr_cmp_ui(r, 1) == 0) << p;
  }
}

}  // namespace
}  // namespace presk::testing
