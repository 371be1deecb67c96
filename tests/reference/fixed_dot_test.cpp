// The fixed-point fast path of the exact contraction (fixed_dot.h) against mpfr_dot: every
// element it decides is mpfr_dot's number, bit for bit; the elements it leaves (special values,
// cancellations and boundaries too close to call) exist in the draws, so the refusal is
// exercised too. Then every example's entries through the interpreter: the default contraction
// (fixed point, ExactDot for the rest) equal to mpfr_dot's (ContractionSums::MpfrDot) on every
// output element, at 128, 256 and 512 bits. Rows in binades (weights of binary64, f32 and bf16
// values) against mpfr_dot and against the rows of the same operand, and the interpreter on
// weights rounded to f32 against mpfr_dot.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/exact_dot.h"
#include "exec/reference/fixed_dot.h"
#include "lang/frontend.h"
#include "reference/random_terms.h"
#include "reference/support.h"

namespace presk::testing {
namespace {

using reference::FixedRows;
using reference::MpfrBuffer;

// mpfr_dot of x's row a and w's row b (rows of n numbers, contiguous), a zero made +0.
void by_mpfr_dot(mpfr_ptr r, const MpfrBuffer& x, int64_t a, const MpfrBuffer& w, int64_t b, int64_t n) {
  std::vector<mpfr_ptr> xs, ws;
  for (int64_t k = 0; k < n; ++k) {
    xs.push_back(const_cast<mpfr_ptr>(x.data() + a * n + k));
    ws.push_back(const_cast<mpfr_ptr>(w.data() + b * n + k));
  }
  mpfr_dot(r, xs.data(), ws.data(), static_cast<unsigned long>(n), MPFR_RNDN);
  if (mpfr_zero_p(r)) mpfr_set_zero(r, 1);
}

TEST(ReferenceFixedDot, EveryDecidedElementIsMpfrDots) {
  std::mt19937_64 rng(11);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 13);
  int64_t decided = 0, refused = 0;
  for (long p : {53L, 64L, 65L, 127L, 128L, 129L, 192L, 256L, 257L, 383L, 512L}) {
    for (int trial = 0; trial < 24; ++trial) {
      const int64_t rows = 4, n = 1 + static_cast<int64_t>(rng() % 48);
      MpfrBuffer x(rows * n, p), w(rows * n, p), got(1, p), want(1, p);
      int mode = trial % 6;
      long spread = mode == 1 ? 200 : (mode == 2 ? 2 : (mode == 5 ? 70 : 12));  // 1, 5: rows cut
      for (int64_t i = 0; i < rows * n; ++i) {
        draw(x.data() + i, mode == 3 ? static_cast<int>(rng() % 3) : 0, spread, rng, state);
        draw(w.data() + i, mode == 4 ? 1 : 0, spread, rng, state);
        if (mode % 2 == 0) mpfr_set_d(w.data() + i, mpfr_get_d(w.data() + i, MPFR_RNDN), MPFR_RNDN);  // binary64
        if (rng() % 30 == 0) mpfr_set_zero(x.data() + i, (rng() & 1) ? 1 : -1);
        if (i % n > 0 && rng() % 5 == 0) {  // cancels the previous term exactly
          mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
          mpfr_set(w.data() + i, w.data() + i - 1, MPFR_RNDN);
        }
        if (trial == 23 && rng() % 40 == 0) mpfr_set_inf(x.data() + i, 1);
        if (trial == 22 && rng() % 40 == 0) mpfr_set_nan(w.data() + i);
      }
      std::vector<int64_t> bases, offsets;
      for (int64_t r = 0; r < rows; ++r) bases.push_back(r * n);
      for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
      if (!FixedRows::supports(p)) continue;
      FixedRows fx(p, x.data(), bases, offsets), fw(p, w.data(), bases, offsets);
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t b = 0; b < rows; ++b) {
          by_mpfr_dot(want.data(), x, a, w, b, n);
          if (!FixedRows::dot(fx, a, fw, b, got.data())) {
            ++refused;
            continue;
          }
          ++decided;
          ASSERT_TRUE(same_number(got.data(), want.data())) << "p = " << p << ", trial " << trial << ", " << a << b;
        }
      }
    }
  }
  gmp_randclear(state);
  EXPECT_GT(decided, 2000);
  EXPECT_GT(refused, 10);  // specials and exact cancellations of the cut rows reach the refusal
}

