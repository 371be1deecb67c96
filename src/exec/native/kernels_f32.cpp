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

void panel_f32_simd(const float* a, size_t lda, size_t astep, size_t rows, const float* bp, size_t kc,
                    const PanelChains<float>& c) {
#if PRESK_HWY_FMA
  panel_kernel<float>(a, lda, astep, rows, bp, kc, c);
#else
  panel_kernel_scalar<float>(a, lda, astep, rows, bp, kc, c);
#endif
}

SimdPath simd_path_f32_here() { return SimdPath{HWY_TARGET, PRESK_HWY_FMA != 0}; }

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "exec/native/math_scalar.h"

namespace presk::exec::native {

HWY_EXPORT(unary_f32_simd);
HWY_EXPORT(panel_f32_simd);
HWY_EXPORT(simd_path_f32_here);

SimdPath simd_path_f32() { return HWY_DYNAMIC_DISPATCH(simd_path_f32_here)(); }

float unary_scalar(UnaryFn fn, float x) {
  using M = scalar_math::ScalarOps<float>;
  switch (fn) {
    case UnaryFn::exp: return scalar_math::exp_impl<M>(x);
    case UnaryFn::log: return scalar_math::log_impl<M>(x);
    case UnaryFn::tanh: return scalar_math::tanh_impl<M>(x);
    case UnaryFn::gelu_tanh: return scalar_math::gelu_tanh_impl<M>(x);
    case UnaryFn::gelu_erf:
    case UnaryFn::gelu_erf_grad:
    case UnaryFn::erf:
    case UnaryFn::erf_grad: return static_cast<float>(unary_scalar(fn, static_cast<double>(x)));
    case UnaryFn::rsqrt: return scalar_math::rsqrt_impl<M>(x);
    case UnaryFn::sqrt: return std::sqrt(x);
    case UnaryFn::gelu_tanh_grad: return scalar_math::gelu_tanh_grad_impl<M>(x);
  }
  return x;
}

// gelu_erf, erf and their derivatives in f32: the binary64 function of the (exact) widened input,
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
  if (fn == UnaryFn::gelu_erf || fn == UnaryFn::gelu_erf_grad || fn == UnaryFn::erf || fn == UnaryFn::erf_grad) return via_f64(fn, x, y, n, force_scalar);
  if (!force_scalar) return HWY_DYNAMIC_DISPATCH(unary_f32_simd)(fn, x, y, n);
  for (size_t i = 0; i < n; ++i) y[i] = unary_scalar(fn, x[i]);
}

void contract_f32(const ContractionShape& shape, const float* a, const BSource& b, float* c,
                  int threads, bool force_scalar) {
  if (!force_scalar && stream_applies(shape, b)) {
    contract_stream(shape, a, b, c, threads, false);
    if (shape.bias) add_bias<float>(shape, c, shape.m, shape.n, shape.n, 0);
    return;
  }
  PanelKernelFn<float> kernel = &panel_kernel_scalar<float>;
  if (!force_scalar) kernel = HWY_DYNAMIC_DISPATCH(panel_f32_simd);
  contract_tiles<float>(shape, a, b, c, threads, kernel);
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
