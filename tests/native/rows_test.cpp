// The row kernels of the reductions (kernels_rows.h) and the contraction's row groups: each
// gives the bits of its defining loop — the maxNum fold, one sequential chain per row, one
// fma chain per output element — on the SIMD path and with threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "exec/native/kernels.h"
#include "exec/native/kernels_rows.h"
#include "exec/native/value.h"

namespace presk::exec::native {
namespace {

template <typename T>
T fold_max(const std::vector<T>& x, size_t first, size_t n) {
  T m = x[first];
  for (size_t t = first + 1; t < first + n; ++t) {
    if (m != m || x[t] > m || (x[t] == m && !std::signbit(x[t]))) m = x[t] != x[t] ? m : x[t];
  }
  return m;
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
void check_max_rows() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> specials = {T(0), T(-0.0), inf, -inf, nan, T(1), T(-1), T(1e-40), T(-3)};
  std::mt19937 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<size_t> pick(0, specials.size() - 1), chance(0, 9);
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t n = 1 + static_cast<size_t>(trial) % 70;
    const int mode = trial % 4;  // 0: normal; 1: some specials; 2: only specials; 3: only zeros and NaN
    std::vector<T> x(n);
    for (T& v : x) {
      if (mode == 0) v = static_cast<T>(normal(rng));
      else if (mode == 1) v = chance(rng) == 0 ? specials[pick(rng)] : static_cast<T>(normal(rng));
      else if (mode == 2) v = specials[pick(rng)];
      else v = chance(rng) < 3 ? nan : chance(rng) < 5 ? T(0) : T(-0.0);
    }
    const T want = fold_max(x, 0, n);
    EXPECT_TRUE(same_bits(want, max_of_row(x.data(), n, false))) << "n=" << n << " mode=" << mode;
    EXPECT_TRUE(same_bits(want, max_of_row(x.data(), n, true))) << "n=" << n << " mode=" << mode;
  }
}

TEST(RowKernels, MaxIsTheFoldOnEveryPath) {
  check_max_rows<float>();
  check_max_rows<double>();
}

TEST(RowKernels, RowSumsAreOneSequentialChainEach) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t rows : {1, 7, 8, 9, 17}) {
    for (size_t len : {0, 1, 2, 33, 256}) {
      const size_t stride = len + 3;
      std::vector<float> x(rows * stride + 1);
      for (float& v : x) v = normal(rng) * 1e3f;
      std::vector<float> out(rows);
      sequential_row_sums(x.data(), rows, len, stride, out.data());
      for (size_t r = 0; r < rows; ++r) {
        float s = len ? x[r * stride] : 0.0f;
        for (size_t t = 1; t < len; ++t) s = s + x[r * stride + t];
        EXPECT_TRUE(same_bits(s, out[r])) << "rows=" << rows << " len=" << len << " r=" << r;
      }
    }
  }
}

// Row groups of the contraction driver (more rows than a kernel call, more than a group:
// contiguous groups, and groups taking every other run of rows), two column tiles, K in one
// panel and across two (chains held in the tile): every element is its own fma chain, on 1
// and 2 threads.
void check_row_groups(size_t k) {
  const size_t n = 300;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> b(k * n);
  for (float& v : b) v = normal(rng);
  BSource source;
  source.kind = BSource::Kind::f32;
  source.data = b.data();
  source.ldb = n;
  for (size_t m : {65, 130, 600}) {
    std::vector<float> a(m * k);
    for (float& v : a) v = normal(rng);
    const ContractionShape shape{m, n, 0, 1, k, k};
    for (int threads : {1, 2}) {
      for (bool scalar : {false, true}) {
        std::vector<float> c(m * n, -1.0f);
        contract_f32(shape, a.data(), source, c.data(), threads, scalar);
        size_t wrong = 0;
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (size_t t = 0; t < k; ++t) acc = std::fma(a[i * k + t], b[t * n + j], acc);
            wrong += !same_bits(acc, c[i * n + j]);
          }
        }
        EXPECT_EQ(wrong, 0u) << "m=" << m << " k=" << k << " threads=" << threads << " scalar=" << scalar;
      }
    }
  }
}

TEST(RowKernels, ContractionRowGroupsKeepEveryChain) {
  for (size_t k : {40, 300}) check_row_groups(k);
}

// copy_strided (transpose, slice, broadcast) against the index formula, for every permutation
// of rank-3 shapes with odd extents (the tiled matrix path and the row paths), broadcast
// strides and a base offset.
TEST(Layout, CopyStridedMatchesTheIndexFormula) {
  const std::vector<int64_t> in_shape = {5, 19, 37};
  const std::vector<size_t> in_strides = {19 * 37, 37, 1};
  std::vector<int> source(5 * 19 * 37 + 3);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<int>(i * 7 + 1);
  std::vector<std::vector<size_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& perm : perms) {
    for (bool broadcast_last : {false, true}) {
      std::vector<int64_t> shape;
      std::vector<size_t> strides;
      for (size_t a : perm) shape.push_back(in_shape[a]), strides.push_back(in_strides[a]);
      if (broadcast_last) strides.back() = 0;
      std::vector<int> out(element_count(shape), -1);
      copy_strided(source.data(), shape, strides, 3, out.data());
      size_t wrong = 0, i = 0;
      for (int64_t x = 0; x < shape[0]; ++x) {
        for (int64_t y = 0; y < shape[1]; ++y) {
          for (int64_t z = 0; z < shape[2]; ++z, ++i) {
            wrong += out[i] != source[3 + x * strides[0] + y * strides[1] + z * strides[2]];
          }
        }
      }
      EXPECT_EQ(wrong, 0u) << "perm " << perm[0] << perm[1] << perm[2] << " broadcast " << broadcast_last;
    }
  }
}

}  // namespace
}  // namespace presk::exec::native