// Exact rows (no cut): a tie rounds to even, and an exact zero sum is +0.
TEST(ReferenceFixedDot, ExactRowsRoundTiesToEvenAndGiveZeroAsPlusZero) {
  for (long p : {53L, 128L, 129L, 256L, 512L}) {
    MpfrBuffer x(3, p), w(3, p), r(1, p), want(1, p);
    for (int i = 0; i < 3; ++i) mpfr_set_ui(w.data() + i, 1, MPFR_RNDN);
    // (2^(p−1) + 1) + (2^(p−2) + 1/2) = 3·2^(p−2) + 3/2: p + 1 bits, a tie; to even, 3·2^(p−2) + 2
    mpfr_set_ui_2exp(x.data(), 1, p - 1, MPFR_RNDN);
    mpfr_add_ui(x.data(), x.data(), 1, MPFR_RNDN);
    mpfr_set_ui_2exp(x.data() + 1, 1, p - 2, MPFR_RNDN);
    mpfr_add_d(x.data() + 1, x.data() + 1, 0.5, MPFR_RNDN);
    mpfr_set_zero(x.data() + 2, -1);
    std::vector<int64_t> bases{0}, offsets{0, 1, 2};
    FixedRows fx(p, x.data(), bases, offsets), fw(p, w.data(), bases, offsets);
    ASSERT_TRUE(FixedRows::dot(fx, 0, fw, 0, r.data())) << p;
    mpfr_set_ui_2exp(want.data(), 3, p - 2, MPFR_RNDN);
    mpfr_add_ui(want.data(), want.data(), 2, MPFR_RNDN);
    EXPECT_TRUE(mpfr_equal_p(r.data(), want.data())) << p;
    mpfr_neg(x.data() + 1, x.data(), MPFR_RNDN);  // x − x + (−0) = +0
    FixedRows gx(p, x.data(), bases, offsets);
    ASSERT_TRUE(FixedRows::dot(gx, 0, fw, 0, r.data())) << p;
    EXPECT_TRUE(mpfr_zero_p(r.data()) && !mpfr_signbit(r.data())) << p;
  }
}

// A weight of m significant bits scaled by 2^k, k uniform in [−spread, 0] (so rows reach many
// binades, and beyond kMaxSpread when spread is large), with a random sign.
void draw_weight(mpfr_ptr v, int m, long spread, std::mt19937_64& rng, gmp_randstate_t state) {
  reference::MpfrBuffer t(1, m);
  mpfr_urandomb(t.data(), state);
  if (mpfr_zero_p(t.data())) mpfr_set_ui(t.data(), 1, MPFR_RNDN);
  mpfr_set(v, t.data(), MPFR_RNDN);  // exact: m ≤ p
  mpfr_mul_2si(v, v, -static_cast<long>(rng() % (spread + 1)), MPFR_RNDN);
  if (rng() & 1) mpfr_neg(v, v, MPFR_RNDN);
}

