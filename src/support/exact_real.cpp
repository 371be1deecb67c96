// Exact rationals for compile-time reals, their canonical text, and one rounding into a
// binary format computed in integer arithmetic (no floating-point step, no global state).
#include "support/exact_real.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace presk {
namespace {

// A decimal split into its parts: value = sign · digits · 10^exponent (digits without
// leading zeros; empty for zero).
struct Decimal {
  bool negative = false;
  std::string digits;
  long exponent = 0;
};

// Parses the grammar of ir::is_decimal_literal (with `allow_sign`); exponents beyond 10⁹
// saturate there (the callers bound them far below).
std::optional<Decimal> parse_decimal(std::string_view text, bool allow_sign) {
  Decimal out;
  size_t i = 0;
  if (allow_sign && i < text.size() && text[i] == '-') out.negative = true, ++i;
  auto digits = [&](std::string& into) {
    size_t from = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) into += text[i++];
    return i > from;
  };
  std::string whole, fraction, exponent;
  if (!digits(whole)) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits(fraction)) return std::nullopt;
  }
  bool negative_exponent = false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exponent = text[i++] == '-';
    if (!digits(exponent)) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  size_t first = exponent.find_first_not_of('0');
  long power = 0;
  if (first != std::string::npos)
    power = exponent.size() - first > 9 ? 1000000000L : std::atol(exponent.c_str() + first);
  out.exponent = (negative_exponent ? -power : power) - static_cast<long>(fraction.size());
  out.digits = whole + fraction;
  out.digits.erase(0, std::min(out.digits.size(), out.digits.find_first_not_of('0')));
  return out;
}

// r = sign · digits · 10^exponent, exactly.
void decimal_to_rational(const Decimal& decimal, mpq_t r) {
  mpz_t power;
  mpz_init(power);
  mpz_ui_pow_ui(power, 10, static_cast<unsigned long>(std::labs(decimal.exponent)));
  mpz_set_str(mpq_numref(r), decimal.digits.empty() ? "0" : decimal.digits.c_str(), 10);
  mpz_set_ui(mpq_denref(r), 1);
  if (decimal.exponent >= 0) {
    mpz_mul(mpq_numref(r), mpq_numref(r), power);
  } else {
    mpz_set(mpq_denref(r), power);
  }
  if (decimal.negative) mpz_neg(mpq_numref(r), mpq_numref(r));
  mpq_canonicalize(r);
  mpz_clear(power);
}

// An integer's digits, its trailing zeros (six or more) written as an exponent: "3e300".
std::string integer_text(const mpz_t z) {
  char* raw = mpz_get_str(nullptr, 10, z);
  std::string digits(raw);
  void (*release)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &release);
  release(raw, digits.size() + 1);
  size_t zeros = digits.size() - 1 - digits.find_last_not_of('0');
  if (digits == "0" || zeros < 6) return digits;
  return digits.substr(0, digits.size() - zeros) + "e" + std::to_string(zeros);
}

// The decimal m · 10^−k (m without trailing zeros) in positional form when short.
std::string decimal_text(const mpz_t m, long k) {
  std::string digits = integer_text(m);  // no trailing zeros, so no exponent
  if (k == 0) return digits;
  std::string sign;
  if (digits[0] == '-') sign = "-", digits.erase(0, 1);
  const long point = static_cast<long>(digits.size()) - k;  // digits before the point
  if (k < 0)
    return sign + digits +
           (-k < 6 ? std::string(static_cast<size_t>(-k), '0') : "e" + std::to_string(-k));
  if (point > 0)
    return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
           digits.substr(static_cast<size_t>(point));
  if (point > -6) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  return sign + digits + "e-" + std::to_string(k);
}

}  // namespace

ExactReal::ExactReal() {
  mpq_init(value_);
}
ExactReal::ExactReal(long value) {
  mpq_init(value_);
  mpq_set_si(value_, value, 1);
}
ExactReal::~ExactReal() {
  mpq_clear(value_);
}
ExactReal::ExactReal(const ExactReal& other) {
  mpq_init(value_);
  mpq_set(value_, other.value_);
}
ExactReal& ExactReal::operator=(const ExactReal& other) {
  if (this != &other) mpq_set(value_, other.value_);
  return *this;
}

std::optional<ExactReal> ExactReal::parse(std::string_view text) {
  size_t slash = text.find('/');
  std::optional<Decimal> numerator = parse_decimal(text.substr(0, slash), true);
  std::optional<Decimal> denominator = slash == std::string_view::npos
                                           ? Decimal{false, "1", 0}
                                           : parse_decimal(text.substr(slash + 1), false);
  if (!numerator || !denominator || denominator->digits.empty()) return std::nullopt;
  for (const Decimal* d : {&*numerator, &*denominator}) {
    if (std::labs(d->exponent) > kMaxDecimalExponent + static_cast<long>(text.size()))
      return std::nullopt;
  }
  ExactReal result, divisor;
  decimal_to_rational(*numerator, result.value_);
  decimal_to_rational(*denominator, divisor.value_);
  mpq_div(result.value_, result.value_, divisor.value_);
  return result;
}

ExactReal ExactReal::from_double(double value) {
  ExactReal result;
  mpq_set_d(result.value_, value);  // exact for every finite double
  return result;
}

