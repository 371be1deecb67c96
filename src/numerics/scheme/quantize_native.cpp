// Native quantization and keeping of binary32 rows (kernels.h): binary64 and integer arithmetic,
// every quotient's nearest whole number fixed by an exact residual, so the codes are the exact
// meaning's (meaning.cpp) bit for bit.
#include <algorithm>
#include <cmath>
#include <limits>

#include "numerics/scheme/kernels.h"
#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

// The nearest whole number of y/s (s > 0 finite), ties to even: the binary64 quotient's nearest
// integer, corrected by the residual y − q·s, which fma gives exactly here (docs/chip.md).
double nearest_code(double y, double s) {
  double q = std::nearbyint(y / s);
  const double twice_rest = 2 * std::fma(-q, s, y);
  if (twice_rest > s || (twice_rest == s && std::fmod(q, 2) != 0)) q += 1;
  else if (twice_rest < -s || (twice_rest == -s && std::fmod(q, 2) != 0)) q -= 1;
  return q;
}

// d rounded up to a number of `bits` significant bits.
double round_up_bits(double d, int bits) {
  int e = 0;
  std::frexp(d, &e);
  return std::ldexp(std::ceil(std::ldexp(d, bits - e)), e - bits);
}

// The number of `bits` bits just above / below c (c > 0 such a number).
double next_bits(double c, int bits) {
  int e = 0;
  std::frexp(c, &e);
  return c + std::ldexp(1.0, e - bits);
}
double previous_bits(double c, int bits) {
  int e = 0;
  const double m = std::frexp(c, &e);
  return c - std::ldexp(1.0, (m == 0.5 ? e - 1 : e) - bits);
}

// The least number of `bits` bits at least m/divisor (m > 0): a binary64 guess, then exact
// checks c·divisor ≥ m (c·divisor is exact: at most 24 + 8 bits).
double least_at_least(double m, double divisor, int bits) {
  double c = round_up_bits(m / divisor, bits);
  while (c * divisor < m) c = next_bits(c, bits);
  while (previous_bits(c, bits) * divisor >= m) c = previous_bits(c, bits);
  return c;
}

// x rounded to binary16 (ties to even, subnormals, +∞ from 65520 up); x ≥ 0 a binary64 number
// that is M/127 rounded once (never a false tie: M/127's bits repeat with period 7).
double to_binary16(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  const int quantum = std::max(e - 11, -24);
  const double y = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return y >= 65520.0 ? std::numeric_limits<double>::infinity() : y;
}

template <typename T>
T largest_of(const T* x, size_t n, bool clamp_negative) {
  T m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return x[i];
    m = std::max(m, clamp_negative && x[i] < 0 ? T(0) : std::fabs(x[i]));
  }
  return m;
}

}  // namespace

double native_scale(double largest, const Scale& scale) {
  if (largest == 0 || !std::isfinite(largest)) return largest;
  const double m = largest;
  switch (scale.kind) {
    case Scale::Kind::absmax: return static_cast<float>(m / 127.0);  // one rounding (period 7: no false tie)
    case Scale::Kind::pow2: return least_at_least(m, 127.0, scale.significand_bits);
    case Scale::Kind::unsigned_pow2: return least_at_least(m, 255.0, 1);
  }
  return 0;
}