// Rows in binades (one limb a term, a binade's accumulator each) give mpfr_dot's number on
// every element they decide, in either operand's place, and decide as the rows do: random
// activations against weights of 53, 24 and 8 significant bits (binary64, f32, bf16) spread over
// 0 … 1100 binades (the subnormal range of each format included), zeros, mixed signs and
// terms that cancel exactly.
TEST(ReferenceFixedDot, BinadesEqualMpfrDotAndTheRows) {
  std::mt19937_64 rng(17);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 19);
  int64_t decided = 0, refused = 0, both = 0, from_binary64 = 0;
  for (long p : {53L, 64L, 128L, 129L, 192L, 256L, 320L, 512L}) {
    for (int m : {53, 24, 8}) {
      if (m > p) continue;
      for (int trial = 0; trial < 12; ++trial) {
        const int64_t rows = 4, n = 1 + static_cast<int64_t>(rng() % 64);
        MpfrBuffer x(rows * n, p), w(rows * n, p), got(1, p), rows_got(1, p), want(1, p);
        const long spread = std::array<long, 6>{0, 11, 40, 150, 380, 1100}[trial % 6];
        for (int64_t i = 0; i < rows * n; ++i) {
          draw(x.data() + i, trial % 3 == 2 ? 1 : 0, trial % 2 == 0 ? 12 : 70, rng, state);
          draw_weight(w.data() + i, m, spread, rng, state);
          if (rng() % 8 == 0) mpfr_set_zero(w.data() + i, (rng() & 1) ? 1 : -1);
          if (rng() % 30 == 0) mpfr_set_zero(x.data() + i, 1);
          if (i % n > 0 && rng() % 5 == 0) {  // cancels the previous term exactly
            mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
            mpfr_set(w.data() + i, w.data() + i - 1, MPFR_RNDN);
          }
        }
        std::vector<int64_t> bases, offsets;
        for (int64_t r = 0; r < rows; ++r) bases.push_back(r * n);
        for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
        FixedRows fx(p, x.data(), bases, offsets), fw(p, w.data(), bases, offsets);
        FixedRows bw(p, w.data(), bases, offsets, true);
        ASSERT_TRUE(bw.binades()) << p << " " << m;
        std::vector<double> stored(static_cast<size_t>(rows * n));  // w as binary64, where exact
        bool exact = true;
        for (int64_t i = 0; i < rows * n; ++i) {
          stored[static_cast<size_t>(i)] = mpfr_get_d(w.data() + i, MPFR_RNDN);
          exact = exact && mpfr_cmp_d(w.data() + i, stored[static_cast<size_t>(i)]) == 0;
        }
        if (exact) ++from_binary64;
        std::optional<FixedRows> dw;
        if (exact) dw.emplace(p, stored.data(), bases, offsets);
        for (int64_t a = 0; a < rows; ++a) {
          for (int64_t b = 0; b < rows; ++b) {
            by_mpfr_dot(want.data(), x, a, w, b, n);
            bool by_rows = FixedRows::dot(fx, a, fw, b, rows_got.data());
            bool in_binades = FixedRows::dot(fx, a, bw, b, got.data());
            MpfrBuffer swapped(1, p);
            ASSERT_EQ(FixedRows::dot(bw, b, fx, a, swapped.data()), in_binades);
            if (dw) {  // packed from the stored values: the same decision and number
              ASSERT_EQ(FixedRows::dot(fx, a, *dw, b, swapped.data()), in_binades) << p << " " << m << " " << trial;
              ASSERT_TRUE(!in_binades || same_number(swapped.data(), got.data()));
            }
            EXPECT_FALSE(FixedRows::dot(bw, b, bw, b, swapped.data()));  // never both in binades
            if (!in_binades) {
              ++refused;
              continue;
            }
            ++decided;
            both += by_rows;
            ASSERT_TRUE(same_number(got.data(), want.data()))
                << "p = " << p << ", m = " << m << ", trial " << trial << ", " << a << b;
            ASSERT_TRUE(!by_rows || same_number(got.data(), rows_got.data()));
          }
        }
      }
    }
  }
  gmp_randclear(state);
  EXPECT_GT(decided, 1500);
  EXPECT_GT(both, 1000);
  EXPECT_GT(refused, 10);  // rows spread beyond kMaxSpread and cancellations of cut rows
  EXPECT_GT(from_binary64, 100);
}

// What dot_group decided against the scalar kernel and mpfr_dot (check_groups).
struct GroupCounts {
  int64_t grouped = 0;  // decided by the group (each mpfr_dot's number)
  int64_t refused = 0;  // left to ExactDot by the group
  int64_t both = 0;     // decided by the group and by the scalar kernel (the same number)
};

