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
    case UnaryFn::erf:
      if constexpr (std::is_same_v<typename M::T, double>) return erf_impl<M>(x);
      break;
    case UnaryFn::erf_grad:
      if constexpr (std::is_same_v<typename M::T, double>) return erf_grad_impl<M>(x);
      break;
  }
  return x;  // gelu_erf, erf and their derivatives in f32 is computed by the f64 kernel (kernels_f32.cpp)
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

// Terms a chain may skip. A term whose a is ±0 and whose b is finite adds an exact ±0 product:
// fma(±0, b, c) = c unless c is −0 (then +0 + −0 or −0 + −0 decides). A chain starts at +0,
// so leading such terms leave it +0; after the last nonzero a of a row it can be −0 only by an
// underflow, which the kernel checks before it skips the tail. `Span` is the range [lo, hi)
// of u outside which every row of a block has a = ±0 (lo = hi: all zero).
struct Span {
  size_t lo = 0, hi = 0;
};

// The nonzero span of one row a[u·astep], u < kc: from the front and the back, a vector at a
// time where the row is contiguous, so that a dense row costs two loads.
template <typename T>
HWY_INLINE Span nonzero_span(const T* a, size_t astep, size_t kc) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t lo = 0, hi = kc;
  if (astep == 1) {
    while (lo + lanes <= kc && hn::AllTrue(d, hn::Eq(hn::LoadU(d, a + lo), hn::Zero(d)))) lo += lanes;
  }
  while (lo < kc && a[lo * astep] == T(0)) ++lo;
  if (astep == 1) {
    while (hi >= lo + lanes && hn::AllTrue(d, hn::Eq(hn::LoadU(d, a + hi - lanes), hn::Zero(d)))) hi -= lanes;
  }
  while (hi > lo && a[(hi - 1) * astep] == T(0)) --hi;
  return {lo, hi};
}

// Whether b(u, ·) of the strip's two vectors is finite for every u in [u0, u1).
template <typename T>
HWY_INLINE bool strip_finite(const T* bs, size_t u0, size_t u1) {
  constexpr size_t S = kPanelStrip<T>;
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  auto finite = hn::Eq(hn::Zero(d), hn::Zero(d));
  for (size_t u = u0; u < u1; ++u) {
    finite = hn::And(finite, hn::And(hn::IsFinite(hn::Load(d, bs + u * S)), hn::IsFinite(hn::Load(d, bs + u * S + lanes))));
  }
  return hn::AllTrue(d, finite);
}

template <class D, class V>
HWY_INLINE bool any_negative_zero(D d, V v) {
  const hn::RebindToUnsigned<D> du;
  using TU = hn::TFromD<decltype(du)>;
  return !hn::AllFalse(du, hn::Eq(hn::BitCast(du, v), hn::Set(du, TU{1} << (8 * sizeof(TU) - 1))));
}

