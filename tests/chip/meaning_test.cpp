// The exact meaning of every scheme, scale, block and keep mode, on small cases computed by hand
// (docs/chip.md), and the native quantization giving the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "numerics/scheme/kernels.h"
#include "numerics/scheme/meaning.h"

namespace presk::numerics {
namespace {

Scheme scheme(Block block, Scale::Kind scale, Words words, int significand_bits = 0) {
  return Scheme{block, Scale{scale, significand_bits}, words};
}
const Scheme kAbsmax = scheme(Block::of_row(), Scale::Kind::absmax, Words::one);

std::vector<int32_t> codes(const QuantizedBlock& b, size_t word = 0) { return b.words[word]; }

// f32(1/127): 1/127 = 2^-7·(1 + 2^-7 + 2^-14 + 2^-21 + 2^-28 + …); its bit 28 lies below the
// 24-bit significand's half unit (bit 24), so the rounding is down.
const double kF32OneOver127 = std::ldexp(1 + std::ldexp(1, -7) + std::ldexp(1, -14) + std::ldexp(1, -21), -7);
// f16(1/127): 11 bits keep 1 + 2^-7.
const double kF16OneOver127 = std::ldexp(1 + std::ldexp(1, -7), -7);

TEST(Meaning, AbsmaxOneWordTiesToEven) {
  // M = 127: s = 1 exactly; x/s is x, and the halves go to the even neighbour.
  const std::vector<double> x = {127, -63.5, 0.5, 1.5, 2.5, -2.5, -127};
  const QuantizedBlock b = quantize_block_exact(x.data(), x.size(), kAbsmax);
  EXPECT_EQ(b.scale, 1.0);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{127, -64, 0, 2, 2, -2, -127}));
  EXPECT_EQ(b.values, (std::vector<double>{127, -64, 0, 2, 2, -2, -127}));
}

TEST(Meaning, AbsmaxScaleIsRoundedToBinary32) {
  const std::vector<double> x = {1, 0.5, -0.25};
  const QuantizedBlock b = quantize_block_exact(x.data(), x.size(), kAbsmax);
  EXPECT_EQ(b.scale, kF32OneOver127);
  // s < 1/127, so 0.5/s = 63.5·(1 + …) is past the tie: 64; 1/s = 127.000…: 127; −0.25/s = −31.75…: −32.
  EXPECT_EQ(codes(b), (std::vector<int32_t>{127, 64, -32}));
  EXPECT_EQ(b.values, (std::vector<double>{127 * kF32OneOver127, 64 * kF32OneOver127, -32 * kF32OneOver127}));
}

TEST(Meaning, Pow2Scales) {
  const std::vector<double> x = {1, -0.3, 0.01};
  // One significant bit: the least 2^e ≥ 1/127 = 0.00787… is 2^-6 (2^-7 = 0.0078125 is less).
  QuantizedBlock b = quantize_block_exact(x.data(), 3, scheme(Block::of_row(), Scale::Kind::pow2, Words::one, 1));
  EXPECT_EQ(b.scale, 1.0 / 64);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{64, -19, 1}));  // 64, −19.2, 0.64
  EXPECT_EQ(b.values, (std::vector<double>{1, -19.0 / 64, 1.0 / 64}));
  // Three bits: m·2^e in {1, 1.25, 1.5, 1.75}·2^-7; the least ≥ 1.00787…·2^-7 is 1.25·2^-7.
  b = quantize_block_exact(x.data(), 3, scheme(Block::of_row(), Scale::Kind::pow2, Words::one, 3));
  EXPECT_EQ(b.scale, 1.25 / 128);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{102, -31, 1}));  // 102.4, −30.72, 1.024
}

TEST(Meaning, UnsignedScale) {
  // M = 3: the least 2^e with 3 ≤ 255·2^e is 2^-6 (255·2^-7 = 1.99 < 3); codes 0 … 255.
  const std::vector<double> x = {0, 0.5, 1, 3};
  QuantizedBlock b = quantize_block_exact(x.data(), 4, scheme(Block::of_row(), Scale::Kind::unsigned_pow2, Words::one));
  EXPECT_EQ(b.scale, 1.0 / 64);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{0, 32, 64, 192}));
  // A negative value has no unsigned code: it is taken as 0.
  const std::vector<double> y = {-1, 2};
  b = quantize_block_exact(y.data(), 2, scheme(Block::of_row(), Scale::Kind::unsigned_pow2, Words::one));
  EXPECT_EQ(b.scale, 1.0 / 64);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{0, 128}));
  EXPECT_EQ(b.values, (std::vector<double>{0, 2}));
}

