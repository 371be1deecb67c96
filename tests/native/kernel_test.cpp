// The contraction kernels: for every path (panel, small-M streaming), B storage (f64, f32,
// bf16, int8, int4), strided k (interleaved partials) and thread count, the SIMD result has
// the bits of the scalar fma chain c = fma(a_k, b_k, c), k ascending from +0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <hwy/targets.h>

#include "exec/native/kernels.h"
#include "exec/native/numeric.h"

namespace presk::exec::native {
namespace {

struct Weights {
  std::vector<double> f64;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  QuantizedWeights q8, q4, q8g, q4g;  // per channel; grouped (int8 over K by 20, int4 over N by 8)
};

Weights make_weights(size_t k, size_t n) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  Weights w;
  for (size_t i = 0; i < k * n; ++i) w.f64.push_back(normal(rng));
  for (double x : w.f64) w.f32.push_back(static_cast<float>(x)), w.bf16.push_back(to_bf16(x));
  w.q8 = quantize(w.f64, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 8, 0, false);
  w.q4 = quantize(w.f64, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 4, 1, true);
  w.q8g = quantize(w.f64, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 8, 0, false, 20);
  w.q4g = quantize(w.f64, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 4, 1, false, 8);
  return w;
}

// A BSource over grouped integer weights, as ops_contract.cpp builds it.
BSource grouped_source(const QuantizedWeights& q) {
  BSource b;
  b.kind = q.bits == 8 ? BSource::Kind::i8 : BSource::Kind::i4;
  b.ldb = static_cast<size_t>(q.shape[1]);
  b.data = q.q.data();
  b.scales = q.scales.data();
  b.scale_per_column = q.over == 0;
  b.group = static_cast<size_t>(q.group);
  b.scale_ld = b.scale_per_column ? b.ldb : b.ldb / b.group;
  return b;
}

BSource source(const Weights& w, BSource::Kind kind, size_t n, bool grouped = false) {
  if (grouped) return grouped_source(kind == BSource::Kind::i8 ? w.q8g : w.q4g);
  BSource b;
  b.kind = kind;
  b.ldb = n;
  switch (kind) {
    case BSource::Kind::f64: b.data = w.f64.data(); break;
    case BSource::Kind::f32: b.data = w.f32.data(); break;
    case BSource::Kind::bf16: b.data = w.bf16.data(); break;
    case BSource::Kind::i8: b.data = w.q8.q.data(), b.scales = w.q8.scales.data(); break;
    case BSource::Kind::i4: b.data = w.q4.q.data(), b.scales = w.q4.scales.data(), b.scale_per_column = false; break;
  }
  return b;
}

TEST(Contraction, SimdAndThreadsMatchTheScalarChain) {
  const size_t k = 300, n = 200;
  const Weights w = make_weights(k, n);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t m : {1, 3, 4, 9, 70}) {
    std::vector<float> a(m * k);
    std::vector<double> a64(m * k);
    for (size_t i = 0; i < a.size(); ++i) a[i] = normal(rng), a64[i] = a[i];
    for (int variant = 0; variant < 7; ++variant) {  // five storages, then int8 and int4 with group scales
      const BSource::Kind kinds[] = {BSource::Kind::f64, BSource::Kind::f32, BSource::Kind::bf16, BSource::Kind::i8, BSource::Kind::i4};
      const BSource::Kind kind = kinds[variant < 5 ? variant : variant - 2];
      const BSource b = source(w, kind, n, variant >= 5);
      for (size_t step : {1, 8}) {
        const ContractionShape shape{m, n, step == 1 ? 0u : 3u, step, step == 1 ? k : (k - 3 + step - 1) / step, k};
        std::vector<float> defining(m * n), simd(m * n);
        contract_f32(shape, a.data(), b, defining.data(), 1, true);
        // The definition itself, every element by the plain loop (whole strips of B and the tail
        // are packed by different loads).
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            float c = 0.0f;
            for (size_t t = 0; t < shape.terms; ++t) {
              const size_t kk = shape.k_first + t * step;
              c = std::fma(a[i * k + kk], static_cast<float>(b.value(kk, j)), c);
            }
            ASSERT_EQ(std::memcmp(&c, &defining[i * n + j], 4), 0) << "kind " << static_cast<int>(kind) << " at " << i << "," << j;
          }
        }
        std::vector<double> d_defining(m * n), d_simd(m * n);
        contract_f64(shape, a64.data(), b, d_defining.data(), 1, true);
        for (int64_t target : hwy::SupportedAndGeneratedTargets()) {  // AVX-512, AVX2, …
          hwy::SetSupportedTargetsForTest(target);
          for (int threads : {1, 2}) {
            contract_f32(shape, a.data(), b, simd.data(), threads, false);
            EXPECT_EQ(std::memcmp(defining.data(), simd.data(), 4 * m * n), 0)
                << hwy::TargetName(target) << " f32 m=" << m << " kind=" << static_cast<int>(kind) << " step=" << step
                << " threads=" << threads;
          }
          contract_f64(shape, a64.data(), b, d_simd.data(), 2, false);
          EXPECT_EQ(std::memcmp(d_defining.data(), d_simd.data(), 8 * m * n), 0) << hwy::TargetName(target) << " f64 m=" << m;
        }
        hwy::SetSupportedTargetsForTest(0);
      }
    }
  }
}

