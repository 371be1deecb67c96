// rounding_error (binary64 arithmetic) against the distance to round_exact's correctly rounded
// value (exact rationals), on random doubles of every binade, subnormals, ties, the largest
// finite values and the values that overflow each format.
#include "support/rounding_error.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace presk {
namespace {

// |round_exact(x) − x| by exact rationals: the independent derivation.
double expected(double x, BinaryFormat format) {
  const double rounded = round_exact(ExactReal::from_double(x), format);
  if (std::isinf(rounded)) return std::numeric_limits<double>::infinity();
  ExactReal difference = ExactReal::from_double(rounded) - ExactReal::from_double(x);
  return std::fabs(difference.to_double());
}

void check(double x) {
  for (BinaryFormat format : {kBinary32, kBfloat16, kBinary64}) {
    EXPECT_EQ(rounding_error(x, format), expected(x, format)) << x << " into precision " << format.precision;
  }
}

TEST(RoundingError, AgreesWithTheExactDistanceOnRandomDoubles) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = random();
    const double x = std::bit_cast<double>(bits);
    if (!std::isfinite(x) || std::fabs(x) > 1e300 || std::fabs(x) < 1e-300) continue;
    check(x);
    check(std::ldexp(x, -std::ilogb(x) + static_cast<int>(random() % 300) - 150));  // the formats' range
  }
}

TEST(RoundingError, TiesSubnormalsAndOverflow) {
  check(1.0 + std::ldexp(1.0, -24));                        // an f32 tie: rounds to even
  check(1.0 + 3 * std::ldexp(1.0, -24));
  check(1.0 + std::ldexp(1.0, -8));                         // a bf16 tie
  check(std::ldexp(1.0, -140));                             // f32 subnormal
  check(std::ldexp(1.5, -149) * 1.25);                      // below f32's smallest subnormal
  check(std::ldexp(1.0, -160));                             // rounds to zero
  check(std::numeric_limits<float>::max());
  check(std::ldexp(2.0 - std::ldexp(1.0, -24), 127));       // the f32 overflow threshold: a tie to 2^128
  check(std::ldexp(1.0, 128) * 0.999999999);
  check(std::numeric_limits<double>::max());
  check(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(rounding_error(0.0, kBinary32), 0.0);
  EXPECT_EQ(rounding_error(std::ldexp(1.0, 200), kBinary32), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace presk
