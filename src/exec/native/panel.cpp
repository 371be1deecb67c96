// B panels of a contraction: rows of B (k = k_first + t·k_step) converted to the compute
// type while loaded. Floats widen exactly or round once (f64 → f32, RNE); integer weights stay
// integers in memory and become f32(q·s) here, in the load (docs/semantics.md).
#include <algorithm>
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
  return static_cast<float>(q) * b.scales[b.scale_per_column ? n : k];
}

// Row k, columns j0 … j0+cols−1 of int8 weights as f32(q·s), in a loop the compiler vectorizes
// (an exact conversion and one rounded product per element: the same bits as dequantized()).
template <typename T>
void load_int8_row(const BSource& b, size_t k, size_t j0, size_t cols, T* out) {
  const int8_t* q = static_cast<const int8_t*>(b.data) + b.first + k * b.ldb + j0;
  if (b.scale_per_column) {
    const float* s = b.scales + j0;
    for (size_t j = 0; j < cols; ++j) out[j] = static_cast<T>(static_cast<float>(q[j]) * s[j]);
  } else {
    const float s = b.scales[k];
    for (size_t j = 0; j < cols; ++j) out[j] = static_cast<T>(static_cast<float>(q[j]) * s);
  }
}

// Row k of int4 weights as f32(q·s): nibbles sign-extended from a shifted byte, no branches.
template <typename T>
void load_int4_row(const BSource& b, size_t k, size_t j0, size_t cols, T* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(b.data);
  const size_t first = b.first + k * b.ldb + j0;
  for (size_t j = 0; j < cols; ++j) {
    const size_t index = first + j;
    const int8_t q = static_cast<int8_t>(static_cast<uint8_t>(bytes[index / 2] << (4 - (index % 2) * 4))) >> 4;
    const float s = b.scales[b.scale_per_column ? j0 + j : k];
    out[j] = static_cast<T>(static_cast<float>(q) * s);
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
      load_int8_row(b, k, j0, cols, out);
      break;
    case BSource::Kind::i4:
      load_int4_row(b, k, j0, cols, out);
      break;
  }
}

// Row by row, strip by strip (the packed layout of kernels.h).
template <typename T>
void load_panel(const BSource& b, const ContractionShape& s, size_t t0, size_t rows, size_t j0,
                size_t cols, T* dst, size_t ld) {
  constexpr size_t S = kPanelStrip<T>;
  for (size_t t = 0; t < rows; ++t) {
    const size_t k = s.k_first + (t0 + t) * s.k_step;
    for (size_t s0 = 0; s0 < ld; s0 += S) {
      T* out = dst + s0 * rows + t * S;
      const size_t count = s0 < cols ? std::min(S, cols - s0) : 0;
      if (count > 0) load_row(b, k, j0 + s0, count, out);
      std::fill(out + count, out + S, T(0));
    }
  }
}

}  // namespace

double BSource::value(size_t k, size_t n) const {
  switch (kind) {
    case Kind::f64: return static_cast<const double*>(data)[first + k * ldb + n];
    case Kind::f32: return static_cast<const float*>(data)[first + k * ldb + n];
    case Kind::bf16: return from_bf16(static_cast<const uint16_t*>(data)[first + k * ldb + n]);
    case Kind::i8:
    case Kind::i4: return dequantized(*this, k, n);
  }
  return 0;
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