namespace {

template <typename T>
NativeBlock quantize_block(const T* x, size_t n, const Scheme& scheme) {
  const bool is_unsigned = scheme.scale.kind == Scale::Kind::unsigned_pow2;
  const int words = word_count(scheme.words);
  NativeBlock block;
  block.scale = native_scale(largest_of(x, n, is_unsigned), scheme.scale);
  block.words.assign(static_cast<size_t>(words), std::vector<uint8_t>(n, 0));
  block.values.assign(n, 0.0);
  if (block.scale == 0) return block;
  if (!std::isfinite(block.scale)) {
    block.values.assign(n, std::numeric_limits<double>::quiet_NaN());
    return block;
  }
  const double s = block.scale;
  const double high = is_unsigned ? 255 : 127, low = is_unsigned ? 0 : -127;
  for (size_t i = 0; i < n; ++i) {
    const double v = is_unsigned && x[i] < 0 ? 0.0 : static_cast<double>(x[i]);
    if (scheme.words == Words::two_code16) {
      const double c = std::clamp(nearest_code(v * 256, s), low * 256, high * 256);
      const int64_t code = static_cast<int64_t>(c);
      const int64_t q2 = ((code % 256) + 256 + 128) % 256 - 128;
      block.words[0][i] = static_cast<uint8_t>((code - q2) / 256);
      block.words[1][i] = static_cast<uint8_t>(static_cast<int8_t>(q2));
      block.values[i] = c * s / 256;
      continue;
    }
    const double q1 = std::clamp(nearest_code(v, s), low, high);
    block.words[0][i] = static_cast<uint8_t>(static_cast<int64_t>(q1));
    double rest = std::fma(-q1, s, v);  // exact
    double value = q1 * s, step = s;
    for (int w = 1; w < words; ++w) {
      step /= 128;
      const double q = std::clamp(nearest_code(rest, step), -127.0, 127.0);
      block.words[static_cast<size_t>(w)][i] = static_cast<uint8_t>(static_cast<int8_t>(q));
      rest = std::fma(-q, step, rest);  // exact
      value += q * step;                // exact: at most 24 + 8 + 14 bits
    }
    block.values[i] = value;
  }
  return block;
}

}  // namespace

NativeBlock quantize_block_native(const float* x, size_t n, const Scheme& scheme) { return quantize_block(x, n, scheme); }
NativeBlock quantize_block_native(const double* x, size_t n, const Scheme& scheme) { return quantize_block(x, n, scheme); }

namespace {

// The fast Walsh–Hadamard transform in place, unnormalised: log₂ n rounds of butterflies.
template <typename T>
void butterflies(T* v, size_t n) {
  internal_assert(n > 0 && (n & (n - 1)) == 0);
  for (size_t h = 1; h < n; h *= 2) {
    for (size_t i = 0; i < n; i += 2 * h) {
      for (size_t j = i; j < i + h; ++j) {
        const T a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

}  // namespace

void walsh_hadamard(double* v, size_t n) { butterflies(v, n); }
void walsh_hadamard(int32_t* v, size_t n) { butterflies(v, n); }

NativeKeptRow keep_row_native(const float* x, size_t n, bool rotated) {
  NativeKeptRow row;
  row.codes.assign(n, 0);
  row.values.assign(n, 0.0);
  const float input_largest = largest_of(x, n, false);
  if (!std::isfinite(input_largest)) {
    row.scale = input_largest;
    row.values.assign(n, std::numeric_limits<double>::quiet_NaN());
    return row;
  }
  std::vector<double> y(x, x + n);
  if (rotated) walsh_hadamard(y.data(), n);
  double largest = 0;
  for (double v : y) largest = std::max(largest, std::fabs(v));
  row.scale = to_binary16(largest / 127.0);
  if (row.scale == 0) return row;
  if (!std::isfinite(row.scale)) {
    row.values.assign(n, std::numeric_limits<double>::quiet_NaN());
    return row;
  }
  std::vector<int32_t> back(n);
  for (size_t i = 0; i < n; ++i) {
    back[i] = static_cast<int32_t>(std::clamp(nearest_code(y[i], row.scale), -127.0, 127.0));
    row.codes[i] = static_cast<int8_t>(back[i]);
  }
  if (rotated) walsh_hadamard(back.data(), n);
  const double divisor = rotated ? static_cast<double>(n) : 1.0;
  for (size_t i = 0; i < n; ++i) row.values[i] = back[i] * row.scale / divisor;
  return row;
}

}  // namespace presk::numerics
