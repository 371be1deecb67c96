// The bf16 family. A bf16 site computes in f32 and rounds once (RNE) to bf16: for + − × ÷ √
// that is the correctly rounded bf16 result (f32 has 24 ≥ 2·8 + 2 bits, so rounding twice is
// innocuous); transcendentals are the f32 kernels' results rounded. Values of bf16 sites are
// held widened in f32 while computing and rounded on store; the SIMD path is the f32 kernel's.
#include "exec/native/convert.h"
#include "exec/native/kernels.h"
#include "exec/native/numeric.h"

namespace presk::exec::native {

const char* unary_fn_name(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::exp: return "exp";
    case UnaryFn::log: return "log";
    case UnaryFn::tanh: return "tanh";
    case UnaryFn::gelu_tanh: return "gelu_tanh";
    case UnaryFn::gelu_erf: return "gelu_erf";
    case UnaryFn::rsqrt: return "rsqrt";
    case UnaryFn::sqrt: return "sqrt";
    case UnaryFn::gelu_tanh_grad: return "gelu_tanh_grad";
    case UnaryFn::gelu_erf_grad: return "gelu_erf_grad";
    case UnaryFn::erf: return "erf";
    case UnaryFn::erf_grad: return "erf_grad";
  }
  return "?";
}

void unary_bf16(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar) {
  unary_f32(fn, x, y, n, force_scalar);
  if (!force_scalar) return round_through_bf16(y, y, n);  // convert.h: the same bits
  for (size_t i = 0; i < n; ++i) y[i] = round_bf16(y[i]);
}

}  // namespace presk::exec::native