// Every group of x's rows (x_rows rows of n entries) against every row of w through
// FixedRows::dot_group: each element it decides is mpfr_dot's number and, where FixedRows::dot
// decides it too, the scalar kernel's; `same_decisions`: the two decide the same elements. Each
// group leaves out the rows `absent` says (r[j] null), which stay untouched.
template <class Absent>
GroupCounts check_groups(const MpfrBuffer& x, const MpfrBuffer& w, const FixedRows& fx, const FixedRows& fw, int64_t n,
                         bool same_decisions, const Absent& absent, const std::string& label) {
  constexpr int64_t kGroup = FixedRows::kGroup;
  const long p = mpfr_get_prec(x.data());
  GroupCounts counts;
  MpfrBuffer want(1, p), scalar(1, p);
  for (int64_t wr = 0; wr < fw.row_count(); ++wr) {
    for (int64_t g = 0; g * kGroup < fx.row_count(); ++g) {
      MpfrBuffer got(kGroup, p);
      std::array<__mpfr_struct*, kGroup> r{};
      std::array<bool, kGroup> decided{};
      for (int64_t j = 0; j < kGroup; ++j) {
        mpfr_set_nan(got.data() + j);
        if (!absent(g * kGroup + j, wr)) r[static_cast<size_t>(j)] = got.data() + j;
      }
      FixedRows::dot_group(fx, g, fw, wr, r.data(), decided.data());
      for (int64_t j = 0; j < kGroup && g * kGroup + j < fx.row_count(); ++j) {
        const int64_t xr = g * kGroup + j;
        const std::string where = label + ", rows " + std::to_string(xr) + " " + std::to_string(wr);
        const bool by_scalar = FixedRows::dot(fx, xr, fw, wr, scalar.data());
        if (r[static_cast<size_t>(j)] == nullptr || !decided[static_cast<size_t>(j)]) {
          EXPECT_TRUE(mpfr_nan_p(got.data() + j)) << where;  // untouched
          if (r[static_cast<size_t>(j)] == nullptr) continue;
          ++counts.refused;
          EXPECT_TRUE(!same_decisions || !by_scalar) << where;
          continue;
        }
        ++counts.grouped;
        EXPECT_TRUE(!same_decisions || by_scalar) << where;
        by_mpfr_dot(want.data(), x, xr, w, wr, n);
        EXPECT_TRUE(same_number(got.data() + j, want.data())) << where;
        if (by_scalar) {
          ++counts.both;
          EXPECT_TRUE(same_number(got.data() + j, scalar.data())) << where;
        }
      }
    }
  }
  return counts;
}

