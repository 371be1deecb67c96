// B panels of a contraction: rows of B (k = k_first + t·k_step) converted to the compute
// type while loaded. Floats widen exactly or round once (f64 → f32, RNE); integer weights stay
// integers in memory and become f32(q·s) here, in the load (docs/semantics.md).
#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#include "exec/native/convert.h"
#include "exec/native/kernels.h"
#include "exec/native/numeric.h"

namespace presk::exec::native {
namespace {

// The value of element (k, n) of an integer-weight B as f32(q·s).
inline float dequantized(const BSource& b, size_t k, size_t n) {
  const size_t index = b.first + k * b.ldb + n;
  const auto* bytes = static_cast<const uint8_t*>(b.data);
  int q;
  if (b.kind == BSource::Kind::i8) {
    q = static_cast<int8_t>(bytes[index]);
  } else {
    const uint8_t nibble = (bytes[index / 2] >> ((index % 2) * 4)) & 0xF;
    q = nibble >= 8 ? static_cast<int>(nibble) - 16 : nibble;
  }
  const float* s = b.scale_row(k);
  return static_cast<float>(q) * (b.scale_per_column ? s[n] : s[b.group == 0 ? 0 : n / b.group]);
}

// f32(q·s) over runs of integer weights, in loops compiled for AVX-512, AVX2 and the baseline
// (target_clones; an exact int → f32 conversion and one IEEE product per element round alike
// on each clone). s: one scale per column (`per_column`) or s[0] for all.
[[gnu::always_inline]] inline float scale_of(const float* s, bool per_column, size_t j) { return per_column ? s[j] : s[0]; }

__attribute__((target_clones("avx512f", "avx2", "default")))
void int8_run(const int8_t* q, const float* s, bool per_column, size_t n, float* out) {
  if (per_column) {
    for (size_t j = 0; j < n; ++j) out[j] = static_cast<float>(q[j]) * s[j];
  } else {
    for (size_t j = 0; j < n; ++j) out[j] = static_cast<float>(q[j]) * s[0];
  }
}

// `pairs` bytes of int4 weights, low nibble first: out[2i] from the low, out[2i+1] from the high.
__attribute__((target_clones("avx512f", "avx2", "default")))
void int4_run(const uint8_t* bytes, const float* s, bool per_column, size_t pairs, float* out) {
  for (size_t i = 0; i < pairs; ++i) {
    const int8_t low = static_cast<int8_t>(static_cast<uint8_t>(bytes[i] << 4)) >> 4;
    const int8_t high = static_cast<int8_t>(bytes[i]) >> 4;
    out[2 * i] = static_cast<float>(low) * scale_of(s, per_column, 2 * i);
    out[2 * i + 1] = static_cast<float>(high) * scale_of(s, per_column, 2 * i + 1);
  }
}

// Row k, columns j0 … j0+cols−1 of int8 weights as f32(q·s) (the bits of dequantized()).
// s: the scales of columns j0 … (per column) or the one scale of the whole run (per row).
template <typename T>
void load_int8_row(const BSource& b, size_t k, size_t j0, size_t cols, const float* s, T* out) {
  const int8_t* q = static_cast<const int8_t*>(b.data) + b.first + k * b.ldb + j0;
  if constexpr (std::is_same_v<T, float>) {
    int8_run(q, s, b.scale_per_column, cols, out);
  } else {
    for (size_t j = 0; j < cols; ++j) out[j] = static_cast<float>(q[j]) * scale_of(s, b.scale_per_column, j);
  }
}

// Row k of int4 weights as f32(q·s): a column at an odd index first, then whole bytes, then
// a last low nibble (the bits of dequantized()).
template <typename T>
void load_int4_row(const BSource& b, size_t k, size_t j0, size_t cols, const float* s, T* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(b.data);
  const size_t first = b.first + k * b.ldb + j0;
  auto one = [&](size_t j) {
    const size_t index = first + j;
    const int8_t q = static_cast<int8_t>(static_cast<uint8_t>(bytes[index / 2] << (4 - (index % 2) * 4))) >> 4;
    out[j] = static_cast<T>(static_cast<float>(q) * scale_of(s, b.scale_per_column, j));
  };
  size_t j = 0;
  if (cols > 0 && first % 2 == 1) one(j++);
  if constexpr (std::is_same_v<T, float>) {
    const size_t pairs = (cols - j) / 2;
    int4_run(bytes + (first + j) / 2, b.scale_per_column ? s + j : s, b.scale_per_column, pairs, out + j);
    j += 2 * pairs;
  }
  for (; j < cols; ++j) one(j);
}

// Columns j0 … j0+cols−1 of row k of integer weights: one run, or with group scales along N one
// run per group of G columns (each of one scale).
template <typename T, typename Load>
void load_int_row(const BSource& b, size_t k, size_t j0, size_t cols, T* out, Load load) {
  const float* s = b.scale_row(k);
  if (b.scale_per_column || b.group == 0) return load(j0, cols, b.scale_per_column ? s + j0 : s, out);
  for (size_t j = 0; j < cols;) {
    const size_t group = (j0 + j) / b.group;
    const size_t end = std::min(cols, (group + 1) * b.group - j0);
    load(j0 + j, end - j, s + group, out + j);
    j = end;
  }
}

// Columns j0 … j0+cols−1 of row k of B, converted to T, into out.
template <typename T>
void load_row(const BSource& b, size_t k, size_t j0, size_t cols, T* out) {
  switch (b.kind) {
    case BSource::Kind::f64: {
      const double* row = static_cast<const double*>(b.data) + b.first + k * b.ldb + j0;
      for (size_t j = 0; j < cols; ++j) out[j] = static_cast<T>(row[j]);
      break;
    }
    case BSource::Kind::f32: {
      const float* row = static_cast<const float*>(b.data) + b.first + k * b.ldb + j0;
      for (size_t j = 0; j < cols; ++j) out[j] = static_cast<T>(row[j]);
      break;
    }
    case BSource::Kind::bf16: {
      const uint16_t* row = static_cast<const uint16_t*>(b.data) + b.first + k * b.ldb + j0;
      if constexpr (std::is_same_v<T, float>) {
        widen_bf16(row, out, cols);  // exact, vectorized
      } else {
        for (size_t j = 0; j < cols; ++j) out[j] = static_cast<T>(from_bf16(row[j]));
      }
      break;
    }
    case BSource::Kind::i8:
      load_int_row(b, k, j0, cols, out, [&](size_t j, size_t n, const float* s, T* o) { load_int8_row(b, k, j, n, s, o); });
      break;
    case BSource::Kind::i4:
      load_int_row(b, k, j0, cols, out, [&](size_t j, size_t n, const float* s, T* o) { load_int4_row(b, k, j, n, s, o); });
      break;
  }
}

// A whole strip of a B stored in the compute type: 128 bytes of each of `rows` rows (src_ld
// elements apart) into consecutive rows of the strip.
__attribute__((target_clones("avx512f", "avx2", "default")))
void copy_strip_f32(const float* src, size_t src_ld, size_t rows, float* dst) {
  for (size_t t = 0; t < rows; ++t) {
    for (size_t j = 0; j < kPanelStrip<float>; ++j) dst[t * kPanelStrip<float> + j] = src[t * src_ld + j];
  }
}
__attribute__((target_clones("avx512f", "avx2", "default")))
void copy_strip_f64(const double* src, size_t src_ld, size_t rows, double* dst) {
  for (size_t t = 0; t < rows; ++t) {
    for (size_t j = 0; j < kPanelStrip<double>; ++j) dst[t * kPanelStrip<double> + j] = src[t * src_ld + j];
  }
}
// The same for a bf16 B entering an f32 panel: each pattern widened exactly (shifted into
// the high half), a whole strip per call instead of a dispatched conversion per strip row.
__attribute__((target_clones("avx512f", "avx2", "default")))
void widen_strip_bf16(const uint16_t* src, size_t src_ld, size_t rows, float* dst) {
  for (size_t t = 0; t < rows; ++t) {
    for (size_t j = 0; j < kPanelStrip<float>; ++j) dst[t * kPanelStrip<float> + j] = std::bit_cast<float>(uint32_t{src[t * src_ld + j]} << 16);
  }
}
void copy_strip(const float* src, size_t src_ld, size_t rows, float* dst) { copy_strip_f32(src, src_ld, rows, dst); }
void copy_strip(const double* src, size_t src_ld, size_t rows, double* dst) { copy_strip_f64(src, src_ld, rows, dst); }

// The whole strips of a panel whose B is stored in T (or in bf16, for f32 panels), copied (or
// widened) strip by strip; returns how many columns that packed (a multiple of the strip;
// load_panel packs the rest).
template <typename T>
size_t copy_whole_strips(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0,
                         size_t cols, T* dst) {
  constexpr size_t S = kPanelStrip<T>;
  constexpr BSource::Kind same = std::is_same_v<T, float> ? BSource::Kind::f32 : BSource::Kind::f64;
  if constexpr (std::is_same_v<T, float>) {
    if (b.kind == BSource::Kind::bf16) {
      const uint16_t* first = static_cast<const uint16_t*>(b.data) + b.first + (s.k_first + t0 * s.k_step) * b.ldb + j0;
      size_t s0 = 0;
      for (; s0 + S <= cols; s0 += S) widen_strip_bf16(first + s0, s.k_step * b.ldb, rows, dst + s0 * rows);
      return s0;
    }
  }
  if (b.kind != same) return 0;
  const T* first = static_cast<const T*>(b.data) + b.first + (s.k_first + t0 * s.k_step) * b.ldb + j0;
  size_t s0 = 0;
  for (; s0 + S <= cols; s0 += S) copy_strip(first + s0, s.k_step * b.ldb, rows, dst + s0 * rows);
  return s0;
}

// A transposed B (ldn != 1: stored in the compute type or a narrower one, each element widened
// exactly): strip by
// strip, 16 rows at a time, so that a tile's source lines (one run along k per column) stay in
// L1; zero past the last column. `value` converts one stored element (exactly).
template <typename T, typename E, typename F>
void transposed_strips(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0, size_t cols,
                       T* dst, size_t ld, F value) {
  constexpr size_t S = kPanelStrip<T>, kTile = 16;
  const E* first = static_cast<const E*>(b.data) + b.first + (s.k_first + t0 * s.k_step) * b.ldb + j0 * b.ldn;
  const size_t row_stride = s.k_step * b.ldb;
  for (size_t s0 = 0; s0 < ld; s0 += S) {
    T* strip = dst + s0 * rows;
    const size_t count = s0 < cols ? std::min(S, cols - s0) : 0;
    for (size_t u0 = 0; u0 < rows; u0 += kTile) {
      const size_t u1 = std::min(rows, u0 + kTile);
      for (size_t j = 0; j < count; ++j) {
        const E* column = first + (s0 + j) * b.ldn;
        for (size_t u = u0; u < u1; ++u) strip[u * S + j] = value(column[u * row_stride]);
      }
      for (size_t u = u0; u < u1; ++u) std::fill(strip + u * S + count, strip + u * S + S, T(0));
    }
  }
}

template <typename T>
void load_transposed_panel(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0,
                           size_t cols, T* dst, size_t ld) {
  if (b.kind == BSource::Kind::bf16) {
    return transposed_strips<T, uint16_t>(b, s, t0, rows, j0, cols, dst, ld,
                                          [](uint16_t x) { return static_cast<T>(from_bf16(x)); });
  }
  if constexpr (std::is_same_v<T, double>) {
    if (b.kind == BSource::Kind::f32) {
      return transposed_strips<T, float>(b, s, t0, rows, j0, cols, dst, ld, [](float x) { return static_cast<T>(x); });
    }
  }
  transposed_strips<T, T>(b, s, t0, rows, j0, cols, dst, ld, [](T x) { return x; });
}

// B in the compute type: whole strips copied; the rest (every strip of other types) row by
// row, strip by strip, converted (the packed layout of kernels.h).
template <typename T>
void load_panel(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0,
                size_t cols, T* dst, size_t ld) {
  constexpr size_t S = kPanelStrip<T>;
  if (b.ldn != 1) return load_transposed_panel(b, s, t0, rows, j0, cols, dst, ld);
  const size_t copied = copy_whole_strips(b, s, t0, rows, j0, cols, dst);
  for (size_t t = 0; t < rows && copied < ld; ++t) {
    const size_t k = s.k_first + (t0 + t) * s.k_step;
    for (size_t s0 = copied; s0 < ld; s0 += S) {
      T* out = dst + s0 * rows + t * S;
      const size_t count = s0 < cols ? std::min(S, cols - s0) : 0;
      if (count > 0) load_row(b, k, j0 + s0, count, out);
      std::fill(out + count, out + S, T(0));
    }
  }
}

}  // namespace

const float* BSource::scale_row(size_t k) const {
  if (group == 0) return scale_per_column ? scales : scales + k;
  return scales + (scale_per_column ? k / group : k) * scale_ld;
}

double BSource::value(size_t k, size_t n) const {
  switch (kind) {
    case Kind::f64: return static_cast<const double*>(data)[first + k * ldb + n * ldn];
    case Kind::f32: return static_cast<const float*>(data)[first + k * ldb + n * ldn];
    case Kind::bf16: return from_bf16(static_cast<const uint16_t*>(data)[first + k * ldb + n * ldn]);
    case Kind::i8:
    case Kind::i4: return dequantized(*this, k, n);
  }
  return 0;
}

PanelPrefetch b_panel_source(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0,
                             size_t cols) {
  size_t bits = 32;
  switch (b.kind) {
    case BSource::Kind::f64: bits = 64; break;
    case BSource::Kind::f32: bits = 32; break;
    case BSource::Kind::bf16: bits = 16; break;
    case BSource::Kind::i8: bits = 8; break;
    case BSource::Kind::i4: bits = 4; break;
  }
  if (rows == 0 || cols == 0 || b.ldn != 1) return {};  // (a transposed B: no prefetch)
  const size_t first = b.first + (s.k_first + t0 * s.k_step) * b.ldb + j0;  // in elements
  return {static_cast<const char*>(b.data) + first * bits / 8, rows, (cols * bits + 7) / 8 + 1,
          s.k_step * b.ldb * bits / 8};
}

void load_b_panel(const BSource& b, const ContractionShape& shape, size_t t0, size_t rows,
                  size_t j0, size_t cols, double* dst, size_t ld) {
  load_panel<double>(b, shape, t0, rows, j0, cols, dst, ld);
}

void load_b_panel(const BSource& b, const ContractionShape& shape, size_t t0, size_t rows,
                  size_t j0, size_t cols, float* dst, size_t ld) {
  load_panel<float>(b, shape, t0, rows, j0, cols, dst, ld);
}

}  // namespace presk::exec::native
