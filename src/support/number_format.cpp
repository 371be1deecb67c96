// Rounding into presk's element types: bf16 from f32 by bit arithmetic, and one generic
// "round to p significand bits with a minimum exponent" used for every float type.
#include "support/number_format.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "support/diagnostics.h"

namespace presk {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A float format: `precision` significand bits (hidden bit included), smallest normal
// exponent `min_exponent` (below it the quantum stays 2^(min_exponent - precision + 1),
// which gives the subnormals), largest finite value `max_finite`.
struct FloatFormat {
  int precision;
  int min_exponent;
  double max_finite;
};

constexpr FloatFormat kF32{24, -126, 0x1.fffffep127};
constexpr FloatFormat kBf16{8, -126, 0x1.fep127};

// x rounded to nearest, ties to even, into `format`; overflow goes to ±Inf exactly when
// the rounded magnitude exceeds max_finite (for RNE that is |x| >= max_finite + ulp/2).
double round_float(double x, const FloatFormat& format) {
  if (std::isnan(x)) return std::copysign(std::numeric_limits<double>::quiet_NaN(), x);
  if (std::isinf(x) || x == 0) return x;
  int exponent = std::max(std::ilogb(x), format.min_exponent);
  // The spacing of the format's values around x: a power of two, so x / quantum and the
  // product below are exact; nearbyint rounds ties to even in the default rounding mode.
  double quantum = std::ldexp(1.0, exponent - (format.precision - 1));
  double rounded = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(rounded) > format.max_finite) return std::copysign(kInfinity, x);
  return rounded;
}

// Nearest integer (ties to even) saturated to [lowest, highest]; NaN -> 0, -0 -> +0.
double round_integer(double x, double lowest, double highest) {
  if (std::isnan(x)) return 0;
  double rounded = std::nearbyint(std::clamp(x, lowest, highest));
  return std::clamp(rounded, lowest, highest) + 0.0;
}

}  // namespace

uint16_t bf16_from_f32(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: keep the sign and the top of the payload, force the quiet bit so that a
    // payload living only in the low 16 bits does not become Inf.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Adding 0x7fff plus the lowest kept bit carries into the kept bits exactly when the
  // dropped half is above one half, or equal to one half with an odd kept part (RNE).
  // A carry out of the largest finite value lands on the Inf pattern, as it should.
  uint32_t rounding_bias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

float f32_from_bf16(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

double unit_roundoff(ElementType type) {
  return facts(type).unit_roundoff;
}

double round_to(double x, ElementType type) {
  switch (type) {
    case ElementType::f64:
      return std::isnan(x) ? std::copysign(std::numeric_limits<double>::quiet_NaN(), x) : x;
    case ElementType::f32:
      return round_float(x, kF32);
    case ElementType::bf16:
      return round_float(x, kBf16);
    case ElementType::i8:
    case ElementType::i4:
    case ElementType::i32:
    case ElementType::i64:
    case ElementType::u8:
    case ElementType::boolean:
      return round_integer(x, facts(type).lowest, facts(type).highest);
  }
  internal_assert(false && "unknown element type");
  return 0;
}

}  // namespace presk