// Eight rows of activations at once against a weight row (FixedRows::dot_group, AVX-512 IFMA):
// each element it decides is the scalar kernel's (FixedRows::dot on the same rows) and
// mpfr_dot's number; groups cut short by the rows' count (13 rows: 8 + 5), rows cut by their
// alignment, weights of 24 and 8 significant bits over several binades, signs mixed, a NaN, and
// rows long enough (5000 entries) that the columns are flushed more than once.
TEST(ReferenceFixedDot, GroupsOfEightRowsAreTheScalarKernels) {
  if (!reference::has_ifma()) GTEST_SKIP() << "this CPU has no AVX-512 IFMA: dot_group is not used here";
  std::mt19937_64 rng(29);
  GmpRandom random(31);
  auto& state = random.state;
  int64_t grouped = 0;
  for (int m : {24, 8}) {
    for (int trial = 0; trial < 6; ++trial) {
      // trial 5: every digit and weight near its largest, 12 000 terms: the columns overflow
      // unless flushed
      const int64_t x_rows = trial % 2 == 0 ? 13 : 8, w_rows = 3, n = trial == 5 ? 12000 : 1 + static_cast<int64_t>(rng() % 300);
      const long p = 128;
      MpfrBuffer x(x_rows * n, p), w(w_rows * n, p);
      std::vector<double> stored(static_cast<size_t>(w_rows * n));
      for (int64_t i = 0; i < x_rows * n; ++i) {
        draw(x.data() + i, trial == 5 ? 2 : 0, trial == 5 ? 0 : (trial % 3 == 0 ? 70 : 12), rng, state);
        if (trial == 5) mpfr_abs(x.data() + i, x.data() + i, MPFR_RNDN);
      }
      for (int64_t i = 0; i < w_rows * n; ++i) {
        draw_weight(w.data() + i, m, std::array<long, 3>{0, 40, 150}[trial % 3], rng, state);
        if (trial == 5) mpfr_set_d(w.data() + i, 1.0 - std::ldexp(1.0, -m), MPFR_RNDN);
        stored[static_cast<size_t>(i)] = mpfr_get_d(w.data() + i, MPFR_RNDN);  // exact: m ≤ 24, in range
      }
      if (trial == 4) mpfr_set_nan(x.data() + 3 * n + 1);  // row 3 special
      std::vector<int64_t> x_bases, w_bases, offsets;
      for (int64_t r = 0; r < x_rows; ++r) x_bases.push_back(r * n);
      for (int64_t r = 0; r < w_rows; ++r) w_bases.push_back(r * n);
      for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
      FixedRows fx(p, x.data(), x_bases, offsets), fw(p, stored.data(), w_bases, offsets);
      fx.prepare_digits();
      ASSERT_TRUE(FixedRows::group_ready(fx, fw)) << m << " " << trial;
      const auto none = [](int64_t, int64_t) { return false; };
      grouped += check_groups(x, w, fx, fw, n, true, none, std::to_string(m) + " " + std::to_string(trial)).grouped;
    }
  }
  EXPECT_GT(grouped, 300);
}