TEST(Meaning, TwoWordsWithTheRest) {
  // s = 1: 100.3 = 100 + 0.3, 0.3·128 = 38.4 → 38; −0.7 = −1 + 0.3 → (−1, 38).
  const std::vector<double> x = {100.3, -0.7, 127};
  const QuantizedBlock b = quantize_block_exact(x.data(), 3, scheme(Block::of_row(), Scale::Kind::absmax, Words::two_rest));
  EXPECT_EQ(b.scale, 1.0);
  EXPECT_EQ(codes(b, 0), (std::vector<int32_t>{100, -1, 127}));
  EXPECT_EQ(codes(b, 1), (std::vector<int32_t>{38, 38, 0}));
  EXPECT_EQ(b.values, (std::vector<double>{100 + 38.0 / 128, -1 + 38.0 / 128, 127}));
}

TEST(Meaning, TwoWordsAsOneSixteenBitCode) {
  // s = 1: c = ⌊256x⌉; 25677 = 100·256 + 77; −179 = −1·256 + 77; 128 = 1·256 − 128.
  const std::vector<double> x = {100.3, -0.7, 127, 0.5};
  const QuantizedBlock b = quantize_block_exact(x.data(), 4, scheme(Block::of_row(), Scale::Kind::absmax, Words::two_code16));
  EXPECT_EQ(codes(b, 0), (std::vector<int32_t>{100, -1, 127, 1}));
  EXPECT_EQ(codes(b, 1), (std::vector<int32_t>{77, 77, 0, -128}));
  EXPECT_EQ(b.values, (std::vector<double>{25677.0 / 256, -179.0 / 256, 127, 0.5}));
}

TEST(Meaning, ThreeWords) {
  // 0.3: 0, then 38 (0.3·128 = 38.4), then (0.3 − 38/128)·16384 = 51.2 → 51.
  const std::vector<double> x = {127, 0.3};
  const QuantizedBlock b = quantize_block_exact(x.data(), 2, scheme(Block::of_row(), Scale::Kind::absmax, Words::three));
  EXPECT_EQ(codes(b, 0), (std::vector<int32_t>{127, 0}));
  EXPECT_EQ(codes(b, 1), (std::vector<int32_t>{0, 38}));
  EXPECT_EQ(codes(b, 2), (std::vector<int32_t>{0, 51}));
  EXPECT_EQ(b.values[1], 38.0 / 128 + 51.0 / 16384);
}

TEST(Meaning, FixedBlocksHaveTheirOwnScales) {
  // Blocks of 2 with one-bit pow2 scales: [1, 2]: 2/127 → 2^-5; [10, −20]: 20/127 → 2^-2.
  const std::vector<double> x = {1, 2, 10, -20};
  const std::vector<QuantizedBlock> blocks =
      quantize_row_exact(x.data(), 4, 2, scheme(Block::fixed_count(2), Scale::Kind::pow2, Words::one, 1));
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].scale, 1.0 / 32);
  EXPECT_EQ(blocks[1].scale, 0.25);
  EXPECT_EQ(codes(blocks[0]), (std::vector<int32_t>{32, 64}));
  EXPECT_EQ(codes(blocks[1]), (std::vector<int32_t>{40, -80}));
  EXPECT_EQ(dequantized(blocks), x);
  // The row as one block: 20/127 → 2^-2 for all four; 1 → 4, 2 → 8.
  const std::vector<QuantizedBlock> row = quantize_row_exact(x.data(), 4, 4, scheme(Block::of_row(), Scale::Kind::pow2, Words::one, 1));
  EXPECT_EQ(codes(row[0]), (std::vector<int32_t>{4, 8, 40, -80}));
}

