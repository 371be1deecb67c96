// An attention's weighted sum over int8 value rows (docs/chip.md, "Attention"): each weight
// times its value row's scale, taken as the contract says; by hand, and the chip's integer form
// against the meaning.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "numerics/attention.h"

namespace presk::numerics {
namespace {

const Keep kInt8Rows{Keep::Kind::int8_rows, FloatFormat::f32};
const Scheme kUnsignedRow{Block::of_row(), {Scale::Kind::unsigned_pow2, 0}, Words::one};
// f16(1/127) = 2^-7·(1 + 2^-7).
const double kSigma = std::ldexp(1 + std::ldexp(1, -7), -7);

std::vector<KeptRow> kept(const std::vector<std::vector<double>>& values) {
  std::vector<KeptRow> rows;
  for (const auto& v : values) rows.push_back(keep_row_exact(v.data(), v.size(), kInt8Rows));
  return rows;
}

TEST(Attention, WeightsTimesValueScalesByHand) {
  // Rows [1, −1], [2, 0], [0, 4]: scales σ, 2σ, 4σ; codes [127, −127], [127, 0], [0, 127].
  const std::vector<KeptRow> rows = kept({{1, -1}, {2, 0}, {0, 4}});
  ASSERT_EQ(rows[2].scale, 4 * kSigma);
  const std::vector<double> p = {0.5, 0.25, 0.25};
  // t = p·s = [σ/2, σ/2, σ]. Unsigned weights over the row: the least 2^e with σ ≤ 255·2^e is
  // 2^-14; σ/2 / 2^-14 = 64.5, a tie: 64; σ / 2^-14 = 129. So t̂ = [64, 64, 129]·2^-14 and
  // out = [64·127 + 64·127, −64·127 + 129·127]·2^-14 = [16256, 8255]·2^-14.
  Taken quantized;
  quantized.scheme = kUnsignedRow;
  EXPECT_EQ(attend_values_exact(p, rows, quantized), (std::vector<double>{16256 * std::ldexp(1, -14), 8255 * std::ldexp(1, -14)}));
  EXPECT_EQ(attend_values_native({0.5f, 0.25f, 0.25f}, rows, kUnsignedRow),
            (std::vector<double>{16256 * std::ldexp(1, -14), 8255 * std::ldexp(1, -14)}));
  // Weights kept in binary32: t is exact, out = [127σ, −63.5σ + 127σ].
  Taken f32;
  f32.float_format = FloatFormat::f32;
  EXPECT_EQ(attend_values_exact(p, rows, f32), (std::vector<double>{127 * kSigma, 63.5 * kSigma}));
}

TEST(Attention, TheChipsIntegerFormIsTheMeaningOnOneTile) {
  std::mt19937 random(3);
  std::uniform_real_distribution<float> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);
  for (int round = 0; round < 50; ++round) {
    const size_t keys = 1 + static_cast<size_t>(round % 17), width = 8;
    std::vector<std::vector<double>> values(keys, std::vector<double>(width));
    for (auto& row : values) {
      for (double& v : row) v = static_cast<float>(normal(random));
    }
    std::vector<float> weights(keys);
    for (float& w : weights) w = uniform(random);
    const std::vector<KeptRow> rows = kept(values);
    for (const Scheme& scheme : {kUnsignedRow, Scheme{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one}}) {
      Taken taken;
      taken.scheme = scheme;
      EXPECT_EQ(attend_values_native(weights, rows, scheme),
                attend_values_exact(std::vector<double>(weights.begin(), weights.end()), rows, taken))
          << scheme_text(scheme) << " keys " << keys;
    }
  }
}

Taken taken_scheme(const Scheme& scheme) {
  Taken t;
  t.scheme = scheme;
  return t;
}

Taken taken_float(FloatFormat format) {
  Taken t;
  t.float_format = format;
  return t;
}

const Scheme kAbsmaxRow{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};

TEST(Attention, ScoresOfQueriesAndKeysByHand) {
  // The query [1, 2, 3, 4] over its row: s_q = f32(4/127), codes [32, 64, 95, 127]. Keys
  // [4, 0, 0, −4] (s = s_q, codes [127, 0, 0, −127]) and [0, 0, 1, 0] (s = f32(1/127), codes
  // [0, 0, 127, 0]): scores s_q²·(32·127 − 127·127) = −12065·s_q² and s_q·s_1·95·127 = 12065·s_q·s_1,
  // each rounded once (s_q·s_1 is exact in binary64).
  const double s_q = static_cast<float>(4.0 / 127), s_1 = static_cast<float>(1.0 / 127);
  const std::vector<double> expected = {-12065 * (s_q * s_q), 12065 * (s_q * s_1)};
  const Taken row = taken_scheme(kAbsmaxRow);
  EXPECT_EQ(attend_scores_exact({1, 2, 3, 4}, {{4, 0, 0, -4}, {0, 0, 1, 0}}, row, row), expected);
  EXPECT_EQ(attend_scores_native({1, 2, 3, 4}, {{4, 0, 0, -4}, {0, 0, 1, 0}}, kAbsmaxRow, kAbsmaxRow), expected);
  // Blocks of 2: query blocks [1, 2] (s = f32(2/127), codes [64 (63.5, ties to even), 127]) and [3, 4]
  // (s_q, codes [95, 127]); key [4, 0 | 0, −4]: codes [127, 0], [0, −127], scales s_q and s_q.
  // Score f32(2/127)·s_q·64·127 + s_q²·(−127·127), each block's product rounded, then added.
  const Scheme pairs{Block::fixed_count(2), {Scale::Kind::absmax, 0}, Words::one};
  const double s_2 = static_cast<float>(2.0 / 127);
  const double blockwise = 8128 * (s_2 * s_q) + -16129 * (s_q * s_q);
  EXPECT_EQ(attend_scores_native({1, 2, 3, 4}, {{4, 0, 0, -4}}, pairs, pairs), std::vector<double>{blockwise});
  // The meaning rounds the exact sum once: 8128·s_2·s_q − 16129·s_q², within half an ulp of it.
  EXPECT_NEAR(attend_scores_exact({1, 2, 3, 4}, {{4, 0, 0, -4}}, taken_scheme(pairs), taken_scheme(pairs))[0], blockwise,
              std::fabs(blockwise) * 0x1p-52);
  // Queries in bf16 (1 + 2^-10 becomes 1), keys in f32: [1 + 2^-10, 2]·[1, 1] = 3.
  EXPECT_EQ(attend_scores_exact({1 + std::ldexp(1, -10), 2}, {{1, 1}}, taken_float(FloatFormat::bf16), taken_float(FloatFormat::f32)),
            std::vector<double>{3});
  // Queries in two words (the rest at a 128th of s = f32(2/127)) stand for each value within s/256,
  // and the f32 keys leave it: the score lies within 2·s/256 of 3 + 2^-10.
  const Scheme two{Block::of_row(), {Scale::Kind::absmax, 0}, Words::two_rest};
  const double two_words = attend_scores_exact({1 + std::ldexp(1, -10), 2}, {{1, 1}}, taken_scheme(two), taken_float(FloatFormat::f32))[0];
  EXPECT_NEAR(two_words, 3 + std::ldexp(1, -10), 2 * static_cast<float>(2.0 / 127) / 256);
  EXPECT_NE(two_words, 3);
}

TEST(Attention, TheChipsScoresAreTheMeaningOnOneBlock) {
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0, 1);
  const std::vector<Scheme> queries = {kAbsmaxRow, {Block::of_row(), {Scale::Kind::absmax, 0}, Words::two_rest},
                                       {Block::of_row(), {Scale::Kind::pow2, 1}, Words::two_code16},
                                       {Block::of_row(), {Scale::Kind::absmax, 0}, Words::three}};
  for (int round = 0; round < 20; ++round) {
    const size_t width = 16, count = 1 + static_cast<size_t>(round % 9);
    std::vector<float> q(width);
    for (float& v : q) v = normal(random);
    std::vector<std::vector<float>> keys(count, std::vector<float>(width));
    std::vector<std::vector<double>> wide;
    for (auto& k : keys) {
      for (float& v : k) v = normal(random);
      wide.emplace_back(k.begin(), k.end());
    }
    for (const Scheme& scheme : queries) {
      EXPECT_EQ(attend_scores_native(q, keys, scheme, kAbsmaxRow),
                attend_scores_exact(std::vector<double>(q.begin(), q.end()), wide, taken_scheme(scheme), taken_scheme(kAbsmaxRow)))
          << scheme_text(scheme) << ", " << count << " keys";
    }
  }
}

}  // namespace
}  // namespace presk::numerics