// Eight rows of activations at once against a row of activations (both 65–128 bits, rows of 3
// limbs: the attention's q·kᵀ and att·v), FixedRows::dot_group against the scalar kernel and
// mpfr_dot: random rows at 128 and 96 bits, rows cut by their alignment (spreads of 70 and 200
// bits), groups cut short (13 rows: 8 + 5) and rows left out of a group, rows of different
// lengths (trailing zeros, as a causal attention's rows have), mixed signs, terms that cancel
// exactly (sums near zero and exactly zero, refused or decided right), a NaN and an infinity,
// and rows of 5000 and 12 000 entries (every digit near its largest) that the columns flush.
TEST(ReferenceFixedDot, GroupsOfActivationRowsAreExact) {
  if (!reference::has_ifma()) GTEST_SKIP() << "this CPU has no AVX-512 IFMA: dot_group is not used here";
  std::mt19937_64 rng(37);
  GmpRandom random(41);
  auto& state = random.state;
  GroupCounts total;
  for (int trial = 0; trial < 12; ++trial) {
    const long p = trial % 4 == 3 && trial != 11 ? 96 : 128;
    const int64_t x_rows = trial % 2 == 0 ? 13 : 8, w_rows = 3;
    const int64_t n = trial == 6 ? 5000 : (trial == 11 ? 12000 : 1 + static_cast<int64_t>(rng() % 300));
    const int style = trial == 11 ? 2 : (trial == 9 ? 1 : 0);
    const long spread = trial == 11 ? 0 : std::array<long, 4>{12, 70, 2, 200}[trial % 4];
    MpfrBuffer x(x_rows * n, p), w(w_rows * n, p);
    for (int64_t i = 0; i < x_rows * n; ++i) draw(x.data() + i, style, spread, rng, state);
    for (int64_t i = 0; i < w_rows * n; ++i) draw(w.data() + i, style, spread, rng, state);
    for (int64_t i = 1; i < x_rows * n; ++i) {
      if (i % n > 0 && rng() % 5 == 0) mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);  // cancels the term
    }
    for (int64_t i = 1; i < w_rows * n; ++i) {  // before if the x entries agree (rows 0 and 1: every x entry pair)
      if (i % n % 2 == 1 && (trial % 3 == 0 || rng() % 5 == 0)) mpfr_set(w.data() + i, w.data() + i - 1, MPFR_RNDN);
    }
    if (trial % 3 == 0) {  // x rows 0 and 1 in pairs that cancel: Σ = 0 exactly against w rows of equal pairs
      for (int64_t i = 1; i < 2 * n; i += 2) {
        if (i % n != 0) mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
      }
    }
    for (int64_t r = 0; r < x_rows; ++r) {  // row r ends at (r + 1)·n/x_rows (causal) or at random
      const int64_t end = trial % 3 == 1 ? (r + 1) * n / x_rows : static_cast<int64_t>(rng() % (n + 1));
      for (int64_t k = trial % 3 == 0 ? n : end; k < n; ++k) mpfr_set_zero(x.data() + r * n + k, 1);
    }
    if (trial == 11) {  // every digit near its largest: U = 2^192 − X, X = 2^41 − 1; W's 128 bits set from bit 24
      auto below = [](mpfr_ptr v, long e, bool negative) {  // ±(1 − 2^−p)·2^e
        mpfr_set_ui_2exp(v, 1, e, MPFR_RNDN);
        mpfr_nextbelow(v);
        if (negative) mpfr_neg(v, v, MPFR_RNDN);
      };
      for (int64_t i = 0; i < x_rows * n; ++i) {
        if (i % n == 0) mpfr_set_ui(x.data() + i, 1, MPFR_RNDN);
        if (i % n != 0 && !mpfr_zero_p(x.data() + i)) below(x.data() + i, -150, true);
      }
      for (int64_t i = 0; i < w_rows * n; ++i) {
        if (i % n == 0) mpfr_set_d(w.data() + i, 0.5, MPFR_RNDN);
        if (i % n != 0) below(w.data() + i, -40, rng() % 4 == 0);
      }
    }
    if (trial == 4) mpfr_set_nan(x.data() + 3 * n + n / 2);  // row 3 special
    if (trial == 5) mpfr_set_inf(w.data() + 1 * n + n / 3, -1);  // w row 1 special
    std::vector<int64_t> x_bases, w_bases, offsets;
    for (int64_t r = 0; r < x_rows; ++r) x_bases.push_back(r * n);
    for (int64_t r = 0; r < w_rows; ++r) w_bases.push_back(r * n);
    for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
    FixedRows fx(p, x.data(), x_bases, offsets), fw(p, w.data(), w_bases, offsets);
    ASSERT_EQ(fx.limbs(), 3);
    ASSERT_EQ(fw.limbs(), 3);
    FixedRows::prepare_row_groups(fx, fw);
    ASSERT_TRUE(FixedRows::group_ready(fx, fw)) << trial;
    const auto absent = [&](int64_t xr, int64_t wr) { return trial % 2 == 1 && (xr + wr) % 3 == 0; };
    const GroupCounts counts = check_groups(x, w, fx, fw, n, false, absent, "trial " + std::to_string(trial));
    total.grouped += counts.grouped, total.refused += counts.refused, total.both += counts.both;
  }
  EXPECT_GT(total.grouped, 250);
  EXPECT_GT(total.both, 200);
  EXPECT_GT(total.refused, 5);  // the zero sums, the special rows and the cancellations
}

