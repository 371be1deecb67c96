// Exact compile-time reals: parsing and canonical text round-trip exactly; one rounding into
// binary64 and binary32 agrees with glibc's correctly rounded strtod/strtof on random decimals
// (so the native executor's literals keep their bits), and into bf16 it is the nearest bf16 by
// exact rational distances; the double-rounding cases that f64 → f32 / f64 → bf16 get wrong.
#include "support/exact_real.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <random>

namespace presk {
namespace {

ExactReal parsed(const std::string& text) {
  std::optional<ExactReal> value = ExactReal::parse(text);
  if (!value) throw std::runtime_error("does not parse: " + text);
  return *value;
}

bool same(const ExactReal& a, const ExactReal& b) {
  return mpq_equal(a.get(), b.get()) != 0;
}

TEST(ExactReal, CanonicalTextRoundTrips) {
  struct Case {
    const char* text;
    const char* canonical;
  };
  for (const Case& c :
       std::initializer_list<Case>{{"0.5/3", "1/6"},
                                   {"-1e-5", "-0.00001"},
                                   {"1e300", "1e300"},
                                   {"1/3e300", "1/3e300"},
                                   {"2.50", "2.5"},
                                   {"-0", "0"},
                                   {"1000", "1000"},
                                   {"12345678e-20", "12345678e-20"},
                                   {"7/2e-3", "3500"},
                                   {"0.125", "0.125"},
                                   {"1/1152921504606846976", "1/1152921504606846976"}}) {
    SCOPED_TRACE(c.text);
    ExactReal value = parsed(c.text);
    EXPECT_EQ(value.text(), c.canonical);
    EXPECT_TRUE(same(parsed(value.text()), value));
  }
}

TEST(ExactReal, ArithmeticIsExact) {
  ExactReal sixth = parsed("0.5") / ExactReal(3);
  EXPECT_TRUE(same(sixth * ExactReal(6), ExactReal(1)));
  EXPECT_TRUE(same(parsed("0.1") + parsed("0.2"), parsed("0.3")));  // not so in binary64
  EXPECT_TRUE(same(-parsed("1e-5") - parsed("-0.00001"), ExactReal(0)));
}

TEST(ExactReal, RefusesMalformedAndUnboundedText) {
  for (const char* bad :
       {"", "1e", ".5", "1/0", "1/-2", "1/", "/2", "--1", "1e-99999", "1e99999", "abc", "1.5.2"}) {
    EXPECT_FALSE(ExactReal::parse(bad).has_value()) << bad;
  }
}

// A random decimal: 1–25 significant digits, d.ddd·10^e or dddd·10^e with e in [low, high].
std::string random_decimal(std::mt19937_64& random, int low, int high) {
  std::uniform_int_distribution<int> length(1, 25), digit(0, 9), exponent(low, high);
  std::string text = random() % 2 ? "-" : "";
  int n = length(random);
  for (int i = 0; i < n; ++i) text += static_cast<char>('0' + digit(random));
  if (n > 1 && random() % 2) text.insert(text.size() - static_cast<size_t>(n) + 1, ".");
  return text + "e" + std::to_string(exponent(random));
}

TEST(ExactReal, MatchesStrtodAndStrtof) {
  std::mt19937_64 random(19);
  for (int i = 0; i < 100000; ++i) {
    std::string text = random_decimal(random, -345, 320);
    ASSERT_EQ(std::bit_cast<uint64_t>(*round_literal(text, kBinary64)),
              std::bit_cast<uint64_t>(std::strtod(text.c_str(), nullptr)))
        << text;
    text = random_decimal(random, -60, 45);
    ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(*round_literal(text, kBinary32))),
              std::bit_cast<uint32_t>(std::strtof(text.c_str(), nullptr)))
        << text;
  }
}

// The bf16 neighbours of r (a bf16 value held in a double): r is the nearest to q by exact
// distances, a tie going to the even significand.
void expect_nearest_bf16(const std::string& text) {
  const double r = *round_literal(text, kBfloat16);
  const ExactReal q = parsed(text);
  if (std::isinf(r)) {  // only at or past bf16's largest + ½ ulp: 2^128 − 2^119
    ExactReal magnitude = mpq_sgn(q.get()) < 0 ? -q : q;
    EXPECT_GE(mpq_cmp(magnitude.get(),
                      ExactReal::from_double(std::ldexp(1.0, 128) - std::ldexp(1.0, 119)).get()),
              0)
        << text;
    return;
  }
  const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(r));
  ASSERT_EQ(bits & 0xffffu, 0u) << text << ": not a bf16 value";
  auto as_exact = [](uint32_t pattern) {
    return ExactReal::from_double(std::bit_cast<float>(pattern));
  };
  auto distance = [&](const ExactReal& x) {
    ExactReal d = x - q;
    return mpq_sgn(d.get()) < 0 ? -d : d;
  };
  const ExactReal here = distance(as_exact(bits));
  for (uint32_t neighbour : {bits + 0x10000u, bits - 0x10000u}) {
    if ((neighbour & 0x7f800000u) == 0x7f800000u || ((bits & 0x7fffffffu) == 0 && neighbour > bits))
      continue;
    const int order = mpq_cmp(here.get(), distance(as_exact(neighbour)).get());
    EXPECT_TRUE(order < 0 || (order == 0 && ((bits >> 16) & 1) == 0)) << text << " → " << r;
  }
}

TEST(ExactReal, Bfloat16IsTheNearest) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) expect_nearest_bf16(random_decimal(random, -42, 38));
}

// Rounding first to f64 and then to the narrower type rounds twice: 1 + 2^-24 + 2^-60 is
// 1 + 2^-24 in f64, a tie in f32 that goes to 1; once, it is above the tie: 1 + 2^-23.
TEST(ExactReal, RoundsOnceWhereBinary64WouldRoundTwice) {
  ExactReal q = ExactReal(1) + parsed("1/16777216") + parsed("1/1152921504606846976");
  EXPECT_EQ(round_exact(q, kBinary32), 1.0 + std::ldexp(1.0, -23));
  EXPECT_EQ(static_cast<float>(q.to_double()), 1.0f);  // the double rounding
  ExactReal b = ExactReal(1) + parsed("1/256") + parsed("1/1152921504606846976");
  EXPECT_EQ(round_exact(b, kBfloat16), 1.0 + std::ldexp(1.0, -7));
}

TEST(ExactReal, SubnormalsOverflowAndSignedZeros) {
  EXPECT_EQ(round_exact(parsed("1e-46"), kBinary32), 0.0);
  EXPECT_EQ(round_exact(parsed("1e-45"), kBinary32), std::ldexp(1.0, -149));
  EXPECT_EQ(round_exact(parsed("-1e-320"), kBinary64), -1e-320);
  EXPECT_EQ(round_exact(parsed("3.5e38"), kBinary32), HUGE_VAL);
  EXPECT_EQ(round_exact(parsed("-3.4e38"), kBfloat16), -HUGE_VAL);  // past bf16's largest + ½ ulp
  EXPECT_TRUE(std::signbit(*round_literal("-0", kBinary64)));
  EXPECT_TRUE(std::signbit(*round_literal("-1e-99999", kBinary32)));
  EXPECT_EQ(*round_literal("1e99999999999999999", kBinary64), HUGE_VAL);
  EXPECT_FALSE(round_literal("1e", kBinary64).has_value());
}

}  // namespace
}  // namespace presk
