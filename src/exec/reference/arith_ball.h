// The ball arithmetic of the reference interpreter (`--arith ball`), on Arb: every number is a
// ball [m ± r] proven to contain the real value of the op applied to any reals in its operands'
// balls, computed at working precision `bits`. The same op definitions as the MPFR arithmetic
// (arith_mpfr.h) run over it; an output's radius is a proven bound on the distance between its
// midpoint and the exact denotation.
#pragma once

#include <arb.h>
#include <arb_hypgeom.h>
#include <mpfr.h>

#include <cstdint>
#include <string>

#include "exec/reference/arith_mpfr.h"

namespace presk::reference {

// `count` Arb balls, each starting as exactly 0.
class BallBuffer {
 public:
  BallBuffer() = default;
  explicit BallBuffer(int64_t count);
  ~BallBuffer();
  BallBuffer(BallBuffer&& other) noexcept;
  BallBuffer& operator=(BallBuffer&& other) noexcept;
  BallBuffer(const BallBuffer&) = delete;
  BallBuffer& operator=(const BallBuffer&) = delete;

  arb_struct* data() { return numbers_; }
  const arb_struct* data() const { return numbers_; }
  int64_t size() const { return count_; }

 private:
  arb_struct* numbers_ = nullptr;
  int64_t count_ = 0;
};

class BallArith {
 public:
  using Number = arb_struct;
  using Buffer = BallBuffer;
  static constexpr const char* kName = "ball";
  static constexpr bool kIsBall = true;

  explicit BallArith(long bits) : bits_(bits) {}
  long bits() const { return bits_; }
  Buffer allocate(int64_t count) const { return Buffer(count); }

  void set(Number* r, const Number* x) const { arb_set(r, x); }
  void set_zero(Number* r) const { arb_zero(r); }
  void set_neg_inf(Number* r) const { arb_neg_inf(r); }
  void set_double(Number* r, double x) const { arb_set_d(r, x); }  // exact
  void set_int(Number* r, int64_t x) const { arb_set_si(r, x); }   // exact
  bool set_decimal(Number* r, const std::string& text) const;      // a ball containing it (or N/D)

  // Every op below follows the special-value rules of docs/reference.md ("Ball mode: special
  // values"): a ball whose midpoint is NaN is NaN and one whose midpoint is ±∞ is that infinity
  // (whatever its radius); an op with such an operand (a unary op also with an exact zero, which
  // stands for both +0 and −0) takes the value MPFR gives on every point its operands stand for
  // when all of them agree, exactly; NaN (the indeterminate ball) when they do not. max and min
  // are maxNum/minNum: a NaN operand yields the other operand, as in MPFR. Otherwise Arb's
  // enclosure.
  void add(Number* r, const Number* x, const Number* y) const {
    if (!special_binary(r, x, y, mpfr_add)) arb_add(r, x, y, bits_);
  }
  void sub(Number* r, const Number* x, const Number* y) const {
    if (!special_binary(r, x, y, mpfr_sub)) arb_sub(r, x, y, bits_);
  }
  void mul(Number* r, const Number* x, const Number* y) const {
    if (!special_binary(r, x, y, mpfr_mul)) arb_mul(r, x, y, bits_);
  }
  void div(Number* r, const Number* x, const Number* y) const {
    if (!special_binary(r, x, y, mpfr_div)) arb_div(r, x, y, bits_);
  }
  void div_int(Number* r, const Number* x, int64_t n) const { arb_div_si(r, x, n, bits_); }
  void max(Number* r, const Number* x, const Number* y) const;
  void min(Number* r, const Number* x, const Number* y) const;
  void neg(Number* r, const Number* x) const { arb_neg(r, x); }
  void abs(Number* r, const Number* x) const { arb_abs(r, x); }
  void exp(Number* r, const Number* x) const { unary(r, x, mpfr_exp, arb_exp); }
  void log(Number* r, const Number* x) const { unary(r, x, mpfr_log, arb_log); }
  void sqrt(Number* r, const Number* x) const { unary(r, x, mpfr_sqrt, arb_sqrt); }
  void rsqrt(Number* r, const Number* x) const { unary(r, x, mpfr_rec_sqrt, arb_rsqrt); }
  void tanh(Number* r, const Number* x) const { unary(r, x, mpfr_tanh, arb_tanh); }
  void erf(Number* r, const Number* x) const { unary(r, x, mpfr_erf, arb_hypgeom_erf); }
  void sin(Number* r, const Number* x) const { unary(r, x, mpfr_sin, arb_sin); }
  void cos(Number* r, const Number* x) const { unary(r, x, mpfr_cos, arb_cos); }
  void atan(Number* r, const Number* x) const { unary(r, x, mpfr_atan, arb_atan); }
  // The rounding of each endpoint (the roundings are monotone): exact where they agree, else
  // the ball spanning both (±∞ in the span: the whole line).
  void round(Number* r, const Number* x, Rounding kind) const;
  void pi(Number* r) const { arb_const_pi(r, bits_); }
  void scale_2exp(Number* r, const Number* x, long k) const { arb_mul_2exp_si(r, x, k); }

  // r ← r + Σ xᵢ·yᵢ, enclosed by arb_dot (one call per run of terms; contract_ball.cpp's path
  // where the operands are finite).
  void dot_accumulate(Number* r, const Number* x, int64_t x_stride, const Number* y,
                      int64_t y_stride, int64_t count) const;

  // Order of two balls when it is decided (disjoint, or both exact): −1, 0, +1, or
  // kUnordered when either midpoint is NaN (IEEE: every comparison but ≠ is false); an
  // overlap is the user error E0520: a comparison that ball arithmetic cannot decide.
  static constexpr int kUnordered = 2;
  int compare(const Number* x, const Number* y) const;

  double to_double(const Number* x) const { return arf_get_d(arb_midref(x), ARF_RND_NEAR); }
  std::string to_decimal(const Number* x, int digits) const;  // the midpoint
  std::string radius_decimal(const Number* x) const;          // an upper bound on the radius

 private:
  using PointUnary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
  using PointBinary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
  using BallUnary = void (*)(arb_ptr, arb_srcptr, slong);

  // A unary op: the special rules for a NaN, infinite or exactly zero operand; else Arb's
  // enclosure, or MPFR's value where Arb's has an infinite radius for an exact finite operand
  // (exp of a huge x, beyond Arb's exponents: MPFR's overflow to +∞).
  void unary(Number* r, const Number* x, PointUnary point, BallUnary ball) const;
  // True (r set) when x or y is NaN or infinite: the special rules.
  bool special_binary(Number* r, const Number* x, const Number* y, PointBinary point) const {
    if (arf_is_finite(arb_midref(x)) && arf_is_finite(arb_midref(y))) return false;
    special_binary_slow(r, x, y, point);
    return true;
  }
  void special_binary_slow(Number* r, const Number* x, const Number* y, PointBinary point) const;

  long bits_;
};

}  // namespace presk::reference