TEST(Meaning, ZeroBlocksAndOverflow) {
  const std::vector<double> zeros = {0, -0.0, 0};
  const QuantizedBlock z = quantize_block_exact(zeros.data(), 3, kAbsmax);
  EXPECT_EQ(z.scale, 0.0);
  EXPECT_EQ(codes(z), (std::vector<int32_t>{0, 0, 0}));
  // M/127 past binary32's largest number: the scale is +∞ and nothing is represented.
  const std::vector<double> huge = {1e300};
  const QuantizedBlock h = quantize_block_exact(huge.data(), 1, kAbsmax);
  EXPECT_TRUE(std::isinf(h.scale));
  EXPECT_TRUE(std::isnan(h.values[0]));
}

TEST(Meaning, KeepAsComputedAndFloats) {
  const std::vector<double> x = {1.0 / 3, 65520, 1e-8};
  EXPECT_EQ(keep_row_exact(x.data(), 3, Keep{}).values, x);
  const KeptRow f16 = keep_row_exact(x.data(), 3, Keep{Keep::Kind::float_format, FloatFormat::f16});
  EXPECT_EQ(f16.values[0], 0.333251953125);  // binary16 0x3555
  EXPECT_TRUE(std::isinf(f16.values[1]));     // 65520 rounds past 65504
  EXPECT_EQ(f16.values[2], 0.0);              // below half of 2^-24
  const KeptRow bf16 = keep_row_exact(x.data(), 3, Keep{Keep::Kind::float_format, FloatFormat::bf16});
  EXPECT_EQ(bf16.values[0], 0.333984375);
  EXPECT_EQ(bf16.values[1], 65536.0);
}

TEST(Meaning, KeepInt8Rows) {
  // s = f16(1/127) = 2^-7·(1 + 2^-7); 1/s = 127.008 → 127, −0.5/s = −63.504 → −64, 0.25/s = 31.75 → 32,
  // 0.1/s = 12.70 → 13.
  const std::vector<double> x = {1, -0.5, 0.25, 0.1};
  const KeptRow row = keep_row_exact(x.data(), 4, Keep{Keep::Kind::int8_rows, FloatFormat::f32});
  EXPECT_EQ(row.scale, kF16OneOver127);
  EXPECT_EQ(row.codes, (std::vector<int32_t>{127, -64, 32, 13}));
  EXPECT_EQ(row.values, (std::vector<double>{127 * kF16OneOver127, -64 * kF16OneOver127, 32 * kF16OneOver127,
                                             13 * kF16OneOver127}));
}

TEST(Meaning, KeepInt8RowsRotated) {
  // H·[3, 1, −1, 1] = [4, 0, 4, 4]; s = f16(4/127) = 4·2^-7·(1 + 2^-7); codes [127, 0, 127, 127];
  // back: H·codes = [381, 127, −127, 127], times s/4.
  const std::vector<double> x = {3, 1, -1, 1};
  const KeptRow row = keep_row_exact(x.data(), 4, Keep{Keep::Kind::int8_rows_rotated, FloatFormat::f32});
  EXPECT_EQ(row.scale, 4 * kF16OneOver127);
  EXPECT_EQ(row.codes, (std::vector<int32_t>{127, 0, 127, 127}));
  EXPECT_EQ(row.values, (std::vector<double>{381 * kF16OneOver127, 127 * kF16OneOver127, -127 * kF16OneOver127,
                                             127 * kF16OneOver127}));
}

TEST(Meaning, ReferenceNumbersAreQuantizedExactly) {
  // MPFR numbers at 200 bits: 1 + 2^-150 is no binary64 number, and its code is that of 1.
  mpfr_t x[3];
  for (mpfr_t& v : x) mpfr_init2(v, 200);
  mpfr_set_d(x[0], 127, MPFR_RNDN);
  mpfr_set_d(x[1], 2.5, MPFR_RNDN);
  mpfr_set_d(x[2], 1, MPFR_RNDN);
  mpfr_add_d(x[2], x[2], std::ldexp(1, -150), MPFR_RNDN);
  const __mpfr_struct numbers[3] = {*x[0], *x[1], *x[2]};
  const QuantizedBlock b = quantize_block_exact(numbers, 3, kAbsmax);
  EXPECT_EQ(codes(b), (std::vector<int32_t>{127, 2, 1}));
  mpfr_set_d(x[1], -0.5, MPFR_RNDN);
  mpfr_add_d(x[1], x[1], -std::ldexp(1, -150), MPFR_RNDN);  // just past the tie: −1, not 0
  const __mpfr_struct again[3] = {*x[0], *x[1], *x[2]};
  EXPECT_EQ(codes(quantize_block_exact(again, 3, kAbsmax)), (std::vector<int32_t>{127, -1, 1}));
  const KeptRow row = keep_row_exact(again, 3, Keep{Keep::Kind::int8_rows, FloatFormat::f32});
  EXPECT_EQ(row.codes, (std::vector<int32_t>{127, -1, 1}));  // 127/f16(1) = 127
  for (mpfr_t& v : x) mpfr_clear(v);
}

