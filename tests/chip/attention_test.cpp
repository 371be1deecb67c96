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

}  // namespace
}  // namespace presk::numerics
