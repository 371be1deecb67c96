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

// Walks the cache lines of a PanelPrefetch, row after row.
struct PrefetchCursor {
  const char* row = nullptr;
  size_t offset = 0, row_bytes = 0, stride = 0, left = 0;  // left: lines still to prefetch
  explicit PrefetchCursor(const PanelPrefetch& p)
      : row(p.first), row_bytes(p.row_bytes), stride(p.stride), left(p.rows * ((p.row_bytes + 63) / 64)) {}
  HWY_INLINE void one() {
    __builtin_prefetch(row + offset, 0, 2);  // into L2 (prefetcht1); no value depends on it
    offset += 64;
    if (offset >= row_bytes) offset = 0, row += stride;
    --left;
  }
};

// One MR-row by two-vector block of the panel product: chain (r, j + v) continues over u < kc
// with a[r·lda + u·astep] · b(u, j + v), for the two vectors' columns v; bs points at b(0, j)
// in the packed panel, whose rows are kPanelStrip<T> apart. `valid` of the strip's columns are
// stored (all, or the last strip of C's row: masked stores). Up to `lines` lines of `next` are
// prefetched, one per four u.
template <typename T, size_t MR>
HWY_INLINE void panel_block(const T* a, size_t lda, size_t astep, const T* bs, size_t kc,
                            const PanelChains<T>& c, size_t j, size_t valid, PrefetchCursor& next, size_t lines) {
  constexpr size_t S = kPanelStrip<T>;
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  hn::Vec<decltype(d)> acc0[MR], acc1[MR];
  for (size_t r = 0; r < MR; ++r) {
    acc0[r] = c.in ? hn::Load(d, c.in + r * c.in_ld + j) : hn::Zero(d);  // the tile is aligned
    acc1[r] = c.in ? hn::Load(d, c.in + r * c.in_ld + j + lanes) : hn::Zero(d);
  }
  auto step = [&](size_t u) HWY_ATTR {
    const auto b0 = hn::Load(d, bs + u * S);
    const auto b1 = hn::Load(d, bs + u * S + lanes);
    for (size_t r = 0; r < MR; ++r) {
      const auto av = hn::Set(d, a[r * lda + u * astep]);
      acc0[r] = hn::MulAdd(av, b0, acc0[r]);
      acc1[r] = hn::MulAdd(av, b1, acc1[r]);
    }
  };
  size_t u = 0;
  for (const size_t end = std::min(kc / 4, lines) * 4; u < end; u += 4) {
    next.one();
    step(u), step(u + 1), step(u + 2), step(u + 3);
  }
  for (; u < kc; ++u) step(u);
  for (size_t r = 0; r < MR; ++r) {
    T* out = c.out + r * c.out_ld + j;
    if (valid >= 2 * lanes) {
      hn::StoreU(acc0[r], d, out);
      hn::StoreU(acc1[r], d, out + lanes);
    } else {
      hn::BlendedStore(acc0[r], hn::FirstN(d, std::min(valid, lanes)), d, out);
      if (valid > lanes) hn::BlendedStore(acc1[r], hn::FirstN(d, valid - lanes), d, out + lanes);
    }
  }
}

// The panel kernel: `rows` rows of chains (c, kernels.h) continue over kc rows of the packed
// panel bp. Column strips outermost: one strip of B (kc × two vectors, contiguous) stays in
// L1 while every row block uses it.
template <typename T>
void panel_kernel(const T* a, size_t lda, size_t astep, size_t rows, const T* bp, size_t kc,
                  const PanelChains<T>& c) {
#if HWY_TARGET == HWY_AVX2
  constexpr size_t kRows = 4;  // 8 accumulators + 2 B + 1 A in 16 ymm registers
#else
  constexpr size_t kRows = 8;  // 16 accumulators in 32 zmm registers
#endif
  constexpr size_t S = kPanelStrip<T>;
  const size_t strip = 2 * hn::Lanes(hn::ScalableTag<T>());  // S, or S / 2 on AVX2
  PrefetchCursor next(c.next);
  const size_t blocks = (c.cols + strip - 1) / strip * (rows / kRows + rows % kRows);
  const size_t quota = blocks ? (next.left + blocks - 1) / blocks : 0;  // lines per block
  for (size_t j = 0; j < c.cols; j += strip) {
    const T* bs = bp + (j / S) * kc * S + j % S;
    const size_t valid = std::min(strip, c.cols - j);
    PanelChains<T> block = c;
    size_t r = 0;
    for (; r + kRows <= rows; r += kRows) {
      block.in = c.in ? c.in + r * c.in_ld : nullptr;
      block.out = c.out + r * c.out_ld;
      panel_block<T, kRows>(a + r * lda, lda, astep, bs, kc, block, j, valid, next, std::min(quota, next.left));
    }
    for (; r < rows; ++r) {
      block.in = c.in ? c.in + r * c.in_ld : nullptr;
      block.out = c.out + r * c.out_ld;
      panel_block<T, 1>(a + r * lda, lda, astep, bs, kc, block, j, valid, next, std::min(quota, next.left));
    }
  }
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
