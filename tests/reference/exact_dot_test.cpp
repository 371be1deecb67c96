// The exact contraction (exact_dot.h) against two independent computations of the correctly
// rounded dot product: mpfr_dot, and the products formed exactly at 2p bits and summed in one
// MPFR number wide enough to hold the sum exactly, then rounded once to p bits. Random,
// sparse (ties), all-ones (carries), far-apart and cancelling terms, signed zeros, infinities
// and NaNs, at precisions on and between limb boundaries; spreads past the window (mpfr_dot);
// runs split across several scan/add calls; and the interpreter's contraction itself.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <random>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "reference/random_terms.h"
#include "exec/reference/exact_dot.h"
#include "reference/support.h"

namespace presk::testing {
namespace {

using reference::ExactDot;
using reference::MpfrBuffer;

// The window over terms [0, n) given as `runs` pieces, each scanned then added.
void exact_dot(mpfr_ptr r, const MpfrBuffer& x, const MpfrBuffer& y, int64_t n, int runs) {
  ExactDot dot(mpfr_get_prec(r));
  int64_t piece = (n + runs - 1) / runs;
  for (int64_t s = 0; s < n; s += piece) dot.scan(x.data() + s, 1, y.data() + s, 1, std::min(piece, n - s));
  for (int64_t s = 0; s < n; s += piece) dot.add(x.data() + s, 1, y.data() + s, 1, std::min(piece, n - s));
  dot.finish(r);
}

// mpfr_dot, a zero result made +0 (the contraction's sum of zeros).
void by_mpfr_dot(mpfr_ptr r, const MpfrBuffer& x, const MpfrBuffer& y, int64_t n) {
  std::vector<mpfr_ptr> xs, ys;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(const_cast<mpfr_ptr>(x.data() + i));
    ys.push_back(const_cast<mpfr_ptr>(y.data() + i));
  }
  mpfr_dot(r, xs.data(), ys.data(), static_cast<unsigned long>(n), MPFR_RNDN);
  if (mpfr_zero_p(r)) mpfr_set_zero(r, 1);
}

// Exact 2p-bit products summed exactly at `wide` bits (wide enough for the spread), then one
// rounding to p bits. Finite operands only.
void by_wide_sum(mpfr_ptr r, const MpfrBuffer& x, const MpfrBuffer& y, int64_t n, long wide) {
  long p = mpfr_get_prec(r);
  Exact sum(wide), product(2 * p);
  mpfr_set_zero(sum.get(), 1);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(mpfr_mul(product.get(), x.data() + i, y.data() + i, MPFR_RNDN), 0);
    ASSERT_EQ(mpfr_add(sum.get(), sum.get(), product.get(), MPFR_RNDN), 0);
  }
  mpfr_set(r, sum.get(), MPFR_RNDN);
  if (mpfr_zero_p(r)) mpfr_set_zero(r, 1);
}

TEST(ReferenceExactDot, EqualsTheCorrectlyRoundedDotProduct) {
  std::mt19937_64 rng(42);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 7);
  int64_t checked = 0, inexact = 0;
  for (long p : {53L, 64L, 65L, 127L, 128L, 129L, 192L, 256L, 300L, 1024L, 1100L}) {
    for (int trial = 0; trial < 60; ++trial) {
      int64_t n = 1 + static_cast<int64_t>(rng() % 40);
      MpfrBuffer x(n, p), y(n, p), got(1, p), want(1, p), wide(1, p);
      int mode = trial % 5;  // styles and exponent spreads
      long spread = mode == 1 ? 400 : (mode == 2 ? 3 : 20);
      for (int64_t i = 0; i < n; ++i) {
        for (__mpfr_struct* v : {x.data() + i, y.data() + i}) {
          draw(v, mode == 4 ? static_cast<int>(rng() % 3) : (mode == 3 ? 1 : 0), spread, rng, state);
        }
        if (mode == 0 && rng() % 2 == 0) {  // a binary64 operand (one limb of significand)
          mpfr_set_d(y.data() + i, mpfr_get_d(y.data() + i, MPFR_RNDN), MPFR_RNDN);
        }
        if (rng() % 40 == 0) mpfr_set_zero(x.data() + i, (rng() & 1) ? 1 : -1);
        if (i > 0 && rng() % 6 == 0) {  // this term cancels the previous one exactly
          mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
          mpfr_set(y.data() + i, y.data() + i - 1, MPFR_RNDN);
        }
      }
      exact_dot(got.data(), x, y, n, 1 + trial % 3);
      by_mpfr_dot(want.data(), x, y, n);
      by_wide_sum(wide.data(), x, y, n, 8192);
      ASSERT_TRUE(same_number(got.data(), want.data())) << "p = " << p << ", trial " << trial;
      ASSERT_TRUE(same_number(got.data(), wide.data())) << "p = " << p << ", trial " << trial;
      ++checked;
      // how often one rounding differs from the fma chain's (the test sees both cases)
      MpfrBuffer chain(1, p);
      for (int64_t i = 0; i < n; ++i) mpfr_fma(chain.data(), x.data() + i, y.data() + i, chain.data(), MPFR_RNDN);
      inexact += !same_number(chain.data(), got.data());
    }
  }
  gmp_randclear(state);
  EXPECT_EQ(checked, 660);
  EXPECT_GT(inexact, 20);  // the definitions do differ, so the comparison above can fail
}

