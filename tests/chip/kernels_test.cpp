// The integer kernels: the SIMD dot products give the scalar chain's bits on every compiled
// Highway target (wrapped or not), and a block's words dotted with int8 weights is the exact
// product of the values they stand for.
#include <gtest/gtest.h>

#include <hwy/highway.h>
#include <hwy/targets.h>

#include <random>

#include "numerics/scheme/kernels.h"

namespace presk::numerics {
namespace {

std::vector<int8_t> random_bytes(std::mt19937& random, size_t n, int low = -128, int high = 127) {
  std::uniform_int_distribution<int> d(low, high);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(d(random));
  return v;
}

TEST(Dot, ByHand) {
  const std::vector<int8_t> a = {1, -2, 3, 127, -128};
  const std::vector<int8_t> b = {4, 5, -6, 127, -128};
  // 4 − 10 − 18 + 16129 + 16384
  for (bool simd : {false, true}) EXPECT_EQ(dot_i8(a.data(), b.data(), 5, simd), 32489);
  const std::vector<uint8_t> u = {255, 0, 1, 128, 200};
  for (bool simd : {false, true}) EXPECT_EQ(dot_u8i8(u.data(), b.data(), 5, simd), 1020 - 6 + 16256 - 25600);
}

TEST(Dot, EveryTargetGivesTheScalarBits) {
  std::mt19937 random(11);
  std::vector<std::pair<std::vector<int8_t>, std::vector<int8_t>>> cases;
  for (size_t n : {0, 1, 3, 15, 16, 17, 31, 64, 100, 257, 1000}) cases.push_back({random_bytes(random, n), random_bytes(random, n)});
  // 140 000 products of 127·127 pass 2^31: the sum wraps, the same way on every path.
  cases.push_back({std::vector<int8_t>(140000, 127), std::vector<int8_t>(140000, 127)});
  const int64_t wrapped = (int64_t{140000} * 127 * 127) % (int64_t{1} << 32);
  EXPECT_EQ(dot_i8(cases.back().first.data(), cases.back().second.data(), 140000, false),
            static_cast<int32_t>(static_cast<uint32_t>(wrapped)));
  int targets = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    EXPECT_EQ(dot_target(), target) << hwy::TargetName(target);
    for (const auto& [a, b] : cases) {
      ASSERT_EQ(dot_i8(a.data(), b.data(), a.size(), true), dot_i8(a.data(), b.data(), a.size(), false))
          << hwy::TargetName(target) << " n=" << a.size();
      const auto* u = reinterpret_cast<const uint8_t*>(a.data());
      ASSERT_EQ(dot_u8i8(u, b.data(), a.size(), true), dot_u8i8(u, b.data(), a.size(), false)) << hwy::TargetName(target);
    }
    ++targets;
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_GE(targets, 1);
}

TEST(Dot, WordsDotIsTheExactProductOfTheValues) {
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0, 3);
  const std::vector<Scheme> schemes = {
      {Block::of_row(), {Scale::Kind::absmax, 0}, Words::one},
      {Block::of_row(), {Scale::Kind::absmax, 0}, Words::two_rest},
      {Block::of_row(), {Scale::Kind::pow2, 1}, Words::two_code16},
      {Block::of_row(), {Scale::Kind::absmax, 0}, Words::three},
      {Block::of_row(), {Scale::Kind::unsigned_pow2, 0}, Words::two_rest},
  };
  for (const Scheme& scheme : schemes) {
    std::vector<float> x(48);
    for (float& v : x) v = normal(random);
    const std::vector<int8_t> w = random_bytes(random, 48, -127, 127);
    const NativeBlock block = quantize_block_native(x.data(), x.size(), scheme);
    for (bool simd : {false, true}) {
      const WordsDot dot = dot_words(block, scheme, w.data(), w.size(), simd);
      // Σ value_i·w_i with value_i = code·step·s: every term a multiple of s/2^shift, exactly.
      double expected = 0;
      for (size_t i = 0; i < x.size(); ++i) expected += block.values[i] / block.scale * std::ldexp(1.0, dot.shift) * w[i];
      EXPECT_EQ(static_cast<double>(dot.sum), expected) << scheme_text(scheme);
    }
  }
}

TEST(Dot, NarrowAccumulatorsWrapOrSaturate) {
  const std::vector<int8_t> a(4, 127), b(4, 127);  // partial sums 16129, 32258, 48387, 64516
  EXPECT_EQ(dot_i8_accumulated(a.data(), b.data(), 4, 32, Overflow::wrap), 64516);
  EXPECT_EQ(dot_i8_accumulated(a.data(), b.data(), 4, 16, Overflow::saturate), 32767);
  EXPECT_EQ(dot_i8_accumulated(a.data(), b.data(), 4, 16, Overflow::wrap), 64516 - 65536);
  const std::vector<int8_t> c = {127, -127, 127, -127};  // partial sums stay within 16 bits
  EXPECT_EQ(dot_i8_accumulated(a.data(), c.data(), 4, 16, Overflow::wrap), 0);
}

}  // namespace
}  // namespace presk::numerics