ExactReal ExactReal::operator+(const ExactReal& other) const {
  ExactReal r;
  mpq_add(r.value_, value_, other.value_);
  return r;
}
ExactReal ExactReal::operator-(const ExactReal& other) const {
  ExactReal r;
  mpq_sub(r.value_, value_, other.value_);
  return r;
}
ExactReal ExactReal::operator*(const ExactReal& other) const {
  ExactReal r;
  mpq_mul(r.value_, value_, other.value_);
  return r;
}
ExactReal ExactReal::operator/(const ExactReal& other) const {
  ExactReal r;
  mpq_div(r.value_, value_, other.value_);
  return r;
}
ExactReal ExactReal::operator-() const {
  ExactReal r;
  mpq_neg(r.value_, value_);
  return r;
}

size_t ExactReal::size_bits() const {
  return std::max(mpz_sizeinbase(mpq_numref(value_), 2), mpz_sizeinbase(mpq_denref(value_), 2));
}

std::string ExactReal::text() const {
  mpz_t rest, m, five;
  mpz_inits(rest, m, nullptr);
  mpz_init_set_ui(five, 5);
  mpz_set(rest, mpq_denref(value_));
  const long twos = static_cast<long>(mpz_scan1(rest, 0));
  mpz_fdiv_q_2exp(rest, rest, static_cast<unsigned long>(twos));
  const long fives = static_cast<long>(mpz_remove(rest, rest, five));
  std::string out = integer_text(mpq_numref(value_)) + "/" + integer_text(mpq_denref(value_));
  if (mpz_cmp_ui(rest, 1) == 0) {  // a decimal: n · 2^(k−twos) · 5^(k−fives) / 10^k
    long k = std::max(twos, fives);
    mpz_set(m, mpq_numref(value_));
    mpz_mul_2exp(m, m, static_cast<unsigned long>(k - twos));
    mpz_ui_pow_ui(rest, 5, static_cast<unsigned long>(k - fives));
    mpz_mul(m, m, rest);
    while (mpz_sgn(m) != 0 && mpz_divisible_ui_p(m, 10)) mpz_divexact_ui(m, m, 10), --k;
    std::string decimal = decimal_text(m, k);
    if (decimal.size() <= out.size() + 4) out = decimal;  // N/D only when much shorter (2^-60)
  }
  mpz_clears(rest, m, five, nullptr);
  return out;
}

double ExactReal::to_double() const {
  return round_exact(*this, kBinary64);
}

double round_exact(const ExactReal& value, BinaryFormat format) {
  const __mpq_struct* q = value.get();
  const int sign = mpq_sgn(q);
  if (sign == 0) return 0.0;
  mpz_t n, d, m, r;
  mpz_inits(n, d, m, r, nullptr);
  mpz_abs(n, mpq_numref(q));
  mpz_set(d, mpq_denref(q));
  // e = ⌊log₂ |q|⌋: bit lengths give it or one more.
  long e = static_cast<long>(mpz_sizeinbase(n, 2)) - static_cast<long>(mpz_sizeinbase(d, 2));
  if (e >= 0)
    mpz_mul_2exp(m, d, static_cast<unsigned long>(e)), mpz_set(r, n);
  else
    mpz_mul_2exp(r, n, static_cast<unsigned long>(-e)), mpz_set(m, d);
  if (mpz_cmp(r, m) < 0) --e;
  double result = HUGE_VAL;
  if (e <= format.max_exponent) {
    // |q|·2^s rounded to an integer of at most `precision` bits (fewer below the normals).
    const long s = format.precision - 1 - std::max<long>(e, format.min_exponent);
    if (s >= 0)
      mpz_mul_2exp(n, n, static_cast<unsigned long>(s));
    else
      mpz_mul_2exp(d, d, static_cast<unsigned long>(-s));
    mpz_fdiv_qr(m, r, n, d);
    mpz_mul_2exp(r, r, 1);
    const int half = mpz_cmp(r, d);
    if (half > 0 || (half == 0 && mpz_odd_p(m))) mpz_add_ui(m, m, 1);
    result = std::ldexp(mpz_get_d(m), static_cast<int>(-s));  // m ≤ 2^precision: exact
    if (result >= std::ldexp(1.0, format.max_exponent + 1)) result = HUGE_VAL;
  }
  mpz_clears(n, d, m, r, nullptr);
  return sign < 0 ? -result : result;
}

std::optional<double> round_literal(std::string_view text, BinaryFormat format) {
  if (text.find('/') == std::string_view::npos) {
    std::optional<Decimal> decimal = parse_decimal(text, true);
    if (!decimal) return std::nullopt;
    const double sign = decimal->negative ? -1.0 : 1.0;
    const long magnitude =
        static_cast<long>(decimal->digits.size()) + decimal->exponent;  // |x| < 10^magnitude
    if (decimal->digits.empty() || magnitude < -400) return sign * 0.0;
    if (magnitude > 400) return sign * HUGE_VAL;
  }
  std::optional<ExactReal> value = ExactReal::parse(text);
  if (!value) return std::nullopt;
  return round_exact(*value, format);
}

}  // namespace presk