TEST(ReferenceExactDot, CancellationsAndTiesRoundOnce) {
  for (long p : {53L, 128L, 129L, 256L}) {
    MpfrBuffer x(3, p), y(3, p), r(1, p), want(1, p);
    for (int i = 0; i < 3; ++i) mpfr_set_ui(y.data() + i, 1, MPFR_RNDN);
    // 2^200 + 2^−300 − 2^200: the fma chain loses the small term; the exact sum keeps it
    mpfr_set_ui_2exp(x.data(), 1, 200, MPFR_RNDN);
    mpfr_set_ui_2exp(x.data() + 1, 1, -300, MPFR_RNDN);
    mpfr_set_si_2exp(x.data() + 2, -1, 200, MPFR_RNDN);
    exact_dot(r.data(), x, y, 3, 1);
    EXPECT_EQ(mpfr_cmp_ui_2exp(r.data(), 1, -300), 0) << p;
    // 1 + 2^−p (a tie, 1 even) + 2^−3p decides upward
    mpfr_set_ui(x.data(), 1, MPFR_RNDN);
    mpfr_set_ui_2exp(x.data() + 1, 1, -p, MPFR_RNDN);
    mpfr_set_ui_2exp(x.data() + 2, 1, -3 * p, MPFR_RNDN);
    exact_dot(r.data(), x, y, 3, 2);
    mpfr_set_ui_2exp(want.data(), 1, 1 - p, MPFR_RNDN);
    mpfr_add_ui(want.data(), want.data(), 1, MPFR_RNDN);
    EXPECT_TRUE(mpfr_equal_p(r.data(), want.data())) << p;
    exact_dot(r.data(), x, y, 2, 1);  // the tie alone: to even, 1
    EXPECT_EQ(mpfr_cmp_ui(r.data(), 1), 0) << p;
    // x − x: +0; −0·1 alone: +0
    mpfr_set_si(x.data() + 1, -1, MPFR_RNDN);
    exact_dot(r.data(), x, y, 2, 1);
    EXPECT_TRUE(mpfr_zero_p(r.data()) && !mpfr_signbit(r.data())) << p;
    mpfr_set_zero(x.data(), -1);
    exact_dot(r.data(), x, y, 1, 1);
    EXPECT_TRUE(mpfr_zero_p(r.data()) && !mpfr_signbit(r.data())) << p;
    exact_dot(r.data(), x, y, 0, 1);  // no terms
    EXPECT_TRUE(mpfr_zero_p(r.data()) && !mpfr_signbit(r.data())) << p;
  }
}

TEST(ReferenceExactDot, SpecialValuesAndWideSpreadsAreMpfrDots) {
  std::mt19937_64 rng(5);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 3);
  for (long p : {64L, 128L, 256L}) {
    for (int trial = 0; trial < 200; ++trial) {
      int64_t n = 1 + static_cast<int64_t>(rng() % 12);
      MpfrBuffer x(n, p), y(n, p), got(1, p), want(1, p);
      long spread = trial % 4 == 0 ? 5000 : 30;  // beyond the window: mpfr_dot decides
      for (int64_t i = 0; i < n; ++i) {
        draw(x.data() + i, 0, spread, rng, state);
        draw(y.data() + i, 0, 30, rng, state);
        switch (rng() % 12) {
          case 0: mpfr_set_inf(x.data() + i, (rng() & 1) ? 1 : -1); break;
          case 1: mpfr_set_nan(y.data() + i); break;
          case 2: mpfr_set_zero(y.data() + i, (rng() & 1) ? 1 : -1); break;
          default: break;
        }
      }
      exact_dot(got.data(), x, y, n, 1 + trial % 2);
      by_mpfr_dot(want.data(), x, y, n);
      ASSERT_TRUE(same_number(got.data(), want.data())) << "p = " << p << ", trial " << trial;
    }
  }
  gmp_randclear(state);
  MpfrBuffer x(2, 128), y(2, 128), r(1, 128);
  mpfr_set_inf(x.data(), 1);
  mpfr_set_zero(y.data(), 1);  // ∞·0
  mpfr_set_ui(x.data() + 1, 1, MPFR_RNDN);
  mpfr_set_ui(y.data() + 1, 1, MPFR_RNDN);
  exact_dot(r.data(), x, y, 2, 1);
  EXPECT_TRUE(mpfr_nan_p(r.data()));
  mpfr_set_ui(y.data(), 1, MPFR_RNDN);  // ∞ + 1
  exact_dot(r.data(), x, y, 2, 1);
  EXPECT_TRUE(mpfr_inf_p(r.data()) && mpfr_sgn(r.data()) > 0);
  mpfr_set_inf(x.data() + 1, -1);  // ∞ − ∞
  exact_dot(r.data(), x, y, 2, 1);
  EXPECT_TRUE(mpfr_nan_p(r.data()));
}

