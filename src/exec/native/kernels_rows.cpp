// Row kernels of the reductions: the maximum of a contiguous row (softmax's and
// cross_entropy's shift) and the sequential sums of several rows at once. Both give the bits
// of their scalar definitions: a maximum rounds nothing, and each row's sum is still the one
// chain s = t0, s += t1, … — rows are only interleaved, never a row's terms.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exec/native/kernels_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>
#include <limits>

#include "exec/native/kernels_rows.h"

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The largest non-NaN element of x[0, n) over whole vectors, NaN lanes read as −∞; the
// caller settles the cases this cannot (a result of ±0 or −∞, a tail).
template <typename T>
T vector_max(const T* x, size_t n, size_t* done) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  const auto lowest = hn::Set(d, -std::numeric_limits<T>::infinity());
  auto m = lowest;
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    m = hn::Max(m, hn::IfThenElse(hn::IsNaN(v), lowest, v));
  }
  *done = i;
  return hn::GetLane(hn::MaxOfLanes(d, m));
}

double max_f64_simd(const double* x, size_t n, size_t* done) { return vector_max(x, n, done); }
float max_f32_simd(const float* x, size_t n, size_t* done) { return vector_max(x, n, done); }

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace presk::exec::native {

HWY_EXPORT(max_f64_simd);
HWY_EXPORT(max_f32_simd);

namespace {

// The defining fold: m = x0; then m = x wherever m is NaN or x > m or x == m is +0, skipping
// NaN terms (maxNum, +0 above −0; all NaN: x0).
template <typename T>
T max_fold(const T* x, size_t n) {
  T m = x[0];
  for (size_t t = 1; t < n; ++t) {
    if (m != m || x[t] > m || (x[t] == m && !std::signbit(x[t]))) m = x[t] != x[t] ? m : x[t];
  }
  return m;
}

// The vector maximum where it is the fold's value: a finite nonzero or +∞ maximum of the
// vector part, not exceeded by the tail (the fold's value is then that maximum, whatever the
// order). Otherwise (signed zeros, all −∞ or NaN) the fold itself.
template <typename T>
T row_max(const T* x, size_t n, bool force_scalar, T (*simd)(const T*, size_t, size_t*)) {
  if (n == 0) return std::numeric_limits<T>::quiet_NaN();
  if (force_scalar) return max_fold(x, n);
  size_t done = 0;
  T m = simd(x, n, &done);
  if (done == 0 || m == 0 || m == -std::numeric_limits<T>::infinity()) return max_fold(x, n);
  for (size_t t = done; t < n; ++t) {
    if (x[t] > m) m = x[t];
  }
  return m;
}

// Sequential sums of `rows` rows of `len` terms (row r at x + r·stride), kRows chains at a time.
template <typename T>
void sums_of_rows(const T* x, size_t rows, size_t len, size_t stride, T* out) {
  constexpr size_t kRows = 8;
  size_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    T s[kRows];
    for (size_t q = 0; q < kRows; ++q) s[q] = len ? x[(r + q) * stride] : T(0);
    for (size_t t = 1; t < len; ++t) {
      for (size_t q = 0; q < kRows; ++q) s[q] = s[q] + x[(r + q) * stride + t];
    }
    for (size_t q = 0; q < kRows; ++q) out[r + q] = s[q];
  }
  for (; r < rows; ++r) {
    T s = len ? x[r * stride] : T(0);
    for (size_t t = 1; t < len; ++t) s = s + x[r * stride + t];
    out[r] = s;
  }
}

}  // namespace

double max_of_row(const double* x, size_t n, bool force_scalar) {
  return row_max<double>(x, n, force_scalar, HWY_DYNAMIC_DISPATCH(max_f64_simd));
}
float max_of_row(const float* x, size_t n, bool force_scalar) {
  return row_max<float>(x, n, force_scalar, HWY_DYNAMIC_DISPATCH(max_f32_simd));
}
void sequential_row_sums(const double* x, size_t rows, size_t len, size_t stride, double* out) {
  sums_of_rows(x, rows, len, stride, out);
}
void sequential_row_sums(const float* x, size_t rows, size_t len, size_t stride, float* out) {
  sums_of_rows(x, rows, len, stride, out);
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
