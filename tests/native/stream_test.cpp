// The memory-bound contraction path (kernels_stream.cpp): for M = 1 … kStreamMaxRows, B in
// f32, bf16, int8 and int4 with scales per column and per row (zero, negative and large
// values, overflow to ±inf included), N not a multiple of any vector width, K odd, strided k
// and an offset B: the SIMD result (every Highway target this CPU has), the streaming scalar
// loop, the panel path's scalar definition, 1 and 2 threads, and a plain loop of the
// definition — c = +0, then c = fma(a_ik, f32(b_kj), c) for k ascending, with integer weights
// f32(q·s) — all have the same bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "exec/native/kernels.h"
#include "exec/native/numeric.h"
#include "hwy/targets.h"

namespace presk::exec::native {
namespace {

// B stored as rows × ldb; the contraction uses columns [col0, col0 + n) of it.
struct Stored {
  size_t rows = 0, ldb = 0;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  QuantizedWeights q8c, q8r, q4c, q4r;  // scales per column (over rows) / per row (over columns)
};

Stored make_stored(size_t rows, size_t ldb) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> w(rows * ldb);
  for (size_t i = 0; i < w.size(); ++i) {
    const size_t k = i / ldb, j = i % ldb;
    double x = normal(rng);
    if (j == 7 || k == 3) x = 0.0;                         // an all-zero column and row: scale 0
    if (j % 53 == 5) x = -std::fabs(x) * 1e30;              // large negative columns
    if (i % 97 == 1) x = 3e38;                              // near f32's largest
    w[i] = x;
  }
  Stored s;
  s.rows = rows, s.ldb = ldb;
  for (double x : w) s.f32.push_back(static_cast<float>(x)), s.bf16.push_back(to_bf16(x));
  const std::vector<int64_t> shape{static_cast<int64_t>(rows), static_cast<int64_t>(ldb)};
  s.q8c = quantize(w, shape, 8, 0, false), s.q8r = quantize(w, shape, 8, 1, false);
  s.q4c = quantize(w, shape, 4, 0, false), s.q4r = quantize(w, shape, 4, 1, true);
  return s;
}

enum class Weights { f32, bf16, i8_column, i8_row, i4_column, i4_row };

BSource source(const Stored& s, Weights kind, size_t col0) {
  BSource b;
  b.first = col0;
  b.ldb = s.ldb;
  const QuantizedWeights* q = nullptr;
  switch (kind) {
    case Weights::f32: b.kind = BSource::Kind::f32, b.data = s.f32.data(); break;
    case Weights::bf16: b.kind = BSource::Kind::bf16, b.data = s.bf16.data(); break;
    case Weights::i8_column: b.kind = BSource::Kind::i8, q = &s.q8c; break;
    case Weights::i8_row: b.kind = BSource::Kind::i8, q = &s.q8r; break;
    case Weights::i4_column: b.kind = BSource::Kind::i4, q = &s.q4c; break;
    case Weights::i4_row: b.kind = BSource::Kind::i4, q = &s.q4r; break;
  }
  if (q != nullptr) {
    b.data = q->q.data();
    b.scale_per_column = kind == Weights::i8_column || kind == Weights::i4_column;
    b.scales = q->scales.data() + (b.scale_per_column ? col0 : 0);  // relative to (0, 0)
  }
  return b;
}

// Element (k, j) of the used block by the definition, from the stored bits.
float defined_value(const Stored& s, Weights kind, size_t col0, size_t k, size_t j) {
  const size_t index = k * s.ldb + col0 + j;
  switch (kind) {
    case Weights::f32: return s.f32[index];
    case Weights::bf16: {
      const uint32_t bits = static_cast<uint32_t>(s.bf16[index]) << 16;
      float x;
      std::memcpy(&x, &bits, 4);
      return x;
    }
    case Weights::i8_column: return static_cast<float>(s.q8c.q_at(index)) * s.q8c.scales[col0 + j];
    case Weights::i8_row: return static_cast<float>(s.q8r.q_at(index)) * s.q8r.scales[k];
    case Weights::i4_column: return static_cast<float>(s.q4c.q_at(index)) * s.q4c.scales[col0 + j];
    case Weights::i4_row: return static_cast<float>(s.q4r.q_at(index)) * s.q4r.scales[k];
  }
  return 0;
}

std::vector<float> plain_loop(const ContractionShape& sh, const std::vector<float>& a, const Stored& s, Weights kind,
                              size_t col0) {
  std::vector<float> c(sh.m * sh.n);
  for (size_t i = 0; i < sh.m; ++i) {
    for (size_t j = 0; j < sh.n; ++j) {
      float acc = 0.0f;
      for (size_t t = 0; t < sh.terms; ++t) {
        const size_t k = sh.k_first + t * sh.k_step;
        acc = std::fma(a[i * sh.lda + k], defined_value(s, kind, col0, k, j), acc);
      }
      c[i * sh.n + j] = acc;
    }
  }
  return c;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), 4 * x.size()) == 0;
}

