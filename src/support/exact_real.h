// Exact compile-time reals: the value of a literal of the IR (a decimal, or a quotient of two
// decimals "N/D"), held as a GMP rational, and its rounding, once, into a binary format.
// The front end folds `const` arithmetic in these; both executors read the literal's text.
#pragma once

#include <gmp.h>

#include <optional>
#include <string>
#include <string_view>

namespace presk {

// A rational number, exactly. Copyable; every operation is exact.
class ExactReal {
 public:
  ExactReal();
  explicit ExactReal(long value);
  ~ExactReal();
  ExactReal(const ExactReal& other);
  ExactReal& operator=(const ExactReal& other);

  // A decimal (`-12.5e-3`, the grammar of ir::is_decimal_literal) or a quotient of two
  // ("1/3e2"); nullopt when malformed, when a denominator is 0, or when an exponent lies
  // beyond ±kMaxDecimalExponent (such a number has no exact form of bounded size).
  static std::optional<ExactReal> parse(std::string_view text);
  static constexpr long kMaxDecimalExponent = 20000;
  // A finite double's value, exactly.
  static ExactReal from_double(double value);

  ExactReal operator+(const ExactReal& other) const;
  ExactReal operator-(const ExactReal& other) const;
  ExactReal operator*(const ExactReal& other) const;
  ExactReal operator/(const ExactReal& other) const;  // other ≠ 0
  ExactReal operator-() const;

  bool is_zero() const { return mpq_sgn(value_) == 0; }
  bool is_integer() const { return mpz_cmp_ui(mpq_denref(value_), 1) == 0; }
  // Bits of the larger of numerator and denominator: the size of the exact form.
  size_t size_bits() const;
  // The canonical text, parsed back by `parse` to this value: a decimal when the value has
  // one ("-0.00001", "1e300") unless "N/D" is more than 4 characters shorter (2^-60), else
  // "N/D" of two integers, six or more trailing zeros written as an exponent ("1/6", "1/3e300").
  std::string text() const;
  // The nearest double (ties to even; ±inf beyond its range).
  double to_double() const;

  const __mpq_struct* get() const { return value_; }

 private:
  mpq_t value_;
};

// A binary floating-point format: `precision` significand bits, the exponent of its smallest
// normal number (2^min_exponent) and of its largest binade (2^max_exponent).
struct BinaryFormat {
  int precision;
  int min_exponent;
  int max_exponent;
};
inline constexpr BinaryFormat kBinary64{53, -1022, 1023};
inline constexpr BinaryFormat kBinary32{24, -126, 127};
inline constexpr BinaryFormat kBfloat16{8, -126, 127};

// `value` rounded once, to nearest with ties to even, into `format` (gradual underflow,
// overflow to ±inf), returned as the double that holds that number exactly. A zero is +0.
double round_exact(const ExactReal& value, BinaryFormat format);

// A literal's text (a decimal or "N/D") rounded once into `format`; nullopt when malformed.
// Decimals whose exponent lies beyond every format's range round to ±0 or ±inf without
// being expanded, so any decimal text is accepted.
std::optional<double> round_literal(std::string_view text, BinaryFormat format);

}  // namespace presk
