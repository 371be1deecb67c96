// bf16 and round_to against independent computations: exact distances in long double to the
// two neighbouring bf16 values (never the bias trick of number_format.cpp), on 10^6 random
// f32 patterns and every special class; f32 rounding against the hardware conversion.
#include "support/number_format.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace presk {
namespace {

// The value of a bf16 pattern as a long double, treating the pattern after the largest
// finite one (0x7f80, "Inf") as the real number 2^128 it would be without overflow.
long double bf16_real(uint32_t magnitude_bits) {
  if (magnitude_bits == 0x7f80u) return std::ldexp(1.0L, 128);
  return static_cast<long double>(std::bit_cast<float>(magnitude_bits << 16));
}

// RNE by comparing exact distances: candidates are the bf16 below (truncation) and the one
// above; the nearer wins, a tie goes to the even pattern. Finite non-NaN input only.
uint16_t reference_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint32_t sign = bits & 0x80000000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  uint32_t below = magnitude >> 16;
  uint32_t above = below + 1;
  long double x = std::fabs(static_cast<long double>(value));
  long double to_below = x - bf16_real(below);
  long double to_above = bf16_real(above) - x;
  uint32_t chosen = below;
  if (to_above < to_below || (to_above == to_below && (below & 1u) != 0)) chosen = above;
  if (x == bf16_real(below)) chosen = below;
  return static_cast<uint16_t>((sign >> 16) | chosen);
}

TEST(Bf16, MillionRandomF32AgreeWithExactDistances) {
  std::mt19937_64 generator(20240611);
  int checked = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    uint32_t bits = static_cast<uint32_t>(generator());
    float value = std::bit_cast<float>(bits);
    if (!std::isfinite(value)) continue;
    ASSERT_EQ(bf16_from_f32(value), reference_bf16(value)) << std::hex << "bits 0x" << bits;
    ++checked;
  }
  EXPECT_GT(checked, 990'000);
}

TEST(Bf16, RandomValuesNearTiesAgree) {
  // Random patterns whose dropped half is 0x8000 +- 1: ties and their neighbours.
  std::mt19937 generator(7);
  for (int i = 0; i < 200'000; ++i) {
    uint32_t high = static_cast<uint32_t>(generator()) & 0x7f7fu;
    uint32_t low = 0x7fffu + static_cast<uint32_t>(generator() % 3);
    uint32_t sign = (static_cast<uint32_t>(generator()) & 1u) << 31;
    float value = std::bit_cast<float>((high << 16) | low | sign);
    ASSERT_EQ(bf16_from_f32(value), reference_bf16(value)) << value;
  }
}

