// Exact roundings of rationals (rational.h).
#include "numerics/scheme/rational.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace presk::numerics {

// The nearest whole number of q, ties to even.
mpz_class nearest_even(const mpq_class& q) {
  const mpz_class twice = 2 * q.get_num() + q.get_den();  // q + ½ = twice / (2·den)
  const mpz_class den2 = 2 * q.get_den();
  mpz_class k;
  mpz_fdiv_q(k.get_mpz_t(), twice.get_mpz_t(), den2.get_mpz_t());
  if (mpz_divisible_p(twice.get_mpz_t(), den2.get_mpz_t()) && mpz_odd_p(k.get_mpz_t())) k -= 1;  // a tie
  return k;
}

namespace {

mpq_class times_pow2(const mpq_class& q, long e) {
  mpq_class r;
  if (e >= 0) mpq_mul_2exp(r.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
  else mpq_div_2exp(r.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
  return r;
}

// e with 2^(e−1) ≤ a < 2^e, for a > 0.
long exponent_of(const mpq_class& a) {
  long e = static_cast<long>(mpz_sizeinbase(a.get_num_mpz_t(), 2)) - static_cast<long>(mpz_sizeinbase(a.get_den_mpz_t(), 2));
  while (a >= times_pow2(mpq_class(1), e)) ++e;
  while (a < times_pow2(mpq_class(1), e - 1)) --e;
  return e;
}

}  // namespace

double round_format(const mpq_class& a, int precision, int quantum_min, int exponent_max, bool upward) {
  if (a == 0) return 0.0;
  const long e = exponent_of(a);
  long quantum = e - precision;
  if (quantum_min != kNoLimit) quantum = std::max<long>(quantum, quantum_min);
  const mpq_class scaled = times_pow2(a, -quantum);
  mpz_class k;
  if (upward) mpz_cdiv_q(k.get_mpz_t(), scaled.get_num_mpz_t(), scaled.get_den_mpz_t());
  else k = nearest_even(scaled);
  const mpq_class result = times_pow2(mpq_class(k), quantum);
  if (exponent_max != kNoLimit && result >= times_pow2(mpq_class(1), exponent_max)) {
    return std::numeric_limits<double>::infinity();
  }
  return result.get_d();  // exact: `precision` ≤ 53 bits
}

double round_rational(const mpq_class& x, FloatFormat format) {
  const mpq_class a = abs(x);
  double r = 0;
  switch (format) {
    case FloatFormat::f32: r = round_format(a, 24, -149, 128, false); break;
    case FloatFormat::bf16: r = round_format(a, 8, -133, 128, false); break;
    case FloatFormat::f16: r = round_format(a, 11, -24, 16, false); break;
  }
  return x < 0 ? -r : r;
}

double nearest_binary64(const mpq_class& x) {
  const double r = round_format(abs(x), 53, -1074, 1024, false);
  return x < 0 ? -r : r;
}

}  // namespace presk::numerics
