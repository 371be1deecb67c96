// The fixed-point exp and tanh (fixed_exp.h): the kernel's integer within its stated bound of
// the exact value (MPFR at 640 bits), and the rounded results mpfr_exp's and mpfr_tanh's bit
// for bit, over random inputs at every scale the fast path takes, near multiples of ln 2
// (where k is settled on the integers), at its range's ends, with more input bits than output
// bits, and in place.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/fixed_exp.h"
#include "reference/random_terms.h"

namespace presk::testing {
namespace {

using reference::exp_decided;
using reference::exp_fixed;
using reference::FixedExp;
using reference::MpfrBuffer;
using reference::tanh_decided;

// |x| as the kernel's magnitude (⌊|x|·2^192⌋, exact for the inputs made here).
void magnitude_of(mpfr_srcptr x, uint64_t* m) {
  mpfr_t s;
  mpfr_init2(s, 2048);
  mpfr_abs(s, x, MPFR_RNDN);
  mpfr_mul_2ui(s, s, 192, MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  mpfr_get_z(z, s, MPFR_RNDD);
  for (int i = 0; i < 4; ++i) m[i] = mpz_getlimbn(z, i);
  mpz_clear(z);
  mpfr_clear(s);
}

// The limbs (least significant first) as a number at 640 bits, times 2^-shift.
void from_limbs(mpfr_ptr v, const uint64_t* limbs, int n, long shift) {
  mpfr_set_ui(v, 0, MPFR_RNDN);
  for (int i = n - 1; i >= 0; --i) {
    mpfr_mul_2ui(v, v, 64, MPFR_RNDN);
    mpfr_add_ui(v, v, limbs[i], MPFR_RNDN);  // exact: 640 bits hold every sum here
  }
  mpfr_div_2si(v, v, shift, MPFR_RNDN);
}

// (exact − y) in units of 2^-192, exact = exp(±m·2^-192)·2^(−k−1)·2^192 at 640 bits.
double kernel_error(bool negative, const uint64_t* m, const FixedExp& e) {
  mpfr_t v, y;
  mpfr_init2(v, 640);
  mpfr_init2(y, 640);
  from_limbs(v, m, 4, 192);
  if (negative) mpfr_neg(v, v, MPFR_RNDN);
  mpfr_exp(v, v, MPFR_RNDN);
  mpfr_mul_2si(v, v, 192 - (e.k + 1), MPFR_RNDN);
  from_limbs(y, e.y, 3, 0);
  mpfr_sub(v, v, y, MPFR_RNDN);
  const double error = mpfr_get_d(v, MPFR_RNDN);
  mpfr_clear(v);
  mpfr_clear(y);
  return error;
}

// PRESK_TEST_STRESS=N runs N times the inputs (docs/reference.md quotes a run at 100).
int stress() {
  const char* text = std::getenv("PRESK_TEST_STRESS");
  return text != nullptr && std::atoi(text) > 0 ? std::atoi(text) : 1;
}

// A random x of `bits` bits with exponent in [lo, hi], either sign.
void random_input(std::mt19937_64& rng, gmp_randstate_t state, mpfr_ptr x, int lo, int hi) {
  mpfr_urandomb(x, state);
  if (mpfr_zero_p(x)) mpfr_set_ui(x, 1, MPFR_RNDN);
  mpfr_set_exp(x, lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  if (rng() & 1) mpfr_neg(x, x, MPFR_RNDN);
}

TEST(ReferenceFixedExp, TheKernelIsWithinItsBoundOfTheExactValue) {
  std::mt19937_64 rng(3);
  GmpRandom random(9);
  auto& state = random.state;
  MpfrBuffer v(2, 192);
  mpfr_ptr x = v.data(), ln2 = v.data() + 1;
  mpfr_const_log2(ln2, MPFR_RNDN);
  double worst_below = 0, worst_above = 0;
  int settled = 0;
  const int trials = 20000 * stress();
  for (int trial = 0; trial < trials; ++trial) {
    if (trial % 4 == 3) {  // next to a multiple of ln 2: k settled on the integers
      mpfr_mul_si(x, ln2, static_cast<long>(rng() % 2000) - 1000, MPFR_RNDN);
      mpfr_nextabove(x);
      if (trial % 8 == 3) mpfr_nextbelow(x), mpfr_nextbelow(x);
    } else {
      random_input(rng, state, x, -60, 20);
    }
    uint64_t m[4];
    magnitude_of(x, m);
    FixedExp e{};
    if (!exp_fixed(mpfr_signbit(x) != 0, m, &e)) continue;
    ++settled;
    const double error = kernel_error(mpfr_signbit(x) != 0, m, e);
    worst_below = std::max(worst_below, error);
    worst_above = std::max(worst_above, -error);
    ASSERT_LT(error, 28.3) << "trial " << trial;
    ASSERT_LT(-error, 1.01) << "trial " << trial;
    ASSERT_GE(e.y[2], uint64_t{1} << 62) << "y far below 1/2: k is off";  // exact y ∈ [1/2, 1)
  }
  EXPECT_GE(settled, trials - trials / 2000);  // k unsettled only within a unit of a multiple of ln 2
  EXPECT_GT(worst_below, 1.0);  // the floors do lose something: the check sees them
  std::printf("kernel error over %d inputs: at most %.2f units below, %.2f above\n", trials, worst_below, worst_above);
}

TEST(ReferenceFixedExp, TanhIsWithinItsBoundOfTheExactValue) {
  std::mt19937_64 rng(5);
  GmpRandom random(7);
  auto& state = random.state;
  MpfrBuffer v(1, 192);
  mpfr_ptr x = v.data();
  double worst = 0;
  int settled = 0;
  const int trials = 20000 * stress();
  for (int trial = 0; trial < trials; ++trial) {
    random_input(rng, state, x, -40, 5);  // x = v/2
    mpfr_abs(x, x, MPFR_RNDN);
    mpfr_mul_2ui(x, x, 1, MPFR_RNDN);  // v = 2|x|, exact
    uint64_t m[4], q[3];
    magnitude_of(x, m);
    if (!reference::tanh_fixed(m, q)) continue;
    ++settled;
    mpfr_t exact, got;
    mpfr_init2(exact, 640);
    mpfr_init2(got, 640);
    from_limbs(exact, m, 4, 193);  // v/2
    mpfr_tanh(exact, exact, MPFR_RNDN);
    mpfr_mul_2ui(exact, exact, 192, MPFR_RNDN);
    from_limbs(got, q, 3, 0);
    mpfr_sub(exact, exact, got, MPFR_RNDN);
    const double error = std::fabs(mpfr_get_d(exact, MPFR_RNDN));
    mpfr_clears(exact, got, nullptr);
    worst = std::max(worst, error);
    ASSERT_LT(error, 78.6) << "trial " << trial;  // 2·9 + 2·30.3, derived in fixed_exp.cpp
  }
  EXPECT_GT(settled, trials - trials / 20);  // unsettled: tanh within the bound of 0 (v below ≈ 2^-185)
  EXPECT_GT(worst, 1.0);
  std::printf("tanh quotient error over %d inputs: at most %.2f units\n", trials, worst);
}

TEST(ReferenceFixedExp, ExpAndTanhAreMpfrBitForBit) {
  std::mt19937_64 rng(17);
  GmpRandom random(23);
  auto& state = random.state;
  int64_t decided = 0, tried = 0;
  for (long p : {24L, 53L, 64L, 65L, 113L, 128L}) {
    for (long input_bits : {p, 256L}) {  // the input as wide as the output, or wider
      MpfrBuffer in(1, input_bits), out(2, p);
      mpfr_ptr x = in.data(), got = out.data(), want = out.data() + 1;
      const int trials = 6000 * stress();
      for (int trial = 0; trial < trials; ++trial) {
        random_input(rng, state, x, trial % 3 == 0 ? -300 : -8, trial % 2 == 0 ? 20 : 5);
        const bool tanh = trial % 2 == 1;
        if (!(tanh ? tanh_decided(got, x) : exp_decided(got, x))) continue;
        tanh ? mpfr_tanh(want, x, MPFR_RNDN) : mpfr_exp(want, x, MPFR_RNDN);
        ASSERT_TRUE(same_number(got, want)) << "p = " << p << ", input bits " << input_bits << ", trial " << trial << ", "
                                            << (tanh ? "tanh(" : "exp(") << mpfr_get_d(x, MPFR_RNDN) << ") = "
                                            << mpfr_get_d(want, MPFR_RNDN) << ", not " << mpfr_get_d(got, MPFR_RNDN);
        ++decided;
      }
      tried += trials;
    }
  }
  // undecided: tanh of inputs too small for the bound (below about 2^(p − 190)), nothing else
  EXPECT_GT(decided, tried * 8 / 10) << decided << " of " << tried;
  std::printf("decided %lld of %lld\n", static_cast<long long>(decided), static_cast<long long>(tried));
}

TEST(ReferenceFixedExp, InPlaceAndOutOfRange) {
  MpfrBuffer v(2, 128);
  mpfr_ptr x = v.data(), want = v.data() + 1;
  mpfr_set_d(x, -0.75, MPFR_RNDN);
  ASSERT_TRUE(tanh_decided(x, x));
  mpfr_set_d(want, -0.75, MPFR_RNDN);
  mpfr_tanh(want, want, MPFR_RNDN);
  EXPECT_TRUE(same_number(x, want));
  mpfr_set_d(x, 3.5, MPFR_RNDN);
  ASSERT_TRUE(exp_decided(x, x));
  mpfr_set_d(want, 3.5, MPFR_RNDN);
  mpfr_exp(want, want, MPFR_RNDN);
  EXPECT_TRUE(same_number(x, want));
  // what the fixed point leaves to others: zeros, infinities, NaN, |x| ≥ 2^20 (exp) or 2^5
  // (tanh), exp within 2^-192 of 1, more than 128 bits out
  for (double zero : {0.0, -0.0}) {
    mpfr_set_d(x, zero, MPFR_RNDN);
    EXPECT_FALSE(exp_decided(want, x));
    EXPECT_FALSE(tanh_decided(want, x));
  }
  mpfr_set_d(x, 32.0, MPFR_RNDN);
  EXPECT_FALSE(tanh_decided(want, x));
  mpfr_set_inf(x, 1);
  EXPECT_FALSE(exp_decided(want, x));
  mpfr_set_nan(x);
  EXPECT_FALSE(tanh_decided(want, x));
  mpfr_set_d(x, 0x1p21, MPFR_RNDN);
  EXPECT_FALSE(exp_decided(want, x));
  for (double tiny : {0x1p-200, -0x1p-200}) {  // exp within 2^-192 of 1, on the binade's end: 1
    mpfr_set_d(x, tiny, MPFR_RNDN);
    ASSERT_TRUE(exp_decided(want, x));
    EXPECT_EQ(mpfr_cmp_ui(want, 1), 0);
  }
  MpfrBuffer wide(1, 129);
  mpfr_set_d(x, 0.5, MPFR_RNDN);
  EXPECT_FALSE(exp_decided(wide.data(), x));
}

}  // namespace
}  // namespace presk::testing
