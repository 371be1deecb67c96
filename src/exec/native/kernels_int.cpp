// The integer-weights family: quantization of a parameter into int8 or int4 (two to a byte,
// low nibble first) with one f32 scale per index of every axis but `over`, and the meaning of
// a quantized weight, f32(q·s). Contractions read the integers and dequantize in the panel
// load (panel.cpp) or, for few rows of A, in registers (kernels_stream.cpp), so weights stay
// integers in memory.
#include <algorithm>
#include <cmath>

#include "exec/native/kernels.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

// Strides of the row-major shape.
std::vector<size_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<size_t> strides(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * static_cast<size_t>(shape[a]);
  return strides;
}

// The scale: absmax s = f32(max|w| / qmax); pow2: the least power of two >= max|w| / qmax.
float scale_of(double max_abs, int qmax, bool pow2) {
  if (max_abs == 0) return 0.0f;  // an all-zero channel: scale 0, q = 0
  double s = max_abs / qmax;
  if (!pow2) return static_cast<float>(s);
  int exponent;
  double mantissa = std::frexp(s, &exponent);  // s = mantissa · 2^exponent, mantissa in [0.5, 1)
  return static_cast<float>(std::ldexp(1.0, mantissa == 0.5 ? exponent - 1 : exponent));
}

}  // namespace

size_t QuantizedWeights::scale_index(size_t index) const {
  // Axis `over` of the row-major index divided by the group (dropped without one).
  const std::vector<size_t> strides = strides_of(shape);
  const size_t extent = static_cast<size_t>(shape[over]);
  const size_t outer = index / (strides[over] * extent);
  const size_t inner = index % strides[over];
  if (group == 0) return outer * strides[over] + inner;
  const size_t groups = extent / static_cast<size_t>(group);
  const size_t along = index / strides[over] % extent / static_cast<size_t>(group);
  return (outer * groups + along) * strides[over] + inner;
}

int64_t QuantizedWeights::q_at(size_t index) const {
  if (bits == 8) return static_cast<int8_t>(q[index]);
  const uint8_t nibble = (q[index / 2] >> ((index % 2) * 4)) & 0xF;
  return nibble >= 8 ? static_cast<int64_t>(nibble) - 16 : nibble;
}

float QuantizedWeights::value(size_t index) const {
  return static_cast<float>(q_at(index)) * scales[scale_index(index)];
}

QuantizedWeights quantize(const std::vector<double>& values, const std::vector<int64_t>& shape,
                          int bits, int64_t over, bool pow2, int64_t group) {
  internal_assert(bits == 8 || bits == 4);
  internal_assert(over >= 0 && over < static_cast<int64_t>(shape.size()));
  internal_assert(group == 0 || (group > 0 && shape[over] % group == 0));
  QuantizedWeights w;
  w.bits = bits;
  w.shape = shape;
  w.over = over;
  w.group = group;
  const int qmax = (1 << (bits - 1)) - 1;
  const size_t count = values.size();
  const size_t per_scale = static_cast<size_t>(std::max<int64_t>(group == 0 ? shape[over] : group, 1));
  std::vector<double> max_abs(shape[over] == 0 ? 0 : count / per_scale, 0.0);
  for (size_t i = 0; i < count; ++i) {
    double& m = max_abs[w.scale_index(i)];
    m = std::max(m, std::fabs(values[i]));
  }
  w.scales.resize(max_abs.size());
  for (size_t c = 0; c < max_abs.size(); ++c) w.scales[c] = scale_of(max_abs[c], qmax, pow2);
  w.q.assign(bits == 8 ? count : (count + 1) / 2, 0);
  for (size_t i = 0; i < count; ++i) {
    const float s = w.scales[w.scale_index(i)];
    // q = w / s rounded to nearest, ties to even, clamped to ±qmax (s = 0: q = 0).
    double q = s == 0 ? 0.0 : std::nearbyint(values[i] / s);
    const int qi = static_cast<int>(std::clamp(q, -1.0 * qmax, 1.0 * qmax));
    if (bits == 8) {
      w.q[i] = static_cast<uint8_t>(static_cast<int8_t>(qi));
    } else {
      w.q[i / 2] |= static_cast<uint8_t>((qi & 0xF) << ((i % 2) * 4));
    }
  }
  return w;
}

}  // namespace presk::exec::native
