// holds_accumulator (docs/chip.md, "Accumulators"): a product that overflows a 16-bit accumulator
// gives a wrong result on the emulated chip, wrapping or saturating, and holds_accumulator refuses
// it; one whose stored weights' actual codes keep every partial sum in 16 bits it proves safe.
#include <gtest/gtest.h>

#include "numerics/accumulator.h"
#include "numerics/scheme/kernels.h"

namespace presk::numerics {
namespace {

const Scheme kRowAbsmax{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};

// The activation row's codes and weight column k of W[K, N] as int8 (W quantized per output
// channel along K, the contracted axis).
std::vector<int8_t> column(const exec::native::QuantizedWeights& w, size_t j) {
  const size_t k = static_cast<size_t>(w.shape[0]), n = static_cast<size_t>(w.shape[1]);
  std::vector<int8_t> c(k);
  for (size_t i = 0; i < k; ++i) c[i] = static_cast<int8_t>(w.q_at(i * n + j));
  return c;
}

TEST(HoldsAccumulator, RefusesAProductThatOverflowsSixteenBits) {
  // 64 terms of activation codes 127 by weight codes 127: partial sums reach 64·127·127 = 1 032 256.
  const size_t k = 64;
  const exec::native::QuantizedWeights w = exec::native::quantize(std::vector<double>(k * 2, 0.5), {64, 2}, 8, 0, false);
  const std::vector<float> x(k, 3.0f);
  const NativeBlock a = quantize_block_native(x.data(), k, kRowAbsmax);
  const std::vector<int8_t> wk = column(w, 0);
  const auto* codes = reinterpret_cast<const int8_t*>(a.words[0].data());
  const int64_t exact = dot_i8(codes, wk.data(), k, false);
  ASSERT_EQ(exact, 64 * 127 * 127);
  // The chip of the narrow contract computes something else, either way it handles overflow.
  EXPECT_NE(dot_i8_accumulated(codes, wk.data(), k, 16, Overflow::wrap), exact);
  EXPECT_EQ(dot_i8_accumulated(codes, wk.data(), k, 16, Overflow::saturate), 32767);
  EXPECT_EQ(dot_i8_accumulated(codes, wk.data(), k, 32, Overflow::wrap), exact);

  const AccumulatedOperands operands = operands_of(w, kRowAbsmax, 0, static_cast<int64_t>(k));
  EXPECT_EQ(*operands.weight_largest, 127);
  EXPECT_EQ(*operands.weight_run_l1, 64 * 127);
  const AccumulatorCheck narrow = holds_accumulator(operands, 16);
  EXPECT_FALSE(narrow.holds);
  EXPECT_EQ(narrow.bits_needed, 21);  // 1 032 256 < 2^20: 20 bits and a sign
  EXPECT_NE(narrow.reason.find("21 bits"), std::string::npos) << narrow.reason;
  EXPECT_TRUE(holds_accumulator(operands, 21).holds);
  EXPECT_FALSE(holds_accumulator(operands, 20).holds);
  EXPECT_TRUE(holds_accumulator(operands, 32).holds);
}

TEST(HoldsAccumulator, ProvesSafeFromTheWeightsActualCodes) {
  // The same 64 terms, but each output channel's weights are one large value and small ones: the
  // codes' L1 norm per channel is 127 + 63·1, so every partial sum is within 127·190 = 24 130.
  const size_t k = 64;
  std::vector<double> values(k * 2, 0.004);
  values[0] = values[1] = 0.5;  // row 0 of both columns
  const exec::native::QuantizedWeights w = exec::native::quantize(values, {64, 2}, 8, 0, false);
  const AccumulatedOperands operands = operands_of(w, kRowAbsmax, 0, static_cast<int64_t>(k));
  EXPECT_EQ(*operands.weight_largest, 127);
  EXPECT_EQ(*operands.weight_run_l1, 127 + 63);
  const AccumulatorCheck check = holds_accumulator(operands, 16);
  EXPECT_TRUE(check.holds) << check.reason;
  EXPECT_EQ(check.bits_needed, 16);  // 24 130 < 2^15
  // And the emulated 16-bit chip indeed agrees with the exact sum on the largest activations.
  const std::vector<float> x(k, -3.0f);
  const NativeBlock a = quantize_block_native(x.data(), k, kRowAbsmax);
  const auto* codes = reinterpret_cast<const int8_t*>(a.words[0].data());
  for (size_t j = 0; j < 2; ++j) {
    const std::vector<int8_t> wk = column(w, j);
    EXPECT_EQ(dot_i8_accumulated(codes, wk.data(), k, 16, Overflow::wrap), dot_i8(codes, wk.data(), k, false));
  }
  // Shorter runs (blocks of 32 activations) need fewer bits still.
  EXPECT_EQ(holds_accumulator(operands_of(w, kRowAbsmax, 0, 32), 16).bits_needed, 16);
}

TEST(HoldsAccumulator, AnOperandNoRangeBoundsHoldsOnlyInSixtyFourBits) {
  AccumulatedOperands unbounded;
  unbounded.weight_largest = 127;
  unbounded.terms = 8;
  EXPECT_FALSE(holds_accumulator(unbounded, 32).holds);
  EXPECT_NE(holds_accumulator(unbounded, 32).reason.find("no proven range"), std::string::npos);
  EXPECT_TRUE(holds_accumulator(unbounded, 64).holds);
}

TEST(HoldsAccumulator, WordRanges) {
  const Scheme two{Block::of_row(), {Scale::Kind::absmax, 0}, Words::two_rest};
  EXPECT_EQ(largest_code(two, 0), 127);
  EXPECT_EQ(largest_code(two, 1), 64);
  const Scheme code16{Block::of_row(), {Scale::Kind::unsigned_pow2, 0}, Words::two_code16};
  EXPECT_EQ(largest_code(code16, 0), 255);
  EXPECT_EQ(largest_code(code16, 1), 128);
}

}  // namespace
}  // namespace presk::numerics
