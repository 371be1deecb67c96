// Per-target SIMD kernels shared by the f64 and f32 families (Highway's per-target include
// pattern): elementwise transcendentals over arrays, and the contraction's panel kernel.
// Both reproduce the scalar definitions bit for bit: the math is math_impl.h under the same
// operation sequence, and the panel kernel vectorizes across independent output columns, so
// each lane runs the scalar fma chain c = fma(a_ik, b_kj, c), k ascending.
#if defined(PRESK_NATIVE_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PRESK_NATIVE_KERNELS_INL_H_
#undef PRESK_NATIVE_KERNELS_INL_H_
#else
#define PRESK_NATIVE_KERNELS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/native/kernels.h"
#include "exec/native/simd_ops-inl.h"

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {

#include "exec/native/math_impl.h"

template <class M>
HWY_INLINE typename M::V apply_unary(UnaryFn fn, typename M::V x) {
  switch (fn) {
    case UnaryFn::exp: return exp_impl<M>(x);
    case UnaryFn::log: return log_impl<M>(x);
    case UnaryFn::tanh: return tanh_impl<M>(x);
    case UnaryFn::gelu_tanh: return gelu_tanh_impl<M>(x);
    case UnaryFn::rsqrt: return rsqrt_impl<M>(x);
    case UnaryFn::sqrt: return M::sqrt(x);
    case UnaryFn::gelu_tanh_grad: return gelu_tanh_grad_impl<M>(x);
    case UnaryFn::gelu_erf:
      if constexpr (std::is_same_v<typename M::T, double>) return gelu_erf_impl<M>(x);
      break;
    case UnaryFn::gelu_erf_grad:
      if constexpr (std::is_same_v<typename M::T, double>) return gelu_erf_grad_impl<M>(x);
      break;
  }
  return x;  // gelu_erf(_grad) in f32 is computed by the f64 kernel (kernels_f32.cpp)
}

// y = fn(x) over n elements; the tail goes through a zero-padded vector.
template <typename T>
void unary_array(UnaryFn fn, const T* x, T* y, size_t n) {
  using M = SimdOps<T>;
  const typename M::D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(apply_unary<M>(fn, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN T buffer[hn::MaxLanes(d)] = {};
    std::memcpy(buffer, x + i, (n - i) * sizeof(T));
    hn::Store(apply_unary<M>(fn, hn::Load(d, buffer)), d, buffer);
    std::memcpy(y + i, buffer, (n - i) * sizeof(T));
  }
}

// One MR-row strip of the panel product: c[r][j] = fma chain over u < kc of
// a[r·lda + u·astep] · bp[u·ld + j], for every j < ncols (a multiple of 2 vectors).
template <typename T, size_t MR>
HWY_INLINE void panel_strip(const T* a, size_t lda, size_t astep, const T* bp, size_t ld,
                            size_t kc, T* c, size_t ncols) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t j = 0; j < ncols; j += 2 * lanes) {
    hn::Vec<decltype(d)> acc0[MR], acc1[MR];
    for (size_t r = 0; r < MR; ++r) {
      acc0[r] = hn::Load(d, c + r * ld + j);
      acc1[r] = hn::Load(d, c + r * ld + j + lanes);
    }
    for (size_t u = 0; u < kc; ++u) {
      const auto b0 = hn::Load(d, bp + u * ld + j);
      const auto b1 = hn::Load(d, bp + u * ld + j + lanes);
      for (size_t r = 0; r < MR; ++r) {
        const auto av = hn::Set(d, a[r * lda + u * astep]);
        acc0[r] = hn::MulAdd(av, b0, acc0[r]);
        acc1[r] = hn::MulAdd(av, b1, acc1[r]);
      }
    }
    for (size_t r = 0; r < MR; ++r) {
      hn::Store(acc0[r], d, c + r * ld + j);
      hn::Store(acc1[r], d, c + r * ld + j + lanes);
    }
  }
}

