// The two-limb product of the MPFR arithmetic (arith_mpfr.h, mul_two_limbs) against mpfr_mul,
// bit for bit: random operands of 1 … 128 bits into results of 65 … 128 bits, products that
// are exact midpoints (ties to even both ways), a carry out of the top limb, signs, in place,
// and what it leaves to mpfr_mul (zeros, infinities, NaN, wider operands, exponent limits).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <random>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/limbs.h"
#include "reference/random_terms.h"

namespace presk::testing {
namespace {

using reference::mul_two_limbs;

TEST(ReferenceMulTwoLimbs, IsMpfrMulBitForBit) {
  std::mt19937_64 rng(41);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 43);
  int64_t ties = 0, fast = 0, eligible = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const long px = 1 + static_cast<long>(rng() % 128), py = 1 + static_cast<long>(rng() % 128);
    const long pr = 65 + static_cast<long>(rng() % 64);
    mpfr_t x, y, got, want;
    mpfr_inits2(px, x, nullptr);
    mpfr_inits2(py, y, nullptr);
    mpfr_inits2(pr, got, want, nullptr);
    mpfr_urandomb(x, state);
    mpfr_urandomb(y, state);
    if (mpfr_zero_p(x)) mpfr_set_ui(x, 1, MPFR_RNDN);
    if (mpfr_zero_p(y)) mpfr_set_ui(y, 3, MPFR_RNDN);
    mpfr_mul_2si(x, x, static_cast<long>(rng() % 200) - 100, MPFR_RNDN);
    if (rng() & 1) mpfr_neg(x, x, MPFR_RNDN);
    if (rng() & 1) mpfr_neg(y, y, MPFR_RNDN);
    if (trial % 4 == 0) {  // a midpoint: x·y with exactly pr + 1 significant bits, the last set
      mpfr_set_prec(x, pr + 1);
      mpfr_urandomb(x, state);
      mpfr_nextabove(x);
      if (mpfr_min_prec(x) != pr + 1) mpfr_set_ui_2exp(x, (1UL << 63) + 1, -70, MPFR_RNDN);
      mpfr_set_ui(y, 1, MPFR_RNDN);
      mpfr_mul_2si(y, y, static_cast<long>(rng() % 40) - 20, MPFR_RNDN);
      ties += mpfr_min_prec(x) == pr + 1 ? 1 : 0;
    }
    mpfr_mul(want, x, y, MPFR_RNDN);
    eligible += mpfr_get_prec(x) <= 128 ? 1 : 0;  // a midpoint's x of 129 bits is mpfr_mul's
    if (mul_two_limbs(got, x, y)) {
      ++fast;
      ASSERT_TRUE(same_number(got, want)) << "trial " << trial << ", bits " << px << " × " << py << " → " << pr;
    }
    mpfr_clears(x, y, got, want, nullptr);
  }
  gmp_randclear(state);
  EXPECT_GT(ties, 20000);
  EXPECT_EQ(fast, eligible);  // every other operand here is regular, of at most two limbs
}

TEST(ReferenceMulTwoLimbs, TheExponentRangeIsMpfrsOwn) {
  EXPECT_EQ(reference::limbs::kExponentMin, mpfr_get_emin());
  EXPECT_EQ(reference::limbs::kExponentMax, mpfr_get_emax());
}

TEST(ReferenceMulTwoLimbs, CarriesInPlaceAndWhatItLeaves) {
  mpfr_t x, y, r, want;
  mpfr_inits2(128, x, y, r, want, nullptr);
  // (2^128 − 1)² rounds up to a carry out of the top limb: 2^256·(1 − 2^-127) → 2^256
  mpfr_set_ui(x, 1, MPFR_RNDN);
  mpfr_mul_2ui(x, x, 128, MPFR_RNDN);
  mpfr_nextbelow(x);
  ASSERT_TRUE(mul_two_limbs(r, x, x));
  mpfr_mul(want, x, x, MPFR_RNDN);
  EXPECT_TRUE(same_number(r, want));
  ASSERT_TRUE(mul_two_limbs(x, x, x));  // in place
  EXPECT_TRUE(same_number(x, want));
  mpfr_set_zero(y, 1);
  EXPECT_FALSE(mul_two_limbs(r, x, y));
  mpfr_set_inf(y, -1);
  EXPECT_FALSE(mul_two_limbs(r, x, y));
  mpfr_set_nan(y);
  EXPECT_FALSE(mul_two_limbs(r, x, y));
  mpfr_set_ui_2exp(x, 1, mpfr_get_emax() - 1, MPFR_RNDN);
  mpfr_set_ui(y, 4, MPFR_RNDN);
  EXPECT_FALSE(mul_two_limbs(r, x, y));  // overflow: mpfr_mul's
  mpfr_t wide, narrow;
  mpfr_init2(wide, 129);
  mpfr_init2(narrow, 64);
  mpfr_set_ui(wide, 3, MPFR_RNDN);
  EXPECT_FALSE(mul_two_limbs(r, wide, wide));
  EXPECT_FALSE(mul_two_limbs(narrow, y, y));  // 64 bits out: one limb
  mpfr_clears(x, y, r, want, wide, narrow, nullptr);
}

}  // namespace
}  // namespace presk::testing
