// The exact meaning of the contract's schemes and keep modes (meaning.h), on GMP rationals.
#include "numerics/scheme/meaning.h"

#include <gmpxx.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/diagnostics.h"
#include "numerics/scheme/rational.h"
#include "support/number_format.h"

namespace presk::numerics {
namespace {

double binary16_scale(const mpq_class& largest) { return round_format(largest / 127, 11, -24, 16, false); }

int64_t clamp_code(const mpz_class& k, int64_t low, int64_t high) {
  if (k < low) return low;
  if (k > high) return high;
  return k.get_si();
}

double largest_magnitude(const double* x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return x[i];
    m = std::max(m, std::fabs(x[i]));
  }
  return m;
}

// Value x's words and its dequantized value in `scheme` under the finite scale s > 0.
double quantize_value(const mpq_class& x, const mpq_class& s, const Scheme& scheme, int32_t words[3]) {
  const bool is_unsigned = scheme.scale.kind == Scale::Kind::unsigned_pow2;
  const int64_t high = is_unsigned ? 255 : 127;
  const int64_t low = is_unsigned ? 0 : -127;
  if (scheme.words == Words::two_code16) {
    const int64_t c = clamp_code(nearest_even(x * 256 / s), low * 256, high * 256);
    const int64_t q2 = ((c % 256) + 256 + 128) % 256 - 128;  // the low byte, read signed
    words[0] = static_cast<int32_t>((c - q2) / 256);
    words[1] = static_cast<int32_t>(q2);
    return mpq_class(mpq_class(c) * s / 256).get_d();
  }
  const int64_t q1 = clamp_code(nearest_even(x / s), low, high);
  words[0] = static_cast<int32_t>(q1);
  mpq_class value = q1 * s;
  mpq_class step = s;
  for (int w = 1; w < word_count(scheme.words); ++w) {
    step /= 128;
    const int64_t q = clamp_code(nearest_even((x - value) / step), -127, 127);
    words[w] = static_cast<int32_t>(q);
    value += q * step;
  }
  return value.get_d();  // exact: at most 24 + 8 + 14 significant bits
}

// H·v in place, exactly (Sylvester's order), n a power of two.
template <typename T>
void hadamard_in_place(std::vector<T>& v) {
  for (size_t h = 1; h < v.size(); h *= 2) {
    for (size_t i = 0; i < v.size(); i += 2 * h) {
      for (size_t j = i; j < i + h; ++j) {
        const T a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

}  // namespace

namespace {

double scale_of_rational(const mpq_class& m, const Scale& scale) {
  switch (scale.kind) {
    case Scale::Kind::absmax: return round_format(m / 127, 24, -149, 128, false);
    case Scale::Kind::pow2: return round_format(m / 127, scale.significand_bits, kNoLimit, kNoLimit, true);
    case Scale::Kind::unsigned_pow2: return round_format(m / 255, 1, kNoLimit, kNoLimit, true);
  }
  return 0;
}

}  // namespace

QuantizedBlock quantize_rationals(std::vector<mpq_class> x, const Scheme& scheme) {
  const size_t n = x.size();
  mpq_class largest = 0;
  for (mpq_class& v : x) {
    if (scheme.scale.kind == Scale::Kind::unsigned_pow2 && v < 0) v = 0;  // unsigned codes hold no negative value
    largest = std::max(largest, mpq_class(abs(v)));
  }
  QuantizedBlock block;
  block.scale = scale_of_rational(largest, scheme.scale);
  block.words.assign(static_cast<size_t>(word_count(scheme.words)), std::vector<int32_t>(n, 0));
  block.values.assign(n, 0.0);
  if (block.scale == 0) return block;
  if (!std::isfinite(block.scale)) {  // past binary32: nothing the codes can stand for
    block.values.assign(n, std::numeric_limits<double>::quiet_NaN());
    return block;
  }
  const mpq_class s(block.scale);
  for (size_t i = 0; i < n; ++i) {
    int32_t words[3] = {0, 0, 0};
    block.values[i] = quantize_value(x[i], s, scheme, words);
    for (size_t w = 0; w < block.words.size(); ++w) block.words[w][i] = words[w];
  }
  return block;
}

namespace {

// A block with a NaN or an infinity: its scale is that value, its codes 0, its values NaN.
QuantizedBlock not_finite_block(double largest, size_t n, const Scheme& scheme) {
  QuantizedBlock block;
  block.scale = largest;
  block.words.assign(static_cast<size_t>(word_count(scheme.words)), std::vector<int32_t>(n, 0));
  block.values.assign(n, std::numeric_limits<double>::quiet_NaN());
  return block;
}

}  // namespace

double exact_scale(double largest, const Scale& scale) {
  internal_assert(!(largest < 0));
  if (!std::isfinite(largest)) return largest;
  return scale_of_rational(mpq_class(largest), scale);
}

QuantizedBlock quantize_block_exact(const double* x, size_t n, const Scheme& scheme) {
  const double largest = largest_magnitude(x, n);
  if (!std::isfinite(largest)) return not_finite_block(largest, n, scheme);
  return quantize_rationals(std::vector<mpq_class>(x, x + n), scheme);
}

QuantizedBlock quantize_block_exact(const __mpfr_struct* x, size_t n, const Scheme& scheme) {
  std::vector<mpq_class> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (mpfr_nan_p(&x[i])) return not_finite_block(std::numeric_limits<double>::quiet_NaN(), n, scheme);
    if (mpfr_inf_p(&x[i])) return not_finite_block(std::numeric_limits<double>::infinity(), n, scheme);
    mpfr_get_q(values[i].get_mpq_t(), &x[i]);
  }
  return quantize_rationals(std::move(values), scheme);
}

std::vector<QuantizedBlock> quantize_row_exact(const double* x, size_t n, size_t block, const Scheme& scheme) {
  internal_assert(block > 0 && n % block == 0);
  std::vector<QuantizedBlock> blocks;
  for (size_t b = 0; b < n; b += block) blocks.push_back(quantize_block_exact(x + b, block, scheme));
  return blocks;
}

std::vector<double> dequantized(const std::vector<QuantizedBlock>& blocks) {
  std::vector<double> values;
  for (const QuantizedBlock& b : blocks) values.insert(values.end(), b.values.begin(), b.values.end());
  return values;
}

double round_to_float_format(double x, FloatFormat format) {
  switch (format) {
    case FloatFormat::f32: return round_to(x, ElementType::f32);
    case FloatFormat::bf16: return round_to(x, ElementType::bf16);
    case FloatFormat::f16:
      if (!std::isfinite(x)) return x;
      return round_rational(mpq_class(x), FloatFormat::f16);
  }
  return x;
}

namespace {

// A row of finite exact values kept as int8 codes under one binary16 scale (rotated first).
KeptRow keep_int8_rationals(std::vector<mpq_class> y, bool rotated) {
  const size_t n = y.size();
  internal_assert(!rotated || (n > 0 && (n & (n - 1)) == 0));
  KeptRow row;
  row.codes.assign(n, 0);
  row.values.assign(n, 0.0);
  if (rotated) hadamard_in_place(y);
  mpq_class largest = 0;
  for (const mpq_class& v : y) largest = std::max(largest, mpq_class(abs(v)));
  row.scale = binary16_scale(largest);
  if (row.scale == 0) return row;
  if (!std::isfinite(row.scale)) {
    row.values.assign(n, std::numeric_limits<double>::quiet_NaN());
    return row;
  }
  const mpq_class s(row.scale);
  for (size_t i = 0; i < n; ++i) row.codes[i] = static_cast<int32_t>(clamp_code(nearest_even(y[i] / s), -127, 127));
  std::vector<int64_t> back(row.codes.begin(), row.codes.end());
  if (rotated) hadamard_in_place(back);  // H·q exactly, then ·s/n: exact in binary64
  for (size_t i = 0; i < n; ++i) row.values[i] = static_cast<double>(back[i]) * row.scale / static_cast<double>(rotated ? n : 1);
  return row;
}

// A row with a NaN or ±∞ kept as int8 codes: nothing the codes can stand for.
KeptRow not_finite_row(double largest, size_t n) {
  KeptRow row;
  row.scale = largest;
  row.codes.assign(n, 0);
  row.values.assign(n, std::numeric_limits<double>::quiet_NaN());
  return row;
}

}  // namespace

KeptRow keep_row_exact(const double* x, size_t n, const Keep& keep) {
  KeptRow row;
  if (keep.kind == Keep::Kind::as_computed) {
    row.values.assign(x, x + n);
    return row;
  }
  if (keep.kind == Keep::Kind::float_format) {
    for (size_t i = 0; i < n; ++i) row.values.push_back(round_to_float_format(x[i], keep.format));
    return row;
  }
  const double largest = largest_magnitude(x, n);
  if (!std::isfinite(largest)) return not_finite_row(largest, n);
  return keep_int8_rationals(std::vector<mpq_class>(x, x + n), keep.kind == Keep::Kind::int8_rows_rotated);
}

KeptRow keep_row_exact(const __mpfr_struct* x, size_t n, const Keep& keep) {
  KeptRow row;
  std::vector<mpq_class> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (!mpfr_number_p(&x[i])) {
      if (keep.kind == Keep::Kind::int8_rows || keep.kind == Keep::Kind::int8_rows_rotated) {
        return not_finite_row(mpfr_get_d(&x[i], MPFR_RNDN), n);
      }
      continue;
    }
    mpfr_get_q(values[i].get_mpq_t(), &x[i]);
  }
  if (keep.kind == Keep::Kind::int8_rows || keep.kind == Keep::Kind::int8_rows_rotated) {
    return keep_int8_rationals(std::move(values), keep.kind == Keep::Kind::int8_rows_rotated);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!mpfr_number_p(&x[i]) || keep.kind == Keep::Kind::as_computed) {
      row.values.push_back(mpfr_get_d(&x[i], MPFR_RNDN));  // as computed: its nearest binary64
    } else {
      row.values.push_back(round_rational(values[i], keep.format));
    }
  }
  return row;
}

}  // namespace presk::numerics