// The panel kernel: rows × ncols of c (row stride ld, 64-byte aligned, ncols a multiple of
// 64 bytes / sizeof(T) · 2) continue their fma chains over kc packed rows of B.
template <typename T>
void panel_kernel(const T* a, size_t lda, size_t astep, size_t rows, const T* bp, size_t ld,
                  size_t kc, T* c, size_t ncols) {
#if HWY_TARGET == HWY_AVX2
  constexpr size_t kRows = 4;  // 8 accumulators + 2 B + 1 A in 16 ymm registers
#else
  constexpr size_t kRows = 8;  // 16 accumulators in 32 zmm registers
#endif
  size_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    panel_strip<T, kRows>(a + r * lda, lda, astep, bp, ld, kc, c + r * ld, ncols);
  }
  for (; r < rows; ++r) panel_strip<T, 1>(a + r * lda, lda, astep, bp, ld, kc, c + r * ld, ncols);
}


// The small-M path (M <= 4, memory-bound): B is streamed row by row in its storage type and
// converted in registers — f32 as is, bf16 widened by a shift, int8 as f32(q·s) — so int8
// weights cross the memory bus as bytes. Each lane still runs c = fma(a_ik, b_kj, c), k
// ascending from c = +0: the same chains (and bits) as the panel kernel and the scalar loop.
template <size_t MR>
HWY_INLINE void stream_strip(const float* a, size_t lda, const ContractionShape& s, const BSource& b,
                             size_t j, float* c) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> d8;
  const hn::Rebind<uint16_t, decltype(d)> d16;
  const hn::Rebind<uint32_t, decltype(d)> du;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kVectors = 4;
  hn::Vec<decltype(d)> acc[MR][kVectors];
  for (size_t r = 0; r < MR; ++r) {
    for (size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::Zero(d);
  }
  for (size_t t = 0; t < s.terms; ++t) {
    const size_t k = s.k_first + t * s.k_step, row = b.first + k * b.ldb + j;
    hn::Vec<decltype(d)> bv[kVectors];
    for (size_t v = 0; v < kVectors; ++v) {
      if (b.kind == BSource::Kind::f32) {
        bv[v] = hn::LoadU(d, static_cast<const float*>(b.data) + row + v * lanes);
      } else if (b.kind == BSource::Kind::bf16) {
        const auto bits = hn::PromoteTo(du, hn::LoadU(d16, static_cast<const uint16_t*>(b.data) + row + v * lanes));
        bv[v] = hn::BitCast(d, hn::ShiftLeft<16>(bits));
      } else {
        const auto q = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, static_cast<const int8_t*>(b.data) + row + v * lanes)));
        const auto scale = b.scale_per_column ? hn::LoadU(d, b.scales + j + v * lanes) : hn::Set(d, b.scales[k]);
        bv[v] = hn::Mul(q, scale);
      }
    }
    for (size_t r = 0; r < MR; ++r) {
      const auto av = hn::Set(d, a[r * lda + k]);
      for (size_t v = 0; v < kVectors; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  for (size_t r = 0; r < MR; ++r) {
    for (size_t v = 0; v < kVectors; ++v) hn::StoreU(acc[r][v], d, c + r * s.n + j + v * lanes);
  }
}

// Columns [j0, j0 + cols) of all s.m (<= 4) rows; returns the first column it did not do
// (a tail narrower than one strip is left to the caller's scalar loop).
inline size_t stream_columns(const float* a, const ContractionShape& s, const BSource& b, size_t j0, size_t cols, float* c) {
  const size_t strip = 4 * hn::Lanes(hn::ScalableTag<float>());
  size_t j = j0;
  for (; j + strip <= j0 + cols; j += strip) {
    switch (s.m) {
      case 1: stream_strip<1>(a, s.lda, s, b, j, c); break;
      case 2: stream_strip<2>(a, s.lda, s, b, j, c); break;
      case 3: stream_strip<3>(a, s.lda, s, b, j, c); break;
      default: stream_strip<4>(a, s.lda, s, b, j, c); break;
    }
  }
  return j;
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