TEST(Bf16, SpecialClasses) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_from_f32(0.0f), 0x0000);
  EXPECT_EQ(bf16_from_f32(-0.0f), 0x8000);
  EXPECT_EQ(bf16_from_f32(inf), 0x7f80);
  EXPECT_EQ(bf16_from_f32(-inf), 0xff80);
  // Smallest f32 subnormal: far below half the smallest bf16 subnormal (2^-133) -> 0.
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x00000001u)), 0x0000);
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x80000001u)), 0x8000);
  // Subnormals: 2^-133 exactly is the smallest bf16 subnormal; half of it ties to 0 (even).
  EXPECT_EQ(bf16_from_f32(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(bf16_from_f32(std::ldexp(1.0f, -134)), 0x0000);
  EXPECT_EQ(bf16_from_f32(std::ldexp(3.0f, -134)), 0x0002);  // 1.5 ulp ties up to 2 (even)
  EXPECT_EQ(bf16_from_f32(-std::ldexp(3.0f, -134)), 0x8002);
  // Largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x007fffffu)), 0x0080);
  // Largest finite bf16 stays; f32 max rounds to Inf; the tie between max and 2^128 too.
  EXPECT_EQ(bf16_from_f32(0x1.fep127f), 0x7f7f);
  EXPECT_EQ(bf16_from_f32(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x7f7f8000u)), 0x7f80);  // tie -> even (Inf)
  EXPECT_EQ(bf16_from_f32(std::bit_cast<float>(0x7f7f7fffu)), 0x7f7f);  // just below the tie
  EXPECT_EQ(bf16_from_f32(-std::numeric_limits<float>::max()), 0xff80);
  // Ties both ways: 1 + 2^-8 lies halfway between 1 (even) and 1 + 2^-7 (odd) -> 1;
  // 1 + 3*2^-8 halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even) -> up.
  EXPECT_EQ(bf16_from_f32(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(bf16_from_f32(-(1.0f + 0x1p-8f)), 0xbf80);
  EXPECT_EQ(bf16_from_f32(-(1.0f + 3 * 0x1p-8f)), 0xbf82);
  EXPECT_EQ(bf16_from_f32(1.0f + 0x1p-8f + 0x1p-23f), 0x3f81);  // just above a tie
}

TEST(Bf16, NanStaysQuietNan) {
  for (uint32_t bits : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff800001u,
                        0x7fffffffu, 0x7f80ffffu}) {
    uint16_t result = bf16_from_f32(std::bit_cast<float>(bits));
    EXPECT_TRUE(std::isnan(f32_from_bf16(result))) << std::hex << bits;
    EXPECT_NE(result & 0x0040, 0) << "quiet bit set for " << std::hex << bits;
    EXPECT_EQ(result & 0x8000, (bits >> 16) & 0x8000) << "sign kept for " << std::hex << bits;
  }
}

TEST(Bf16, EveryPatternRoundTripsExactly) {
  for (uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    float value = f32_from_bf16(static_cast<uint16_t>(pattern));
    uint32_t expected_bits = pattern << 16;
    ASSERT_EQ(std::memcmp(&value, &expected_bits, 4), 0);
    if (std::isnan(value)) continue;
    ASSERT_EQ(bf16_from_f32(value), pattern);
    ASSERT_EQ(round_to(value, ElementType::bf16), static_cast<double>(value));
  }
}

TEST(RoundTo, UnitRoundoffs) {
  EXPECT_EQ(unit_roundoff(ElementType::f64), std::ldexp(1.0, -53));
  EXPECT_EQ(unit_roundoff(ElementType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(unit_roundoff(ElementType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(unit_roundoff(ElementType::i8), 0.0);
}

TEST(RoundTo, F64ToF32MatchesHardwareConversion) {
  std::mt19937_64 generator(99);
  for (int i = 0; i < 300'000; ++i) {
    double value = std::bit_cast<double>(generator());
    if (std::isnan(value)) continue;
    double expected = static_cast<double>(static_cast<float>(value));  // RNE on x86-64
    ASSERT_EQ(std::bit_cast<uint64_t>(round_to(value, ElementType::f32)),
              std::bit_cast<uint64_t>(expected))
        << value;
  }
}

// The bf16 neighbours of a double in the normal range: truncate the significand to 7
// fraction bits (the pattern below), add one unit (above); compare exact distances.
double reference_f64_to_bf16(double value) {
  uint64_t bits = std::bit_cast<uint64_t>(std::fabs(value));
  double below = std::bit_cast<double>(bits & ~((uint64_t(1) << 45) - 1));
  double unit = std::ldexp(1.0, std::ilogb(below) - 7);
  double above = below + unit;
  double magnitude = std::fabs(value);
  double to_below = magnitude - below, to_above = above - magnitude;  // both exact
  bool below_is_even = ((std::bit_cast<uint64_t>(below) >> 45) & 1) == 0;
  double chosen = (to_below < to_above || (to_below == to_above && below_is_even)) ? below : above;
  if (chosen > 0x1.fep127) chosen = std::numeric_limits<double>::infinity();
  return std::copysign(chosen, value);
}

TEST(RoundTo, F64ToBf16RoundsOnceInTheNormalRange) {
  std::mt19937_64 generator(5);
  std::uniform_int_distribution<int> exponent(-125, 128);
  for (int i = 0; i < 300'000; ++i) {
    double significand = 1.0 + std::ldexp(double(generator() >> 11), -53);
    double value = std::ldexp(significand, exponent(generator) - 1);
    if (generator() & 1) value = -value;
    ASSERT_EQ(round_to(value, ElementType::bf16), reference_f64_to_bf16(value)) << value;
  }
}

TEST(RoundTo, F64ToBf16DoesNotDoubleRound) {
  // 1 + 2^-8 + 2^-30: nearer to 1 + 2^-7 than to 1. Via f32 it would first become the tie
  // 1 + 2^-8, which rounds to even (1): a double rounding.
  double value = 1.0 + 0x1p-8 + 0x1p-30;
  float via_f32 = f32_from_bf16(bf16_from_f32(static_cast<float>(value)));
  EXPECT_EQ(via_f32, 1.0f);
  EXPECT_EQ(round_to(value, ElementType::bf16), 1.0 + 0x1p-7);
  EXPECT_EQ(round_to(-value, ElementType::bf16), -(1.0 + 0x1p-7));
  // Same near overflow: just above the max/2^128 tie after f32 rounding, below it before.
  double just_below_tie = 0x1.ffp127 - 0x1p90;
  EXPECT_EQ(round_to(just_below_tie, ElementType::bf16), 0x1.fep127);
  EXPECT_TRUE(std::isinf(round_to(0x1.ffp127, ElementType::bf16)));
}

TEST(RoundTo, FloatSpecials) {
  const double inf = std::numeric_limits<double>::infinity();
  for (ElementType type : {ElementType::f64, ElementType::f32, ElementType::bf16}) {
    EXPECT_TRUE(std::isnan(round_to(std::nan(""), type)));
    EXPECT_EQ(round_to(inf, type), inf);
    EXPECT_EQ(round_to(-inf, type), -inf);
    EXPECT_TRUE(std::signbit(round_to(-0.0, type)));
    EXPECT_FALSE(std::signbit(round_to(0.0, type)));
  }
  EXPECT_EQ(round_to(1e300, ElementType::f32), inf);
  EXPECT_EQ(round_to(-1e300, ElementType::bf16), -inf);
  EXPECT_EQ(round_to(1e-300, ElementType::f32), 0.0);
  EXPECT_TRUE(std::signbit(round_to(-1e-300, ElementType::bf16)));
  EXPECT_EQ(round_to(0x1p-149, ElementType::f32), 0x1p-149);  // smallest subnormal
  EXPECT_EQ(round_to(0x1p-150, ElementType::f32), 0.0);       // tie -> even (0)
  EXPECT_EQ(round_to(0x1.8p-150, ElementType::f32), 0x1p-149);
  EXPECT_EQ(round_to(0x1.8p-133, ElementType::bf16), 0x1p-132);  // 1.5 units -> 2
  EXPECT_EQ(round_to(0x1.4p-133, ElementType::bf16), 0x1p-133);
}

TEST(RoundTo, IntegersRoundToNearestEvenAndSaturate) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    ElementType type;
    double input, expected;
  };
  const Case cases[] = {
      {ElementType::i8, 2.5, 2},
      {ElementType::i8, 3.5, 4},
      {ElementType::i8, -2.5, -2},
      {ElementType::i8, 300, 127},
      {ElementType::i8, -300, -128},
      {ElementType::i8, 126.6, 127},
      {ElementType::i8, inf, 127},
      {ElementType::i8, -inf, -128},
      {ElementType::i4, 7.6, 7},
      {ElementType::i4, -8.5, -8},
      {ElementType::i4, -9, -8},
      {ElementType::i4, 0.5, 0},
      {ElementType::i4, 1.5, 2},
      {ElementType::u8, -1, 0},
      {ElementType::u8, 255.5, 255},
      {ElementType::u8, 254.5, 254},
      {ElementType::i32, 3e9, 2147483647.0},
      {ElementType::i32, -3e9, -2147483648.0},
      {ElementType::i64, 1e30, 0x1p63 - 1024},
      {ElementType::i64, -1e30, -0x1p63},
      {ElementType::boolean, 0.5, 0},
      {ElementType::boolean, 0.6, 1},
      {ElementType::boolean, 7, 1},
      {ElementType::boolean, -3, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(round_to(c.input, c.type), c.expected) << type_name(c.type) << " " << c.input;
  }
  for (ElementType type : {ElementType::i8, ElementType::i4, ElementType::u8, ElementType::i64,
                           ElementType::boolean}) {
    EXPECT_EQ(round_to(std::nan(""), type), 0.0);
    EXPECT_FALSE(std::signbit(round_to(-0.0, type)));
    EXPECT_FALSE(std::signbit(round_to(-0.2, type)));
  }
}

}  // namespace
}  // namespace presk