// The panel kernel skips terms with a = ±0 over finite b (docs/semantics.md, "Zero terms"):
// causal attention's zero tails, zero heads, all-zero rows. Each case against the scalar
// definition, bit for bit, on every target: signed zeros, a chain that underflows to −0 before
// a zero tail (its tail must still run: +0·b + −0 is +0 for b > 0), ±∞ and NaN in b where a
// is zero (NaN products), and chains continued across K panels.
TEST(Contraction, ZeroTermsAreSkippedOnlyWhereExact) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 99);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int trial = 0; trial < 24; ++trial) {
    const size_t m = 1 + static_cast<size_t>(pick(rng)) % 40, n = 1 + static_cast<size_t>(pick(rng)), k = trial % 3 == 0 ? 600 : 1 + static_cast<size_t>(pick(rng)) * 3;
    std::vector<float> a(m * k), b(k * n);
    for (float& x : b) x = normal(rng);
    for (size_t i = 0; i < m; ++i) {
      const int shape = pick(rng) % 5;  // dense, causal tail, zero head, all zero, −0 underflow
      const size_t cut = static_cast<size_t>(pick(rng)) * k / 100;
      for (size_t t = 0; t < k; ++t) {
        float x = normal(rng);
        if ((shape == 1 && t > cut) || (shape == 2 && t < cut) || shape == 3) x = pick(rng) % 2 ? 0.0f : -0.0f;
        if (shape == 4) x = t == 0 ? -1e-30f : (t > 0 ? 0.0f : x);  // −1e−30 · b underflows to −0
        a[i * k + t] = x;
      }
    }
    if (trial % 4 == 1) {  // non-finite b where some rows of a are zero
      for (int q = 0; q < 3; ++q) b[static_cast<size_t>(pick(rng)) * b.size() / 100] = q == 0 ? nan : (q == 1 ? inf : -inf);
    }
    for (size_t t = 0; t < k; ++t) {
      for (size_t j = 0; j < n; ++j) b[t * n + j] = trial % 4 == 2 ? std::abs(b[t * n + j]) * 1e-20f : b[t * n + j];
    }
    BSource source;
    source.kind = BSource::Kind::f32;
    source.data = b.data();
    source.ldb = n;
    const ContractionShape shape{m, n, 0, 1, k, k};
    std::vector<float> defining(m * n), simd(m * n);
    contract_f32(shape, a.data(), source, defining.data(), 1, true);
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      contract_f32(shape, a.data(), source, simd.data(), 2, false);
      size_t wrong = 0;
      for (size_t i = 0; i < m * n; ++i) wrong += std::memcmp(&defining[i], &simd[i], 4) != 0;
      EXPECT_EQ(wrong, 0u) << hwy::TargetName(target) << " trial " << trial << " m=" << m << " n=" << n << " k=" << k;
    }
    hwy::SetSupportedTargetsForTest(0);
  }
  // Every chain underflows to −0 at its first term, then meets +0 · b (b > 0): +0 + −0 = +0.
  const size_t m = 12, n = 40, k = 50;
  std::vector<float> a(m * k, 0.0f), b(k * n, 1e-20f), defining(m * n), simd(m * n);
  for (size_t i = 0; i < m; ++i) a[i * k] = -1e-30f;
  BSource source;
  source.kind = BSource::Kind::f32;
  source.data = b.data();
  source.ldb = n;
  const ContractionShape shape{m, n, 0, 1, k, k};
  contract_f32(shape, a.data(), source, defining.data(), 1, true);
  EXPECT_FALSE(std::signbit(defining[0]));
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    contract_f32(shape, a.data(), source, simd.data(), 1, false);
    EXPECT_EQ(std::memcmp(defining.data(), simd.data(), 4 * m * n), 0) << hwy::TargetName(target) << " −0 chains";
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A stored transposed ([K, M], reverse mode's Xᵀ · dY) and read in place (lda = 1, a_col = M),
// and B stored transposed ([N, K], dY · Wᵀ: ldb = 1, ldn = K): the stream path (M ≤ 8, row-major
// B only) and the panel path, every k or every third (interleaved partials), against the plain
// loop, scalar and SIMD, 1 and 2 threads, f32, bf16 (B) and f64.
TEST(Contraction, TransposedOperandsAreReadInPlace) {
  const size_t k = 290, n = 77;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> b(k * n), bt(n * k);
  for (float& x : b) x = normal(rng);
  for (size_t kk = 0; kk < k; ++kk) {
    for (size_t j = 0; j < n; ++j) bt[j * k + kk] = b[kk * n + j];
  }
  const std::vector<double> bt64(bt.begin(), bt.end());
  std::vector<uint16_t> bt16(bt.size());
  for (size_t i = 0; i < bt.size(); ++i) bt16[i] = to_bf16(bt[i]);
  for (size_t m : {5, 70, 300}) {
    std::vector<float> at(k * m);  // at[kk·m + i] = A(i, kk)
    for (float& x : at) x = normal(rng);
    const std::vector<double> at64(at.begin(), at.end());
    for (bool b_transposed : {false, true}) {
      BSource source;
      source.kind = BSource::Kind::f32;
      source.data = b_transposed ? bt.data() : b.data();
      source.ldb = b_transposed ? 1 : n;
      source.ldn = b_transposed ? k : 1;
      for (size_t step : {1, 3}) {
        const ContractionShape shape{m, n, step - 1, step, (k - (step - 1) + step - 1) / step, 1, m};
        // Every chain over B's values b_of(k, j), scalar and SIMD, 1 and 2 threads.
        auto expect_chains = [&](const BSource& from, auto b_of, const char* type) {
          std::vector<float> expected(m * n);
          for (size_t i = 0; i < m; ++i) {
            for (size_t j = 0; j < n; ++j) {
              float acc = 0.0f;
              for (size_t t = 0; t < shape.terms; ++t) {
                const size_t kk = shape.k_first + t * step;
                acc = std::fma(at[kk * m + i], b_of(kk, j), acc);
              }
              expected[i * n + j] = acc;
            }
          }
          for (int threads : {1, 2}) {
            for (bool scalar : {false, true}) {
              std::vector<float> c(m * n, -1.0f);
              contract_f32(shape, at.data(), from, c.data(), threads, scalar);
              EXPECT_EQ(std::memcmp(expected.data(), c.data(), 4 * m * n), 0) << type << " m=" << m << " b_transposed="
                  << b_transposed << " step=" << step << " threads=" << threads << " scalar=" << scalar;
            }
          }
        };
        expect_chains(source, [&](size_t kk, size_t j) { return b[kk * n + j]; }, "f32");
        if (b_transposed) {  // bf16 storage (q · kᵀ at a bf16 site): the chains over its exact values
          BSource source16 = source;
          source16.kind = BSource::Kind::bf16;
          source16.data = bt16.data();
          expect_chains(source16, [&](size_t kk, size_t j) { return from_bf16(bt16[j * k + kk]); }, "bf16");
        }
        if (b_transposed) {  // f64: the same chains in binary64 against the scalar path
          BSource source64 = source;
          source64.kind = BSource::Kind::f64;
          source64.data = bt64.data();
          std::vector<double> defining(m * n), simd(m * n);
          contract_f64(shape, at64.data(), source64, defining.data(), 1, true);
          contract_f64(shape, at64.data(), source64, simd.data(), 2, false);
          EXPECT_EQ(std::memcmp(defining.data(), simd.data(), 8 * m * n), 0) << "f64 m=" << m << " step=" << step;
          EXPECT_EQ(defining[n + 1], [&] {
            double acc = 0.0;
            for (size_t t = 0; t < shape.terms; ++t) acc = std::fma(at64[(shape.k_first + t * step) * m + 1], bt64[1 * k + shape.k_first + t * step], acc);
            return acc;
          }()) << "f64 definition";
        }
      }
    }
  }
}

// ContractionShape::lower_only (a causal mask follows): every C(i, j) with j <= i keeps the
// bits of the full contraction; a SIMD panel kernel stores +0 in row blocks' strips wholly
// above the diagonal, so with M and N past one row block and strip some entries above it are
// +0 (the skip happened) and none below it is touched.
TEST(Contraction, LowerOnlyKeepsEveryWantedChain) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t m : {7, 64, 200}) {
    for (size_t k : {40, 300}) {  // one K panel, two
      const size_t n = m + 13;
      std::vector<float> a(m * k), b(k * n);
      for (float& x : a) x = normal(rng);
      for (float& x : b) x = normal(rng);
      BSource source;
      source.data = b.data(), source.ldb = n;
      ContractionShape shape{m, n, 0, 1, k, k};
      std::vector<float> full(m * n);
      contract_f32(shape, a.data(), source, full.data(), 1, true);
      shape.lower_only = true;
      for (int threads : {1, 2}) {
        for (bool scalar : {false, true}) {
          std::vector<float> c(m * n, -1.0f);
          contract_f32(shape, a.data(), source, c.data(), threads, scalar);
          size_t skipped = 0;
          for (size_t i = 0; i < m; ++i) {
            for (size_t j = 0; j < n; ++j) {
              if (j <= i) {
                ASSERT_EQ(std::memcmp(&full[i * n + j], &c[i * n + j], 4), 0) << "m=" << m << " k=" << k << " i=" << i << " j=" << j;
              } else if (std::memcmp(&full[i * n + j], &c[i * n + j], 4) != 0) {
                ASSERT_EQ(c[i * n + j], 0.0f);
                ++skipped;
              }
            }
          }
          if (!scalar && m >= 64) {
            EXPECT_GT(skipped, m * n / 4) << "m=" << m << " k=" << k << " threads=" << threads;
          }
        }
      }
    }
  }
}