// One layout of B (ldb, first column, used columns) under every M, weight kind, k pattern.
void check_layout(size_t ldb, size_t col0, size_t n) {
  const size_t rows = 41;  // K odd
  const Stored s = make_stored(rows, ldb);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t m = 1; m <= kStreamMaxRows; ++m) {
    std::vector<float> a(m * rows);
    for (size_t i = 0; i < a.size(); ++i) a[i] = i % 13 == 4 ? 0.0f : i % 29 == 2 ? -1e9f : normal(rng);
    for (Weights kind : {Weights::f32, Weights::bf16, Weights::i8_column, Weights::i8_row, Weights::i4_column,
                         Weights::i4_row}) {
      const BSource b = source(s, kind, col0);
      for (auto [first, step, terms] : {std::tuple<size_t, size_t, size_t>{0, 1, rows}, {2, 3, 13}, {1, 1, 5}}) {
        const ContractionShape shape{m, n, first, step, terms, rows};
        const std::vector<float> plain = plain_loop(shape, a, s, kind, col0);
        std::vector<float> out(m * n, 1.0f);
        const std::string what = "m=" + std::to_string(m) + " kind=" + std::to_string(static_cast<int>(kind)) +
                                 " ldb=" + std::to_string(ldb) + " first=" + std::to_string(first);
        contract_f32(shape, a.data(), b, out.data(), 1, true);  // the panel path's scalar definition
        EXPECT_TRUE(same_bits(plain, out)) << what << " (scalar definition)";
        for (int threads : {1, 2}) {
          std::fill(out.begin(), out.end(), 1.0f);
          contract_f32(shape, a.data(), b, out.data(), threads, false);
          EXPECT_TRUE(same_bits(plain, out)) << what << " threads=" << threads;
          if (!stream_applies(shape, b)) continue;
          std::fill(out.begin(), out.end(), 1.0f);
          contract_stream(shape, a.data(), b, out.data(), threads, true);
          EXPECT_TRUE(same_bits(plain, out)) << what << " threads=" << threads << " (streaming scalar)";
        }
      }
    }
  }
}