// The interpreter's contraction: by default the correctly rounded sum of the whole element
// (two contracted letters, so two runs per element); with FmaChain, the mpfr_fma chain.
TEST(ReferenceExactDot, TheInterpretersContractionRoundsEachElementOnce) {
  ir::Attrs attrs;
  attrs.spec = "tad,adv->tv";
  ir::Program program = single_op_program(ir::Op::contract, {real_type({3, 2, 16}), real_type({2, 16, 5})},
                                          real_type({3, 5}), attrs);
  std::vector<double> x, w;
  for (int i = 0; i < 96; ++i) x.push_back(std::ldexp(std::sin(i * 0.7 + 0.1), (i * 37) % 120 - 60));
  for (int i = 0; i < 160; ++i) w.push_back(std::cos(i * 1.3 + 0.2) * (i % 7 == 0 ? -1e30 : 1.0));
  std::vector<reference::HostTensor> inputs{real_input({3, 2, 16}, x), real_input({2, 16, 5}, w)};
  std::vector<MpfrValue> out = run_mpfr(program, inputs, 128);
  reference::set_contraction_sums(reference::ContractionSums::FmaChain);
  std::vector<MpfrValue> chain = run_mpfr(program, inputs, 128);
  reference::set_contraction_sums(reference::ContractionSums::Exact);
  int differ = 0;
  for (int t = 0; t < 3; ++t) {
    for (int v = 0; v < 5; ++v) {
      MpfrBuffer a(32, 128), b(32, 128), want(1, 128), fma(1, 128);
      for (int k = 0; k < 32; ++k) {  // a then d, row-major
        mpfr_set_d(a.data() + k, x[t * 32 + k], MPFR_RNDN);
        mpfr_set_d(b.data() + k, w[k * 5 + v], MPFR_RNDN);
        mpfr_fma(fma.data(), a.data() + k, b.data() + k, fma.data(), MPFR_RNDN);
      }
      by_mpfr_dot(want.data(), a, b, 32);
      EXPECT_TRUE(same_number(out[0].real(t * 5 + v), want.data())) << t << "," << v;
      EXPECT_TRUE(same_number(chain[0].real(t * 5 + v), fma.data())) << t << "," << v;
      differ += !same_number(want.data(), fma.data());
    }
  }
  EXPECT_GT(differ, 0);  // the inputs tell the two definitions apart
}

}  // namespace
}  // namespace presk::testing

namespace presk::testing {
namespace {

// A batch letter and a transposed operand (attention's scores): each element equals mpfr_dot
// of its own terms, whatever the layout the contraction packs.
TEST(ReferenceExactDot, BatchLettersAndTransposedOperands) {
  ir::Attrs attrs;
  attrs.spec = "htd,hsd->hts";
  ir::Program program = single_op_program(ir::Op::contract, {real_type({2, 3, 5}), real_type({2, 4, 5})},
                                          real_type({2, 3, 4}), attrs);
  std::vector<double> x, w;
  for (int i = 0; i < 30; ++i) x.push_back(std::ldexp(std::sin(i * 0.9 + 0.3), (i * 13) % 80 - 40));
  for (int i = 0; i < 40; ++i) w.push_back(std::cos(i * 0.4 + 0.5) / 3);
  std::vector<MpfrValue> out = run_mpfr(program, {real_input({2, 3, 5}, x), real_input({2, 4, 5}, w)}, 128);
  for (int h = 0; h < 2; ++h) {
    for (int t = 0; t < 3; ++t) {
      for (int s = 0; s < 4; ++s) {
        MpfrBuffer a(5, 128), b(5, 128), want(1, 128);
        for (int d = 0; d < 5; ++d) {
          mpfr_set_d(a.data() + d, x[(h * 3 + t) * 5 + d], MPFR_RNDN);
          mpfr_set_d(b.data() + d, w[(h * 4 + s) * 5 + d], MPFR_RNDN);
        }
        by_mpfr_dot(want.data(), a, b, 5);
        EXPECT_TRUE(same_number(out[0].real((h * 3 + t) * 4 + s), want.data())) << h << t << s;
      }
    }
  }
}

}  // namespace
}  // namespace presk::testing
