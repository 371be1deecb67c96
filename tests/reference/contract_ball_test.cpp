// The ball contraction (contract_ball.cpp) against values derived apart from it: each output
// ball holds the exact least and greatest sums over its operands' balls (each term's extremes
// are at its box's corners, summed exactly at 1024 bits), its midpoint is mpfr_dot's of the
// midpoints, its radius is within a small factor of arb_dot's, an infinite radius reaches the
// outputs it touches, and an operand with a NaN is left to arb_dot.
#include <arb.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <random>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/contract_exact.h"
#include "exec/reference/contraction_plan.h"
#include "exec/reference/value.h"

namespace presk::testing {
namespace {

using reference::BallArith;
using Ball = reference::Value<BallArith>;

// Balls of random midpoints (spread over 2^±20) and radii: 0 (an exact operand), or up to
// `spread` times the midpoint.
Ball random_balls(const BallArith& arith, const reference::Shape& shape, double spread, std::mt19937_64& random) {
  Ball v = Ball::make_real(arith, shape);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int64_t i = 0; i < v.size(); ++i) {
    const double m = std::ldexp(unit(random), static_cast<int>(random() % 41) - 20);
    arb_set_d(v.real(i), m);
    if (spread > 0) mag_set_d(arb_radref(v.real(i)), std::fabs(m) * spread * (unit(random) + 1));
  }
  return v;
}

struct Exact {
  mpfr_t v;
  explicit Exact(long bits) { mpfr_init2(v, bits); mpfr_set_zero(v, 1); }
  ~Exact() { mpfr_clear(v); }
};

// The least and greatest exact Σ x·w over the balls of output o's terms, at 1024 bits.
void exact_range(const reference::ContractionPlan& plan, const Ball& x, const Ball& w, int64_t o, mpfr_t low,
                 mpfr_t high) {
  int64_t x0 = 0, w0 = 0;
  reference::free_offsets(plan, o, x0, w0);
  Exact xe(1024), we(1024), product(1024), least(1024), most(1024);
  mpfr_set_zero(low, 1);
  mpfr_set_zero(high, 1);
  reference::for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const reference::Letter& inner) {
    for (int64_t k = 0; k < inner.extent; ++k) {
      const arb_struct* a = x.real(xo + k * inner.x_stride);
      const arb_struct* b = w.real(wo + k * inner.w_stride);
      mpfr_set_inf(least.v, 1);
      mpfr_set_inf(most.v, -1);
      for (int corner = 0; corner < 4; ++corner) {
        arf_get_mpfr(xe.v, arb_midref(a), MPFR_RNDN);
        arf_get_mpfr(we.v, arb_midref(b), MPFR_RNDN);
        Exact r(1024);
        mpfr_set_d(r.v, mag_get_d(arb_radref(a)), MPFR_RNDN);  // the radii here are doubles
        (corner & 1) != 0 ? mpfr_add(xe.v, xe.v, r.v, MPFR_RNDN) : mpfr_sub(xe.v, xe.v, r.v, MPFR_RNDN);
        mpfr_set_d(r.v, mag_get_d(arb_radref(b)), MPFR_RNDN);
        (corner & 2) != 0 ? mpfr_add(we.v, we.v, r.v, MPFR_RNDN) : mpfr_sub(we.v, we.v, r.v, MPFR_RNDN);
        mpfr_mul(product.v, xe.v, we.v, MPFR_RNDN);  // exact at 1024 bits
        mpfr_min(least.v, least.v, product.v, MPFR_RNDN);
        mpfr_max(most.v, most.v, product.v, MPFR_RNDN);
      }
      mpfr_add(low, low, least.v, MPFR_RNDN);
      mpfr_add(high, high, most.v, MPFR_RNDN);
    }
  });
}

bool contains(const arb_struct* ball, const mpfr_t point) {
  arb_t p;
  arb_init(p);
  arf_set_mpfr(arb_midref(p), point);
  const bool in = arb_contains(ball, p);
  arb_clear(p);
  return in;
}