// Weights packed from binary64 values (a parameter read where it is stored) are the rows of the
// same values as MPFR numbers, subnormals and both ends of the exponent range included.
TEST(ReferenceFixedDot, BinadesFromBinary64AreThoseOfTheSameNumbers) {
  const std::vector<double> weights = {0x1p-1074, -0x1.8p-1070, 0x1.8p-1022, 0x1p-1000, -0x1.fffffffffffffp-1023,
                                       0x1.234p+1000, -0x1.fffffffffffffp+1023, 0x1p+990, 0.0, -0.0, 1.0, 0x1p-60};
  for (long p : {53L, 128L, 256L, 512L}) {
    const int64_t n = 4, rows = static_cast<int64_t>(weights.size()) / n;
    MpfrBuffer w(rows * n, p), x(rows * n, p), a(1, p), b(1, p);
    for (int64_t i = 0; i < rows * n; ++i) {
      mpfr_set_d(w.data() + i, weights[static_cast<size_t>(i)], MPFR_RNDN);
      mpfr_set_si_2exp(x.data() + i, 3 + 2 * i, -static_cast<long>(i), MPFR_RNDN);
    }
    std::vector<int64_t> bases, offsets;
    for (int64_t r = 0; r < rows; ++r) bases.push_back(r * n);
    for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
    FixedRows fx(p, x.data(), bases, offsets), from_mpfr(p, w.data(), bases, offsets, true);
    FixedRows from_binary64(p, weights.data(), bases, offsets);
    ASSERT_TRUE(from_mpfr.binades() && from_binary64.binades());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t q = 0; q < rows; ++q) {
        const bool decided = FixedRows::dot(fx, q, from_mpfr, r, a.data());
        ASSERT_EQ(FixedRows::dot(fx, q, from_binary64, r, b.data()), decided) << p << " row " << r;
        if (!decided) continue;
        by_mpfr_dot(b.data(), x, q, w, r, n);
        EXPECT_TRUE(same_number(a.data(), b.data())) << p << " row " << r;
        FixedRows::dot(fx, q, from_binary64, r, b.data());
        EXPECT_TRUE(same_number(a.data(), b.data())) << p << " row " << r;
      }
    }
  }
}

// Operands of 57 or more significant bits stay in rows: a binade would not hold them in a limb.
TEST(ReferenceFixedDot, WideSignificandsStayInRows) {
  MpfrBuffer w(2, 128);
  mpfr_set_ui_2exp(w.data(), 1, 60, MPFR_RNDN);
  mpfr_add_ui(w.data(), w.data(), 1, MPFR_RNDN);  // 61 significant bits
  mpfr_set_d(w.data() + 1, 0.1, MPFR_RNDN);
  std::vector<int64_t> bases{0}, offsets{0, 1};
  EXPECT_FALSE(FixedRows(128, w.data(), bases, offsets, true).binades());
  mpfr_set_d(w.data(), 3.0, MPFR_RNDN);
  EXPECT_TRUE(FixedRows(128, w.data(), bases, offsets, true).binades());
  EXPECT_FALSE(FixedRows(128, w.data(), bases, offsets).binades());
}

// Two rows of 65–128-bit numbers (3 × 3 limbs) leave out each product's two low limbs and always
// take Ziv's test: every element decided is mpfr_dot's number, and almost every element is
// decided (what is left out is 2^60 times below the rounding bit), an exact zero sum or a deep
// cancellation being left to ExactDot.
TEST(ReferenceFixedDot, HighLimbsOfActivationRowsDecideAlmostEveryElement) {
  std::mt19937_64 rng(23);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 29);
  int64_t decided = 0, elements = 0;
  for (long p : {65L, 100L, 128L}) {
    for (int trial = 0; trial < 16; ++trial) {
      const int64_t rows = 4, n = 1 + static_cast<int64_t>(rng() % 256);
      MpfrBuffer x(rows * n, p), w(rows * n, p), got(1, p), want(1, p);
      for (int64_t i = 0; i < rows * n; ++i) {
        draw(x.data() + i, trial % 3 == 1 ? 2 : 0, trial % 2 == 0 ? 12 : 70, rng, state);
        draw(w.data() + i, trial % 3 == 2 ? 2 : 0, 12, rng, state);
        if (rng() % 30 == 0) mpfr_set_zero(w.data() + i, 1);
        if (trial == 15 && i % n > 0 && rng() % 2 == 0) {  // cancels the previous term exactly
          mpfr_neg(x.data() + i, x.data() + i - 1, MPFR_RNDN);
          mpfr_set(w.data() + i, w.data() + i - 1, MPFR_RNDN);
        }
      }
      std::vector<int64_t> bases, offsets;
      for (int64_t r = 0; r < rows; ++r) bases.push_back(r * n);
      for (int64_t k = 0; k < n; ++k) offsets.push_back(k);
      FixedRows fx(p, x.data(), bases, offsets), fw(p, w.data(), bases, offsets);
      ASSERT_EQ(fx.limbs(), 3);
      ASSERT_EQ(fw.limbs(), 3);
      for (int64_t a = 0; a < rows; ++a) {
        for (int64_t b = 0; b < rows; ++b, ++elements) {
          if (!FixedRows::dot(fx, a, fw, b, got.data())) continue;
          ++decided;
          by_mpfr_dot(want.data(), x, a, w, b, n);
          ASSERT_TRUE(same_number(got.data(), want.data())) << "p = " << p << ", trial " << trial << ", " << a << b;
        }
      }
    }
  }
  gmp_randclear(state);
  EXPECT_GT(decided, elements * 9 / 10) << decided << " of " << elements;
}

