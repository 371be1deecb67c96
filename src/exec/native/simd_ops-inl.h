// The Highway ops policy for math_impl.h, one per target (Highway's per-target include
// pattern: this header is re-entered for each target by foreach_target.h). PRESK_HWY_FMA is 1
// on targets whose MulAdd is a fused multiply-add (AVX2, AVX-512); elsewhere the kernels fall
// back to the scalar path, because mul+add would give other bits.
#if defined(PRESK_NATIVE_SIMD_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PRESK_NATIVE_SIMD_OPS_INL_H_
#undef PRESK_NATIVE_SIMD_OPS_INL_H_
#else
#define PRESK_NATIVE_SIMD_OPS_INL_H_
#endif

#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"

#undef PRESK_HWY_FMA
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define PRESK_HWY_FMA 1
#else
#define PRESK_HWY_FMA 0
#endif

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename TT>
struct SimdOps {
  using T = TT;
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  using D = hn::ScalableTag<T>;
  using DI = hn::RebindToSigned<D>;
  using V = hn::Vec<D>;
  using VI = hn::Vec<DI>;
  using Mask = hn::Mask<D>;

  static HWY_INLINE V set(T x) { return hn::Set(D(), x); }
  static HWY_INLINE V add(V a, V b) { return hn::Add(a, b); }
  static HWY_INLINE V sub(V a, V b) { return hn::Sub(a, b); }
  static HWY_INLINE V mul(V a, V b) { return hn::Mul(a, b); }
  static HWY_INLINE V div(V a, V b) { return hn::Div(a, b); }
  static HWY_INLINE V fma(V a, V b, V c) { return hn::MulAdd(a, b, c); }
  static HWY_INLINE V sqrt(V a) { return hn::Sqrt(a); }
  static HWY_INLINE V abs(V a) { return hn::Abs(a); }
  static HWY_INLINE V copysign(V magnitude, V sign) { return hn::CopySign(magnitude, sign); }
  static HWY_INLINE Mask lt(V a, V b) { return hn::Lt(a, b); }
  static HWY_INLINE Mask gt(V a, V b) { return hn::Gt(a, b); }
  static HWY_INLINE Mask eq(V a, V b) { return hn::Eq(a, b); }
  static HWY_INLINE Mask is_nan(V a) { return hn::IsNaN(a); }  // (Ne is ordered: false for NaN)
  static HWY_INLINE V select(Mask m, V yes, V no) { return hn::IfThenElse(m, yes, no); }
  static HWY_INLINE VI bits(V a) { return hn::BitCast(DI(), a); }
  static HWY_INLINE V from_bits(VI a) { return hn::BitCast(D(), a); }
  static HWY_INLINE VI iset(I x) { return hn::Set(DI(), x); }
  static HWY_INLINE VI iadd(VI a, VI b) { return hn::Add(a, b); }
  static HWY_INLINE VI isub(VI a, VI b) { return hn::Sub(a, b); }
  static HWY_INLINE VI iand(VI a, VI b) { return hn::And(a, b); }
  template <int n>
  static HWY_INLINE VI shl(VI a) { return hn::ShiftLeft<n>(a); }
  template <int n>
  static HWY_INLINE VI sar(VI a) { return hn::ShiftRight<n>(a); }
  static HWY_INLINE V to_real(VI a) { return hn::ConvertTo(D(), a); }
};

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard (per target)
