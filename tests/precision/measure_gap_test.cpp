// The measured gap's treatment of values that are not finite (precision/measure.h): the same
// ±∞ on both sides agrees, a gap of 0 (masked scores, log-probabilities of 0); NaN against
// anything, ±∞ against a finite value or the other infinity, is +∞.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "precision/measure.h"

namespace presk::precision {
namespace {

using Exact = reference::Value<reference::MpfrArith>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The gap of one native element against one exact element, next to a finite pair 0.5 apart
// (native 2.5, exact 3): the finite pair's 0.5 is the gap unless the other pair disagrees.
MeasuredGap gap_of(double native_value, double exact_value) {
  const reference::MpfrArith arith(128);
  Tensor native(ElementType::f64, {2});
  native.set(0, 2.5);
  native.set(1, native_value);
  Exact exact = Exact::make_real(arith, {2});
  arith.set_double(exact.real(0), 3.0);
  arith.set_double(exact.real(1), exact_value);
  MeasuredGap gap;
  add_gap(arith, native, exact, gap);
  return gap;
}

TEST(MeasuredGap, EqualInfinitiesAgree) {
  EXPECT_EQ(gap_of(kInf, kInf).absolute, 0.5);
  EXPECT_EQ(gap_of(-kInf, -kInf).absolute, 0.5);
  // The infinity has no magnitude: a relative budget is scaled by the finite values.
  EXPECT_EQ(gap_of(-kInf, -kInf).magnitude, 3.0);
  EXPECT_EQ(gap_of(-kInf, -kInf).relative(), 0.5 / 3.0);
}

TEST(MeasuredGap, EverythingElseNotFiniteIsInfinite) {
  const std::pair<double, double> cases[] = {
      {kInf, -kInf}, {-kInf, kInf}, {kInf, 1.0}, {1.0, kInf}, {-kInf, 1.0}, {1.0, -kInf},
      {kNaN, 1.0},   {1.0, kNaN},   {kNaN, kNaN}, {kNaN, kInf}, {kInf, kNaN},
  };
  for (const auto& [native, exact] : cases) {
    EXPECT_EQ(gap_of(native, exact).absolute, kInf) << native << " against " << exact;
  }
  EXPECT_EQ(gap_of(1.0, 1.0).absolute, 0.5);  // the finite pair alone
}

}  // namespace
}  // namespace presk::precision