TEST(ReferenceContractBall, HoldsEveryExactSumOverItsOperandsAndIsNoWiderThanArbDots) {
  std::mt19937_64 random(37);
  struct Case {
    const char* spec;
    reference::Shape x, w;
    double x_spread, w_spread;
  };
  const Case cases[] = {{"td,vd->tv", {3, 40}, {5, 40}, 1e-3, 0},     // a weight, exact
                        {"td,dv->tv", {4, 33}, {33, 3}, 1e-4, 1e-2},  // two balls
                        {"bij,bjk->bk", {2, 3, 4}, {2, 4, 2}, 0, 1e-5},
                        {"td,vd->tv", {2, 17}, {3, 17}, 0, 0}};       // exact operands: the rounding alone
  for (long bits : {64L, 128L}) {
    const BallArith arith(bits);
    for (const Case& c : cases) {
      const Ball x = random_balls(arith, c.x, c.x_spread, random);
      const Ball w = random_balls(arith, c.w, c.w_spread, random);
      const reference::ContractionPlan plan = reference::plan_contraction(c.spec, x.shape, w.shape);
      int64_t outputs = 1;
      for (const reference::Letter& letter : plan.free) outputs *= letter.extent;
      Ball out = Ball::make_real(arith, {outputs});
      ASSERT_TRUE(reference::contract_ball(arith, plan, x, w, out)) << c.spec;
      for (int64_t o = 0; o < outputs; ++o) {
        Exact low(1024), high(1024), mid(bits);
        exact_range(plan, x, w, o, low.v, high.v);
        EXPECT_TRUE(contains(out.real(o), low.v)) << c.spec << " " << bits << " output " << o;
        EXPECT_TRUE(contains(out.real(o), high.v)) << c.spec << " " << bits << " output " << o;
        // The midpoint: the exact sum of the midpoints' products rounded once (mpfr_dot's).
        std::vector<Exact> xs, ws;
        xs.reserve(64);
        ws.reserve(64);
        std::vector<mpfr_ptr> xp, wp;
        int64_t x0 = 0, w0 = 0;
        reference::free_offsets(plan, o, x0, w0);
        reference::for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const reference::Letter& inner) {
          for (int64_t k = 0; k < inner.extent; ++k) {
            arf_get_mpfr(xs.emplace_back(bits).v, arb_midref(x.real(xo + k * inner.x_stride)), MPFR_RNDN);
            arf_get_mpfr(ws.emplace_back(bits).v, arb_midref(w.real(wo + k * inner.w_stride)), MPFR_RNDN);
          }
        });
        for (size_t k = 0; k < xs.size(); ++k) {
          xp.push_back(xs[k].v);
          wp.push_back(ws[k].v);
        }
        mpfr_dot(mid.v, xp.data(), wp.data(), xp.size(), MPFR_RNDN);
        mpfr_t got;
        mpfr_init2(got, bits);
        arf_get_mpfr(got, arb_midref(out.real(o)), MPFR_RNDN);
        EXPECT_TRUE(mpfr_equal_p(got, mid.v)) << c.spec << " " << bits << " output " << o;
        // arb_dot's ball of the same terms: ours is at most twice as wide, plus an ulp.
        arb_t theirs;
        arb_init(theirs);
        reference::for_each_run(plan, x0, w0, [&](int64_t xo, int64_t wo, const reference::Letter& inner) {
          arith.dot_accumulate(theirs, x.real(xo), inner.x_stride, w.real(wo), inner.w_stride, inner.extent);
        });
        const double ulp = mpfr_zero_p(got) ? 0 : std::ldexp(1.0, static_cast<int>(mpfr_get_exp(got) - bits));
        EXPECT_LE(mag_get_d(arb_radref(out.real(o))), 2 * mag_get_d(arb_radref(theirs)) + 2 * ulp)
            << c.spec << " " << bits << " output " << o;
        arb_clear(theirs);
        mpfr_clear(got);
      }
    }
  }
}

// An infinite radius makes the radius of every output it reaches infinite (x's row 0 reaches
// outputs 0…2, row 1 does not), the midpoints as before; a NaN is left to arb_dot.
TEST(ReferenceContractBall, AnInfiniteRadiusReachesItsOutputsAndANanIsLeftToArbDot) {
  std::mt19937_64 random(7);
  const BallArith arith(128);
  Ball x = random_balls(arith, {2, 8}, 1e-3, random), w = random_balls(arith, {3, 8}, 0, random);
  arb_zero(w.real(9));  // a zero weight against the infinite radius: 0·∞ is no bound either
  const reference::ContractionPlan plan = reference::plan_contraction("td,vd->tv", x.shape, w.shape);
  Ball finite = Ball::make_real(arith, {6}), out = Ball::make_real(arith, {6});
  ASSERT_TRUE(reference::contract_ball(arith, plan, x, w, finite));
  mag_inf(arb_radref(x.real(1)));
  ASSERT_TRUE(reference::contract_ball(arith, plan, x, w, out));
  for (int64_t o = 0; o < 6; ++o) {
    EXPECT_EQ(mag_is_inf(arb_radref(out.real(o))) != 0, o < 3) << o;
    EXPECT_TRUE(arf_equal(arb_midref(out.real(o)), arb_midref(finite.real(o)))) << o;
  }
  arb_indeterminate(w.real(3));
  EXPECT_FALSE(reference::contract_ball(arith, plan, x, w, out));
}

}  // namespace
}  // namespace presk::testing
