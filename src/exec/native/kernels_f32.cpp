// The f32 family: binary32 transcendentals and the binary32 contraction, scalar (the
// definition) and Highway SIMD (AVX2/AVX-512 with FMA, dynamic dispatch; same bits).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exec/native/kernels_f32.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "exec/native/contract_driver.h"
#include "exec/native/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {

// Targets without FMA run the scalar definition instead.
void unary_f32_simd(UnaryFn fn, const float* x, float* y, size_t n) {
#if PRESK_HWY_FMA
  unary_array<float>(fn, x, y, n);
#else
  for (size_t i = 0; i < n; ++i) y[i] = unary_scalar(fn, x[i]);
#endif
}

void panel_f32_simd(const float* a, size_t lda, size_t astep, size_t rows, const float* bp,
                    size_t ld, size_t kc, float* c, size_t ncols) {
#if PRESK_HWY_FMA
  panel_kernel<float>(a, lda, astep, rows, bp, ld, kc, c, ncols);
#else
  panel_kernel_scalar<float>(a, lda, astep, rows, bp, ld, kc, c, ncols);
#endif
}

// The small-M streaming path; returns the first column not done (j0 on targets without FMA).
size_t stream_f32_simd(const float* a, const ContractionShape& shape, const BSource& b, size_t j0, size_t cols,
                       float* c) {
#if PRESK_HWY_FMA
  return stream_columns(a, shape, b, j0, cols, c);
#else
  (void)a, (void)shape, (void)b, (void)cols, (void)c;
  return j0;
#endif
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "exec/native/math_scalar.h"

namespace presk::exec::native {

HWY_EXPORT(unary_f32_simd);
HWY_EXPORT(panel_f32_simd);
HWY_EXPORT(stream_f32_simd);

float unary_scalar(UnaryFn fn, float x) {
  using M = scalar_math::ScalarOps<float>;
  switch (fn) {
    case UnaryFn::exp: return scalar_math::exp_impl<M>(x);
    case UnaryFn::log: return scalar_math::log_impl<M>(x);
    case UnaryFn::tanh: return scalar_math::tanh_impl<M>(x);
    case UnaryFn::gelu_tanh: return scalar_math::gelu_tanh_impl<M>(x);
    case UnaryFn::gelu_erf:
    case UnaryFn::gelu_erf_grad: return static_cast<float>(unary_scalar(fn, static_cast<double>(x)));
    case UnaryFn::rsqrt: return scalar_math::rsqrt_impl<M>(x);
    case UnaryFn::sqrt: return std::sqrt(x);
    case UnaryFn::gelu_tanh_grad: return scalar_math::gelu_tanh_grad_impl<M>(x);
  }
  return x;
}

// gelu_erf and gelu_erf_grad in f32: the binary64 function of the (exact) widened input,
// rounded once.
void via_f64(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar) {
  double buffer[256];
  for (size_t i0 = 0; i0 < n; i0 += 256) {
    const size_t count = std::min<size_t>(256, n - i0);
    for (size_t i = 0; i < count; ++i) buffer[i] = x[i0 + i];
    unary_f64(fn, buffer, buffer, count, force_scalar);
    for (size_t i = 0; i < count; ++i) y[i0 + i] = static_cast<float>(buffer[i]);
  }
}

void unary_f32(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar) {
  if (fn == UnaryFn::gelu_erf || fn == UnaryFn::gelu_erf_grad) return via_f64(fn, x, y, n, force_scalar);
  if (!force_scalar) return HWY_DYNAMIC_DISPATCH(unary_f32_simd)(fn, x, y, n);
  for (size_t i = 0; i < n; ++i) y[i] = unary_scalar(fn, x[i]);
}

namespace {

// Whether the small-M streaming path applies: few rows, B in a form it converts in registers.
bool streams(const ContractionShape& shape, const BSource& b) {
  const bool kind = b.kind == BSource::Kind::f32 || b.kind == BSource::Kind::bf16 || b.kind == BSource::Kind::i8;
  return shape.m >= 1 && shape.m <= 4 && kind && shape.n >= 64;
}

// The small-M path over column chunks (threads take whole chunks); the tail columns by the
// scalar definition.
void contract_streaming(const ContractionShape& shape, const float* a, const BSource& b, float* c, int threads) {
  constexpr size_t kChunk = 512;
  const size_t chunks = (shape.n + kChunk - 1) / kChunk;
  for_each_task(chunks, threads, [&](size_t chunk) {
    const size_t j0 = chunk * kChunk, cols = std::min(kChunk, shape.n - j0);
    const size_t done = HWY_DYNAMIC_DISPATCH(stream_f32_simd)(a, shape, b, j0, cols, c);
    for (size_t i = 0; i < shape.m; ++i) {
      for (size_t j = done; j < j0 + cols; ++j) {
        float acc = 0.0f;
        for (size_t t = 0; t < shape.terms; ++t) {
          const size_t k = shape.k_first + t * shape.k_step;
          acc = std::fma(a[i * shape.lda + k], static_cast<float>(b.value(k, j)), acc);
        }
        c[i * shape.n + j] = acc;
      }
    }
  });
}

}  // namespace

void contract_f32(const ContractionShape& shape, const float* a, const BSource& b, float* c,
                  int threads, bool force_scalar) {
  if (!force_scalar && streams(shape, b)) return contract_streaming(shape, a, b, c, threads);
  PanelKernelFn<float> kernel = &panel_kernel_scalar<float>;
  if (!force_scalar) kernel = HWY_DYNAMIC_DISPATCH(panel_f32_simd);
  contract_tiles<float>(shape, a, b, c, threads, kernel);
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