// One MR-row by two-vector block of the panel product: chain (r, j + v) continues over u < kc
// with a[r·lda + u·astep] · b(u, j + v), for the two vectors' columns v; bs points at b(0, j)
// in the packed panel, whose rows are kPanelStrip<T> apart. Terms outside `span` are skipped
// where that is exact (above): the leading ones when the chains start here at +0, the tail
// when no chain ended at −0, both only when the strip's b is finite (`strip_is_finite`: −1
// until the first block that could skip checks it). `valid` of the strip's columns are
// stored (all, or the last strip of C's row: masked stores). Up to `lines` lines of `next` are
// prefetched, one per four u.
template <typename T, size_t MR, bool kSpans>
HWY_INLINE void panel_block(const T* a, size_t lda, size_t astep, const T* bs, size_t kc,
                            const PanelChains<T>& c, size_t j, size_t valid, Span span, int& strip_is_finite,
                            PrefetchCursor& next, size_t lines) {
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
  size_t lo = c.in || !kSpans ? 0 : span.lo, hi = kSpans ? std::max(span.hi, lo) : kc;
  if (kSpans && (lo > 0 || hi < kc)) {
    if (strip_is_finite < 0) strip_is_finite = strip_finite(bs, 0, kc);  // once per strip
    if (!strip_is_finite) lo = 0, hi = kc;
  }
  size_t u = lo;
  for (const size_t end = lo + std::min((hi - lo) / 4, lines) * 4; u < end; ++u) {
    if ((u - lo) % 4 == 0) next.one();  // (unrolling by four instead spilled the row pointers)
    step(u);
  }
  for (; u < hi; ++u) step(u);
  bool negative_zero = false;
  for (size_t r = 0; kSpans && r < MR && hi < kc; ++r) negative_zero |= any_negative_zero(d, acc0[r]) || any_negative_zero(d, acc1[r]);
  if (negative_zero) {
    for (; u < kc; ++u) step(u);
  }
  if (c.bias) {  // the epilogue (ContractionShape::bias), in the add's operand order
    const auto bias0 = valid >= lanes ? hn::LoadU(d, c.bias + j) : hn::MaskedLoad(hn::FirstN(d, valid), d, c.bias + j);
    const auto bias1 = valid >= 2 * lanes ? hn::LoadU(d, c.bias + j + lanes)
                       : valid > lanes    ? hn::MaskedLoad(hn::FirstN(d, valid - lanes), d, c.bias + j + lanes)
                                          : hn::Zero(d);
    for (size_t r = 0; r < MR; ++r) {
      acc0[r] = c.bias_first ? hn::Add(bias0, acc0[r]) : hn::Add(acc0[r], bias0);
      acc1[r] = c.bias_first ? hn::Add(bias1, acc1[r]) : hn::Add(acc1[r], bias1);
    }
  }
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

// The span of the rows r0 … r0+n−1: the union of their nonzero spans.
template <typename T>
HWY_INLINE Span block_span(const T* a, size_t lda, size_t astep, size_t n, size_t kc) {
  Span block{kc, 0};
  for (size_t r = 0; r < n; ++r) {
    const Span row = nonzero_span(a + r * lda, astep, kc);
    if (row.lo < row.hi) block.lo = std::min(block.lo, row.lo), block.hi = std::max(block.hi, row.hi);
  }
  return block.lo < block.hi ? block : Span{0, 0};
}

// The panel kernel: `rows` rows of chains (c, kernels.h) continue over kc rows of the packed
// panel bp. Column strips outermost: one strip of B (kc × two vectors, contiguous) stays in
// L1 while every row block uses it. Each row block's span is found once, before the strips.
template <typename T>
void panel_kernel(const T* a, size_t lda, size_t astep, size_t rows, const T* bp, size_t kc,
                  const PanelChains<T>& c) {
#if HWY_TARGET == HWY_AVX2
  constexpr size_t kRows = 4;  // 8 accumulators + 2 B + 1 A in 16 ymm registers
#else
  constexpr size_t kRows = 8;  // 16 accumulators in 32 zmm registers
#endif
  constexpr size_t S = kPanelStrip<T>;
  constexpr size_t kMaxBlocks = 32;  // row blocks whose spans are kept (more: no skipping)
  const size_t strip = 2 * hn::Lanes(hn::ScalableTag<T>());  // S, or S / 2 on AVX2
  const size_t full = rows / kRows, blocks = full + rows % kRows;
  Span spans[kMaxBlocks];
  for (size_t b = 0; b < std::min(blocks, kMaxBlocks); ++b) {
    spans[b] = b < full ? block_span(a + b * kRows * lda, lda, astep, kRows, kc)
                        : block_span(a + (full * kRows + b - full) * lda, lda, astep, 1, kc);
  }
  auto span_of = [&](size_t b) { return b < kMaxBlocks ? spans[b] : Span{0, kc}; };
  bool skips = false;  // whether any block has terms to skip (else the plain blocks run)
  for (size_t b = 0; b < blocks && !skips; ++b) skips = span_of(b).hi < kc || (!c.in && span_of(b).lo > 0);
  PrefetchCursor next(c.next);
  const size_t calls = blocks * ((c.cols + strip - 1) / strip);  // panel_block calls
  const size_t quota = calls ? (next.left + calls - 1) / calls : 0;  // lines each prefetches
  for (size_t j = 0; j < c.cols; j += strip) {
    const T* bs = bp + (j / S) * kc * S + j % S;
    const size_t valid = std::min(strip, c.cols - j);
    PanelChains<T> block = c;
    int strip_is_finite = -1;  // not yet known
    for (size_t b = 0; b < blocks; ++b) {
      const size_t r = b < full ? b * kRows : full * kRows + (b - full);
      block.in = c.in ? c.in + r * c.in_ld : nullptr;
      block.out = c.out + r * c.out_ld;
      const size_t lines = std::min(quota, next.left);
      if (c.lower_only && b < full && c.col0 + j > c.row0 + r + kRows - 1) {  // no column wanted
        for (size_t i = 0; i < kRows; ++i) std::fill_n(block.out + i * block.out_ld + j, valid, T(0));
      } else if (b < full && skips) {
        panel_block<T, kRows, true>(a + r * lda, lda, astep, bs, kc, block, j, valid, span_of(b), strip_is_finite, next, lines);
      } else if (b < full) {
        panel_block<T, kRows, false>(a + r * lda, lda, astep, bs, kc, block, j, valid, {}, strip_is_finite, next, lines);
      } else {
        panel_block<T, 1, true>(a + r * lda, lda, astep, bs, kc, block, j, valid, span_of(b), strip_is_finite, next, lines);
      }
    }
  }
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
