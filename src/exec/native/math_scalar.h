// The scalar ops policy for math_impl.h: one value at a time, std::fma, bit casts. The
// functions instantiated with it *define* presk's transcendental bits.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace presk::exec::native::scalar_math {

template <typename TT>
struct ScalarOps {
  using T = TT;
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  using U = std::make_unsigned_t<I>;
  using V = T;
  using VI = I;
  using Mask = bool;

  static V set(T x) { return x; }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V div(V a, V b) { return a / b; }
  static V fma(V a, V b, V c) { return std::fma(a, b, c); }
  static V sqrt(V a) { return std::sqrt(a); }
  static V abs(V a) { return std::fabs(a); }
  static V copysign(V magnitude, V sign) { return std::copysign(magnitude, sign); }
  static Mask lt(V a, V b) { return a < b; }
  static Mask gt(V a, V b) { return a > b; }
  static Mask eq(V a, V b) { return a == b; }
  static Mask is_nan(V a) { return a != a; }
  static V select(Mask m, V yes, V no) { return m ? yes : no; }
  static VI bits(V a) { return std::bit_cast<I>(a); }
  static V from_bits(VI a) { return std::bit_cast<T>(a); }
  static VI iset(I x) { return x; }
  // Wrapping integer arithmetic, as in a SIMD lane.
  static VI iadd(VI a, VI b) { return static_cast<I>(static_cast<U>(a) + static_cast<U>(b)); }
  static VI isub(VI a, VI b) { return static_cast<I>(static_cast<U>(a) - static_cast<U>(b)); }
  static VI iand(VI a, VI b) { return a & b; }
  template <int n>
  static VI shl(VI a) { return static_cast<I>(static_cast<U>(a) << n); }
  template <int n>
  static VI sar(VI a) { return a >> n; }  // arithmetic (C++20)
  static V to_real(VI a) { return static_cast<T>(a); }
};

#include "exec/native/math_impl.h"

}  // namespace presk::exec::native::scalar_math