// Every Highway target this CPU supports (AVX2, AVX-512, …; targets without FMA take the
// scalar loop), each on three layouts: whole rows, an offset block of wider rows, and an
// odd row stride (int4 rows then start mid-byte: the panel path).
TEST(Streaming, EveryPathHasTheBitsOfTheDefinition) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    check_layout(554, 0, 554);
    check_layout(600, 6, 587);
    check_layout(601, 0, 601);
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Group scales over K (one scale per G rows of a column, G a multiple of the 8-term block):
// the streaming SIMD path, its scalar loop and the panel path against the plain loop of
// f32(q·s_{k/G, j}), on every Highway target, int8 and int4, 1 and 2 threads; a strided k or
// a group of 4 takes the panel path and still has those bits.
TEST(Streaming, GroupScalesOverKHaveTheBitsOfTheDefinition) {
  const size_t rows = 48, ldb = 554;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> w(rows * ldb);
  for (size_t i = 0; i < w.size(); ++i) w[i] = (i / ldb) % 16 == 3 ? 0.0 : normal(rng) * (1 + static_cast<double>(i / ldb));
  const std::vector<int64_t> shape{static_cast<int64_t>(rows), static_cast<int64_t>(ldb)};
  std::mt19937 arng(9);
  std::normal_distribution<float> anormal(0.0f, 1.0f);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (int bits : {8, 4}) {
      for (int64_t group : {4, 8, 16}) {
        const QuantizedWeights q = quantize(w, shape, bits, 0, false, group);
        BSource b;
        b.kind = bits == 8 ? BSource::Kind::i8 : BSource::Kind::i4;
        b.data = q.q.data(), b.ldb = ldb, b.scales = q.scales.data(), b.scale_per_column = true;
        b.group = static_cast<size_t>(group), b.scale_ld = ldb;
        for (size_t m : {size_t{1}, size_t{4}, kStreamMaxRows}) {
          std::vector<float> a(m * rows);
          for (float& x : a) x = anormal(arng);
          for (auto [first, step, terms] : {std::tuple<size_t, size_t, size_t>{0, 1, rows}, {8, 1, 29}, {0, 3, 16}}) {
            const ContractionShape sh{m, ldb, first, step, terms, rows};
            std::vector<float> plain(m * ldb);
            for (size_t i = 0; i < m; ++i) {
              for (size_t j = 0; j < ldb; ++j) {
                float acc = 0.0f;
                for (size_t t = 0; t < terms; ++t) {
                  const size_t k = first + t * step;
                  const float wk = static_cast<float>(q.q_at(k * ldb + j)) * q.scales[(k / group) * ldb + j];
                  acc = std::fma(a[i * rows + k], wk, acc);
                }
                plain[i * ldb + j] = acc;
              }
            }
            const bool streams = stream_applies(sh, b);
            EXPECT_EQ(streams, group % 8 == 0 && step == 1) << "group " << group << " step " << step;
            const std::string what = "bits=" + std::to_string(bits) + " group=" + std::to_string(group) +
                                     " m=" + std::to_string(m) + " first=" + std::to_string(first);
            for (int threads : {1, 2}) {
              std::vector<float> out(m * ldb, 1.0f);
              contract_f32(sh, a.data(), b, out.data(), threads, false);
              EXPECT_TRUE(same_bits(plain, out)) << what << " threads=" << threads;
              if (!streams) continue;
              std::fill(out.begin(), out.end(), 1.0f);
              contract_stream(sh, a.data(), b, out.data(), threads, true);
              EXPECT_TRUE(same_bits(plain, out)) << what << " threads=" << threads << " (streaming scalar)";
            }
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(Streaming, AppliesToFewRowsAndByteAlignedInt4) {
  BSource b;
  b.kind = BSource::Kind::i4;
  b.ldb = 4096;
  EXPECT_TRUE(stream_applies(ContractionShape{4, 4096, 0, 1, 4096, 4096}, b));
  EXPECT_FALSE(stream_applies(ContractionShape{kStreamMaxRows + 1, 4096, 0, 1, 4096, 4096}, b));
  EXPECT_FALSE(stream_applies(ContractionShape{4, 32, 0, 1, 4096, 4096}, b));
  b.first = 1;
  EXPECT_FALSE(stream_applies(ContractionShape{4, 4096, 0, 1, 4096, 4096}, b));
  b.kind = BSource::Kind::f64;
  b.first = 0;
  EXPECT_FALSE(stream_applies(ContractionShape{4, 4096, 0, 1, 4096, 4096}, b));
}

// Results only depend on the chains: a zero-term contraction is +0 everywhere.
TEST(Streaming, NoTermsIsPositiveZero) {
  const Stored s = make_stored(3, 256);
  const BSource b = source(s, Weights::i4_column, 0);
  std::vector<float> a(2 * 3, 1.0f), out(2 * 256, -1.0f);
  contract_f32(ContractionShape{2, 256, 0, 1, 0, 3}, a.data(), b, out.data(), 2, false);
  for (float x : out) EXPECT_TRUE(x == 0.0f && !std::signbit(x));
}

}  // namespace
}  // namespace presk::exec::native
