// The f64 family: binary64 transcendentals and the binary64 contraction, scalar (the
// definition) and Highway SIMD (AVX2/AVX-512 with FMA, dynamic dispatch; same bits).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exec/native/kernels_f64.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "exec/native/contract_driver.h"
#include "exec/native/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {

// Targets without FMA run the scalar definition instead.
void unary_f64_simd(UnaryFn fn, const double* x, double* y, size_t n) {
#if PRESK_HWY_FMA
  unary_array<double>(fn, x, y, n);
#else
  for (size_t i = 0; i < n; ++i) y[i] = unary_scalar(fn, x[i]);
#endif
}

void panel_f64_simd(const double* a, size_t lda, size_t astep, size_t rows, const double* bp, size_t kc,
                    const PanelChains<double>& c) {
#if PRESK_HWY_FMA
  panel_kernel<double>(a, lda, astep, rows, bp, kc, c);
#else
  panel_kernel_scalar<double>(a, lda, astep, rows, bp, kc, c);
#endif
}

SimdPath simd_path_f64_here() { return SimdPath{HWY_TARGET, PRESK_HWY_FMA != 0}; }

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "exec/native/math_scalar.h"

namespace presk::exec::native {

HWY_EXPORT(unary_f64_simd);
HWY_EXPORT(panel_f64_simd);
HWY_EXPORT(simd_path_f64_here);

SimdPath simd_path_f64() { return HWY_DYNAMIC_DISPATCH(simd_path_f64_here)(); }

double unary_scalar(UnaryFn fn, double x) {
  using M = scalar_math::ScalarOps<double>;
  switch (fn) {
    case UnaryFn::exp: return scalar_math::exp_impl<M>(x);
    case UnaryFn::log: return scalar_math::log_impl<M>(x);
    case UnaryFn::tanh: return scalar_math::tanh_impl<M>(x);
    case UnaryFn::gelu_tanh: return scalar_math::gelu_tanh_impl<M>(x);
    case UnaryFn::gelu_erf: return scalar_math::gelu_erf_impl<M>(x);
    case UnaryFn::rsqrt: return scalar_math::rsqrt_impl<M>(x);
    case UnaryFn::sqrt: return std::sqrt(x);
    case UnaryFn::gelu_tanh_grad: return scalar_math::gelu_tanh_grad_impl<M>(x);
    case UnaryFn::gelu_erf_grad: return scalar_math::gelu_erf_grad_impl<M>(x);
    case UnaryFn::erf: return scalar_math::erf_impl<M>(x);
    case UnaryFn::erf_grad: return scalar_math::erf_grad_impl<M>(x);
  }
  return x;
}

void unary_f64(UnaryFn fn, const double* x, double* y, size_t n, bool force_scalar) {
  if (!force_scalar) return HWY_DYNAMIC_DISPATCH(unary_f64_simd)(fn, x, y, n);
  for (size_t i = 0; i < n; ++i) y[i] = unary_scalar(fn, x[i]);
}

void contract_f64(const ContractionShape& shape, const double* a, const BSource& b, double* c,
                  int threads, bool force_scalar) {
  PanelKernelFn<double> kernel = &panel_kernel_scalar<double>;
  if (!force_scalar) kernel = HWY_DYNAMIC_DISPATCH(panel_f64_simd);
  contract_tiles<double>(shape, a, b, c, threads, kernel);
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