// Every example's entries: the default contraction gives mpfr_dot's bits on every element (on
// two threads; the GPT at T = 16 takes the activation groups of dot_group where IFMA is).
TEST(ReferenceFixedDot, EveryExampleEqualsMpfrDotThroughTheInterpreter) {
  struct Case { const char* file; const char* entry; std::vector<lang::Binding> dims; };
  const std::vector<Case> cases = {
      {"mse.psk", "mse", {{"N", 5}}},           {"layernorm.psk", "normalize", {{"T", 3}}},
      {"rmsnorm.psk", "normalize", {{"T", 3}}}, {"softmax.psk", "probabilities", {{"T", 2}}},
      {"mlp.psk", "loss", {{"B", 3}}},          {"mlp.psk", "logits", {{"B", 3}}},
      {"gpt_tiny.psk", "loss", {{"T", 4}}},     {"gpt_tiny.psk", "logits", {{"T", 4}}},
      {"gpt.psk", "loss", {{"T", 5}}},          {"gpt.psk", "logits", {{"T", 3}}},
      {"gpt.psk", "loss", {{"T", 16}}},  // q·kᵀ and att·v in whole groups of eight (IFMA)
      {"llama.psk", "logits", {{"T", 4}}},      {"solver/equal_terms.psk", "total", {{"T", 2}}},
      {"solver/unshifted_softmax.psk", "expected", {{"T", 2}}},
  };
  int64_t elements = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " " + c.entry);
    lang::FrontendOptions options;
    options.dims = c.dims;
    options.entry = c.entry;
    ir::Program program =
        lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + c.file), options);
    reference::ParameterStore params = reference::synthesize_parameters(program, 1, 1);
    const ir::Function& function = reference::find_entry(program, c.entry);
    int64_t range = 0;
    for (const ir::Type& type : function.argument_types) {
      if (type.kind == ir::ElemKind::Int && range == 0) range = reference::default_token_range(program);
    }
    auto inputs = reference::synthesize_inputs(function, 3, range);
    for (long bits : {128L, 256L, 512L, 0L}) {  // 0: 128 bits, the parameters rounded to f32 (binades)
      if (bits == 0) {
        bits = 128;
        for (const ir::Param& param : program.params) {
          std::vector<double> values = *params.find(param.path);
          for (double& v : values) v = static_cast<float>(v);
          params.set(param.path, std::move(values));
        }
      }
      reference::RunOptions run_options;
      run_options.bits = bits;
      run_options.threads = 2;
      std::vector<MpfrValue> fast = run<reference::MpfrArith>(program, inputs, run_options, params, c.entry);
      reference::set_contraction_sums(reference::ContractionSums::MpfrDot);
      std::vector<MpfrValue> slow = run<reference::MpfrArith>(program, inputs, run_options, params, c.entry);
      reference::set_contraction_sums(reference::ContractionSums::Exact);
      ASSERT_EQ(fast.size(), slow.size());
      for (size_t v = 0; v < fast.size(); ++v) {
        for (int64_t i = 0; i < fast[v].size(); ++i, ++elements) {
          ASSERT_TRUE(same_number(fast[v].real(i), slow[v].real(i))) << bits << " bits, element " << i;
        }
      }
    }
  }
  EXPECT_GT(elements, 1000);
}

}  // namespace
}  // namespace presk::testing
