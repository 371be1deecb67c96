// The MPFR arithmetic of the reference interpreter: every operation is correctly rounded to
// nearest (ties to even) at `bits`, the precision of every number it writes. The interpreter's
// ops are written once over an arithmetic policy (this one, or arith_ball.h); a policy names its
// number type, owns storage for tensors of them, and defines each scalar operation.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <string>

namespace presk::reference {

// The exact roundings of the op list (round, floor, ceil, round_f16, round_bf16).
enum class Rounding : uint8_t { nearest_integer, floor, ceil, binary16, bfloat16 };

// r ← x rounded by `kind`, exactly (r's precision ≥ 53 holds every result); NaN, ±∞ and ±0
// stay themselves. Monotone non-decreasing in x (the ball arithmetic rounds its endpoints).
void round_mpfr(mpfr_ptr r, mpfr_srcptr x, Rounding kind);

// `count` MPFR numbers of one precision in a single allocation (headers, then limbs); every
// number starts as +0. The numbers are initialized with MPFR's custom interface and must not
// be mpfr_clear'ed or have their precision changed.
class MpfrBuffer {
 public:
  MpfrBuffer() = default;
  MpfrBuffer(int64_t count, long bits);
  ~MpfrBuffer();
  MpfrBuffer(MpfrBuffer&& other) noexcept;
  MpfrBuffer& operator=(MpfrBuffer&& other) noexcept;
  MpfrBuffer(const MpfrBuffer&) = delete;
  MpfrBuffer& operator=(const MpfrBuffer&) = delete;

  __mpfr_struct* data() { return numbers_; }
  const __mpfr_struct* data() const { return numbers_; }
  int64_t size() const { return count_; }

 private:
  void* memory_ = nullptr;
  __mpfr_struct* numbers_ = nullptr;
  int64_t count_ = 0;
};

// r ← ∘(x·y) to nearest (ties to even) at r's precision p ∈ (64, 128], for regular x and y of
// at most two limbs each: their significands' exact product (four limbs) rounded once, the
// bits of mpfr_mul, in ≈ 0.6 of its time at 128 bits (bench/elementary_bench.cpp; a sum the
// same way was slower than mpfr_add, so sums stay MPFR's). False (r untouched) for anything else — a zero, infinite or NaN operand,
// more limbs, a result outside MPFR's exponent range — which mpfr_mul then decides.
bool mul_two_limbs(mpfr_ptr r, mpfr_srcptr x, mpfr_srcptr y);

class MpfrArith {
 public:
  using Number = __mpfr_struct;
  using Buffer = MpfrBuffer;
  static constexpr const char* kName = "mpfr";
  static constexpr bool kIsBall = false;

  explicit MpfrArith(long bits) : bits_(bits) {}
  long bits() const { return bits_; }
  Buffer allocate(int64_t count) const { return Buffer(count, bits_); }

  // Exact moves and constants.
  void set(Number* r, const Number* x) const { mpfr_set(r, x, MPFR_RNDN); }
  void set_zero(Number* r) const { mpfr_set_zero(r, 1); }
  void set_neg_inf(Number* r) const { mpfr_set_inf(r, -1); }
  void set_double(Number* r, double x) const { mpfr_set_d(r, x, MPFR_RNDN); }  // exact, bits ≥ 53
  void set_int(Number* r, int64_t x) const { mpfr_set_si(r, static_cast<long>(x), MPFR_RNDN); }
  // A literal (a decimal or an exact quotient N/D), correctly rounded; false: malformed.
  bool set_decimal(Number* r, const std::string& text) const;

  // Each correctly rounded.
  void add(Number* r, const Number* x, const Number* y) const { mpfr_add(r, x, y, MPFR_RNDN); }
  void sub(Number* r, const Number* x, const Number* y) const { mpfr_sub(r, x, y, MPFR_RNDN); }
  void mul(Number* r, const Number* x, const Number* y) const {
    if (!mul_two_limbs(r, x, y)) mpfr_mul(r, x, y, MPFR_RNDN);
  }
  void div(Number* r, const Number* x, const Number* y) const { mpfr_div(r, x, y, MPFR_RNDN); }
  void div_int(Number* r, const Number* x, int64_t n) const { mpfr_div_si(r, x, n, MPFR_RNDN); }
  void max(Number* r, const Number* x, const Number* y) const { mpfr_max(r, x, y, MPFR_RNDN); }
  void min(Number* r, const Number* x, const Number* y) const { mpfr_min(r, x, y, MPFR_RNDN); }
  void neg(Number* r, const Number* x) const { mpfr_neg(r, x, MPFR_RNDN); }
  void abs(Number* r, const Number* x) const { mpfr_abs(r, x, MPFR_RNDN); }
  void exp(Number* r, const Number* x) const { mpfr_exp(r, x, MPFR_RNDN); }
  void log(Number* r, const Number* x) const { mpfr_log(r, x, MPFR_RNDN); }
  void sqrt(Number* r, const Number* x) const { mpfr_sqrt(r, x, MPFR_RNDN); }
  void rsqrt(Number* r, const Number* x) const { mpfr_rec_sqrt(r, x, MPFR_RNDN); }
  void tanh(Number* r, const Number* x) const { mpfr_tanh(r, x, MPFR_RNDN); }
  void erf(Number* r, const Number* x) const { mpfr_erf(r, x, MPFR_RNDN); }
  void sin(Number* r, const Number* x) const { mpfr_sin(r, x, MPFR_RNDN); }
  void cos(Number* r, const Number* x) const { mpfr_cos(r, x, MPFR_RNDN); }
  void atan(Number* r, const Number* x) const { mpfr_atan(r, x, MPFR_RNDN); }
  void round(Number* r, const Number* x, Rounding kind) const { round_mpfr(r, x, kind); }
  void pi(Number* r) const { mpfr_const_pi(r, MPFR_RNDN); }
  void scale_2exp(Number* r, const Number* x, long k) const { mpfr_mul_2si(r, x, k, MPFR_RNDN); }

  // r = x₀y₀ + x₁y₁ + … added term by term in index order onto r's value, each term with one
  // rounding (fma): r ← ∘(xᵢ·yᵢ + r). Strides are in numbers.
  void dot_accumulate(Number* r, const Number* x, int64_t x_stride, const Number* y,
                      int64_t y_stride, int64_t count) const;

  // Order: −1, 0, +1 (x < y, x = y, x > y), or kUnordered when either is NaN (IEEE: every
  // comparison but ≠ is then false).
  static constexpr int kUnordered = 2;
  int compare(const Number* x, const Number* y) const;
  bool is_positive(const Number* x) const { return mpfr_sgn(x) > 0; }

  double to_double(const Number* x) const { return mpfr_get_d(x, MPFR_RNDN); }
  // "d.ddde±X" with `digits` significant digits, rounded to nearest; "inf", "-inf", "nan".
  std::string to_decimal(const Number* x, int digits) const;
  // No radius: an MPFR value is a point.
  std::string radius_decimal(const Number*) const { return "0"; }

 private:
  long bits_;
};

// Formats an MPFR number with `digits` significant digits (shared with the ball arithmetic).
std::string format_mpfr(const __mpfr_struct* x, int digits, mpfr_rnd_t rounding = MPFR_RNDN);

}  // namespace presk::reference