// The panel path's integer loads (vectorized runs, int4 rows starting mid-byte) against the
// plain loop over BSource::value, every element: scales per column and per row, int8 and int4.
TEST(Contraction, IntegerPanelsMatchThePlainLoopEverywhere) {
  const size_t k = 37, n = 67, m = 11;  // m > kStreamMaxRows: the panel path
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(k * n + 1);
  for (double& x : values) x = normal(rng);
  std::vector<float> a(m * k);
  for (float& x : a) x = static_cast<float>(normal(rng));
  for (int bits : {8, 4}) {
    for (int64_t over : {0, 1}) {
      // One extra leading weight: B starts at element 1 (int4: mid-byte), rows of odd length.
      const QuantizedWeights r = quantize({values.begin() + 1, values.end()}, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, bits, over, false);
      BSource b;
      b.kind = bits == 8 ? BSource::Kind::i8 : BSource::Kind::i4;
      b.ldb = n;
      b.data = r.q.data();
      b.scales = r.scales.data();
      b.scale_per_column = over == 0;
      BSource shifted = b;  // the same weights one element further into a copy with a leading q
      std::vector<uint8_t> bytes(r.q.size() + 1, 0);
      if (bits == 8) {
        std::copy(r.q.begin(), r.q.end(), bytes.begin() + 1);
      } else {
        for (size_t i = 0; i < k * n; ++i) {
          const uint8_t nibble = static_cast<uint8_t>(r.q_at(i) & 0xF);
          bytes[(i + 1) / 2] |= static_cast<uint8_t>(nibble << (((i + 1) % 2) * 4));
        }
      }
      shifted.data = bytes.data();
      shifted.first = 1;
      for (const BSource* source : {&b, &shifted}) {
        std::vector<float> c(m * n);
        contract_f32({m, n, 0, 1, k, k}, a.data(), *source, c.data(), 2, false);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            float expected = 0.0f;
            for (size_t t = 0; t < k; ++t) expected = std::fma(a[i * k + t], static_cast<float>(b.value(t, j)), expected);
            ASSERT_EQ(std::memcmp(&expected, &c[i * n + j], 4), 0)
                << "bits " << bits << " over " << over << " first " << source->first << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

// Group scales in the panel loads (int8 and int4, over K and over N, rows of odd length and
// int4 rows that start mid-byte, 1 and 2 threads) against the chain over the dequantized values
// f32(q·s) that QuantizedWeights::value gives by its own index arithmetic.
TEST(Contraction, GroupedIntegerWeightsAreTheirDequantizedValues) {
  const size_t m = 11;
  std::mt19937_64 rng(13);
  std::normal_distribution<double> normal(0.0, 1.0);
  struct Case { size_t k, n; int bits; int64_t over, group; };
  for (const Case& c : {Case{64, 67, 8, 0, 16}, Case{64, 67, 4, 0, 32}, Case{37, 66, 8, 1, 6}, Case{37, 66, 4, 1, 6},
                        Case{37, 66, 4, 1, 33}, Case{64, 9, 4, 0, 1}}) {
    std::vector<double> values(c.k * c.n);
    for (double& x : values) x = normal(rng) * (1 + static_cast<double>(values.size() % 7));
    std::vector<float> a(m * c.k);
    for (float& x : a) x = static_cast<float>(normal(rng));
    const QuantizedWeights q = quantize(values, {static_cast<int64_t>(c.k), static_cast<int64_t>(c.n)}, c.bits, c.over, false, c.group);
    ASSERT_EQ(q.scales.size(), c.k * c.n / static_cast<size_t>(c.group));
    const BSource b = grouped_source(q);
    for (int threads : {1, 2}) {
      for (bool scalar : {true, false}) {
        std::vector<float> out(m * c.n);
        contract_f32({m, c.n, 0, 1, c.k, c.k}, a.data(), b, out.data(), threads, scalar);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < c.n; ++j) {
            float expected = 0.0f;
            for (size_t t = 0; t < c.k; ++t) expected = std::fma(a[i * c.k + t], q.value(t * c.n + j), expected);
            ASSERT_EQ(std::memcmp(&expected, &out[i * c.n + j], 4), 0)
                << "bits " << c.bits << " over " << c.over << " group " << c.group << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(Quantize, GroupScales) {
  // [4, 2] over axis 0 in groups of 2: scale (g, n) covers rows 2g, 2g+1 of column n.
  const QuantizedWeights q = quantize({1.27, 0.0, -0.127, 2.54, 12.7, 0.0, 0.0, -25.4}, {4, 2}, 8, 0, false, 2);
  ASSERT_EQ(q.scales.size(), 4u);
  EXPECT_EQ(q.scales[0], static_cast<float>(1.27 / 127));
  EXPECT_EQ(q.scales[1], static_cast<float>(2.54 / 127));
  EXPECT_EQ(q.scales[2], static_cast<float>(12.7 / 127));
  EXPECT_EQ(q.scales[3], static_cast<float>(25.4 / 127));
  EXPECT_EQ(q.scale_index(6), 2u);  // element (3, 0): group 1, column 0
  EXPECT_EQ(q.q_at(2), -13);        // −0.127 / 0.01 = −12.7 → −13
  EXPECT_EQ(q.q_at(7), -127);
}

TEST(Quantize, ScalesAndZeroChannels) {
  // Two columns (over = 0: one scale per column): one all zero, one with max |w| = 2.54.
  const QuantizedWeights q = quantize({0.0, 2.54, 0.0, -1.27, 0.0, 0.01}, {3, 2}, 8, 0, false);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 0.0f);
  EXPECT_EQ(q.scales[1], static_cast<float>(2.54 / 127));
  EXPECT_EQ(q.q_at(1), 127);
  EXPECT_EQ(q.q_at(3), -64);  // −1.27 / 0.02 = −63.5 → ties to even
  EXPECT_EQ(q.value(1), 127.0f * q.scales[1]);
  const QuantizedWeights p = quantize({3.0, -1.0}, {2}, 4, 0, true);  // pow2: 3/7 → 0.5
  EXPECT_EQ(p.scales[0], 0.5f);
  EXPECT_EQ(p.q_at(0), 6);
  EXPECT_EQ(p.q_at(1), -2);
}

}  // namespace
}  // namespace presk::exec::native