TEST(Native, WalshHadamardByHand) {
  std::vector<double> v = {3, 1, -1, 1};
  walsh_hadamard(v.data(), 4);
  EXPECT_EQ(v, (std::vector<double>{4, 0, 4, 4}));
  std::vector<int32_t> w = {127, 0, 127, 127};
  walsh_hadamard(w.data(), 4);
  EXPECT_EQ(w, (std::vector<int32_t>{381, 127, -127, 127}));
  walsh_hadamard(w.data(), 4);  // H·H = n·I
  EXPECT_EQ(w, (std::vector<int32_t>{508, 0, 508, 508}));
}

// Rows of binary32 values with ties, zeros and every magnitude a layer gives.
std::vector<std::vector<float>> sample_rows() {
  std::mt19937 random(7);
  std::vector<std::vector<float>> rows;
  for (int r = 0; r < 200; ++r) {
    const size_t n = size_t{1} << (r % 7);
    std::normal_distribution<float> normal(0, std::ldexp(1.0f, r % 21 - 10));
    std::vector<float> row(n);
    for (float& v : row) v = normal(random);
    if (r % 5 == 0) row[0] = 0;
    if (r % 7 == 3) {  // exact ties: k + ½ of a power-of-two scale
      for (size_t i = 0; i < n; ++i) row[i] = std::ldexp(static_cast<float>(static_cast<int>(i % 100) - 50) + 0.5f, -3);
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(Native, QuantizationIsTheMeaningBitForBit) {
  const std::vector<Scheme> schemes = {
      kAbsmax,
      scheme(Block::of_row(), Scale::Kind::pow2, Words::one, 1),
      scheme(Block::of_row(), Scale::Kind::pow2, Words::one, 5),
      scheme(Block::of_row(), Scale::Kind::unsigned_pow2, Words::one),
      scheme(Block::of_row(), Scale::Kind::absmax, Words::two_rest),
      scheme(Block::of_row(), Scale::Kind::absmax, Words::two_code16),
      scheme(Block::of_row(), Scale::Kind::pow2, Words::three, 2),
      scheme(Block::of_row(), Scale::Kind::unsigned_pow2, Words::two_code16),
  };
  int compared = 0;
  for (const std::vector<float>& row : sample_rows()) {
    const std::vector<double> exact_in(row.begin(), row.end());
    for (const Scheme& s : schemes) {
      const QuantizedBlock exact = quantize_block_exact(exact_in.data(), row.size(), s);
      const NativeBlock native = quantize_block_native(row.data(), row.size(), s);
      ASSERT_EQ(native.scale, exact.scale) << scheme_text(s);
      for (size_t i = 0; i < row.size(); ++i) {
        for (size_t w = 0; w < exact.words.size(); ++w) {
          ASSERT_EQ(native.code(w, i, s.scale.kind == Scale::Kind::unsigned_pow2), exact.words[w][i])
              << scheme_text(s) << " value " << row[i] << " word " << w;
        }
        ASSERT_EQ(native.values[i], exact.values[i]) << scheme_text(s);
      }
      ++compared;
    }
    for (bool rotated : {false, true}) {
      const KeptRow exact = keep_row_exact(exact_in.data(), row.size(),
                                           Keep{rotated ? Keep::Kind::int8_rows_rotated : Keep::Kind::int8_rows, FloatFormat::f32});
      const NativeKeptRow native = keep_row_native(row.data(), row.size(), rotated);
      ASSERT_EQ(native.scale, exact.scale);
      for (size_t i = 0; i < row.size(); ++i) {
        ASSERT_EQ(native.codes[i], exact.codes[i]);
        ASSERT_EQ(native.values[i], exact.values[i]);
      }
    }
  }
  EXPECT_EQ(compared, 200 * 8);
}

}  // namespace
}  // namespace presk::numerics
