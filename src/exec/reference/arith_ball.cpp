// Arb storage and the few ball operations that are more than one call.
#include "exec/reference/arith_ball.h"

#include <algorithm>
#include <utility>

#include "exec/reference/arith_mpfr.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

// The points a ball stands for in the special rules (arith_ball.h): its midpoint when that is
// NaN or ±∞; an exact value itself, an exact zero as +0 and −0; a wider ball's two endpoints
// and, when it contains 0, ±0 (the ops with a special operand depend on the other only through
// its sign, zero, and the order of its endpoints).
class Points {
 public:
  explicit Points(const arb_struct* x) {
    const arf_struct* mid = arb_midref(x);
    if (!arf_is_finite(mid) || mag_is_zero(arb_radref(x))) {
      add(mid);
      if (arf_is_zero(mid)) add_negative_zero();
      return;
    }
    arf_t bound;
    arf_init(bound);
    arb_get_lbound_arf(bound, x, arf_bits(mid) + 64);
    add(bound);
    arb_get_ubound_arf(bound, x, arf_bits(mid) + 64);
    add(bound);
    arf_clear(bound);
    if (arb_contains_zero(x)) {
      add_zero();
      add_negative_zero();
    }
  }
  ~Points() {
    for (int i = 0; i < count_; ++i) mpfr_clear(points_[i]);
  }
  Points(const Points&) = delete;
  Points& operator=(const Points&) = delete;

  int count() const { return count_; }
  mpfr_srcptr operator[](int i) const { return points_[i]; }

 private:
  void add(const arf_struct* value) {  // exactly: the precision holds every bit of the value
    mpfr_init2(points_[count_], std::max<long>(2, arf_bits(value)));
    arf_get_mpfr(points_[count_], value, MPFR_RNDN);
    ++count_;
  }
  void add_zero() {
    mpfr_init2(points_[count_], 2);
    mpfr_set_zero(points_[count_++], 1);
  }
  void add_negative_zero() {
    mpfr_init2(points_[count_], 2);
    mpfr_set_zero(points_[count_++], -1);
  }

  mpfr_t points_[4];
  int count_ = 0;
};

// The values of an op on every point its operands stand for, at `bits`; `agree` when they are
// all the same value (all NaN, or equal: +0 and −0 are the same real), each computed exactly.
class Outcomes {
 public:
  explicit Outcomes(long bits) : bits_(bits) {}
  ~Outcomes() {
    for (int i = 0; i < count_; ++i) mpfr_clear(values_[i]);
  }
  Outcomes(const Outcomes&) = delete;
  Outcomes& operator=(const Outcomes&) = delete;

  mpfr_ptr next() {
    internal_assert(count_ < 16);
    mpfr_init2(values_[count_], bits_);
    return values_[count_++];
  }
  void record(int ternary) { exact_ = exact_ && ternary == 0; }
  bool agree() const {
    for (int i = 1; i < count_; ++i) {
      const bool nan = mpfr_nan_p(values_[0]), other_nan = mpfr_nan_p(values_[i]);
      if (nan != other_nan || (!nan && !mpfr_equal_p(values_[0], values_[i]))) return false;
    }
    return exact_ && count_ > 0;
  }
  // r ← the agreed value as an exact ball (NaN: the indeterminate ball).
  void set(arb_struct* r) const {
    if (mpfr_nan_p(values_[0])) return arb_indeterminate(r);
    arf_set_mpfr(arb_midref(r), values_[0]);
    mag_zero(arb_radref(r));
  }

 private:
  long bits_;
  mpfr_t values_[16];
  int count_ = 0;
  bool exact_ = true;
};

bool is_nan(const arb_struct* x) { return arf_is_nan(arb_midref(x)); }
bool is_special(const arb_struct* x) { return !arf_is_finite(arb_midref(x)); }

}  // namespace

void BallArith::unary(Number* r, const Number* x, PointUnary point, BallUnary ball) const {
  if (is_special(x) || arb_is_zero(x)) {
    Points at(x);
    Outcomes values(bits_);
    for (int i = 0; i < at.count(); ++i) {
      mpfr_ptr value = values.next();
      values.record(point(value, at[i], MPFR_RNDN));
    }
    if (values.agree()) return values.set(r);
    if (is_special(x)) return arb_indeterminate(r);
  }
  ball(r, x, bits_);
  if (arb_is_exact(x) && mag_is_inf(arb_radref(r)) && arf_is_finite(arb_midref(r))) {
    Points at(x);  // beyond Arb's exponents: MPFR's value (its overflow to ±∞)
    mpfr_t value;
    mpfr_init2(value, bits_);
    point(value, at[0], MPFR_RNDN);
    if (mpfr_inf_p(value)) {
      arf_set_mpfr(arb_midref(r), value);
      mag_zero(arb_radref(r));
    }
    mpfr_clear(value);
  }
}

void BallArith::special_binary_slow(Number* r, const Number* x, const Number* y,
                                    PointBinary point) const {
  Points at_x(x), at_y(y);
  Outcomes values(bits_);
  for (int i = 0; i < at_x.count(); ++i) {
    for (int j = 0; j < at_y.count(); ++j) {
      mpfr_ptr value = values.next();
      values.record(point(value, at_x[i], at_y[j], MPFR_RNDN));
    }
  }
  if (values.agree()) return values.set(r);
  arb_indeterminate(r);
}

void BallArith::round(Number* r, const Number* x, Rounding kind) const {
  Points at(x);
  mpfr_t low, high;
  mpfr_init2(low, std::max<long>(bits_, mpfr_get_prec(at[0]) + 2));
  mpfr_init2(high, std::max<long>(bits_, mpfr_get_prec(at[at.count() > 1 ? 1 : 0]) + 2));
  round_mpfr(low, at[0], kind);
  round_mpfr(high, at[at.count() > 1 ? 1 : 0], kind);
  if (mpfr_nan_p(low) || mpfr_nan_p(high)) {
    arb_indeterminate(r);
  } else if (mpfr_equal_p(low, high)) {
    arf_set_mpfr(arb_midref(r), low);
    mag_zero(arb_radref(r));
  } else if (mpfr_inf_p(low) || mpfr_inf_p(high)) {
    arb_zero_pm_inf(r);
  } else {
    arb_set_interval_mpfr(r, low, high, bits_);
  }
  mpfr_clear(low);
  mpfr_clear(high);
}

// maxNum/minNum: a NaN operand yields the other (both NaN: NaN); Arb orders the rest, ±∞ included.
void BallArith::max(Number* r, const Number* x, const Number* y) const {
  if (is_nan(x)) return arb_set(r, y);
  if (is_nan(y)) return arb_set(r, x);
  arb_max(r, x, y, bits_);
}

void BallArith::min(Number* r, const Number* x, const Number* y) const {
  if (is_nan(x)) return arb_set(r, y);
  if (is_nan(y)) return arb_set(r, x);
  arb_min(r, x, y, bits_);
}

BallBuffer::BallBuffer(int64_t count) : count_(count) {
  internal_assert(count >= 0);
  if (count > 0) numbers_ = _arb_vec_init(count);
}

BallBuffer::~BallBuffer() {
  if (numbers_ != nullptr) _arb_vec_clear(numbers_, count_);
}

BallBuffer::BallBuffer(BallBuffer&& other) noexcept
    : numbers_(std::exchange(other.numbers_, nullptr)), count_(std::exchange(other.count_, 0)) {}

BallBuffer& BallBuffer::operator=(BallBuffer&& other) noexcept {
  if (this != &other) {
    if (numbers_ != nullptr) _arb_vec_clear(numbers_, count_);
    numbers_ = std::exchange(other.numbers_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

bool BallArith::set_decimal(Number* r, const std::string& text) const {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return arb_set_str(r, text.c_str(), bits_) == 0;
  arb_t denominator;  // N/D: the quotient of the balls of N and D, which contains it
  arb_init(denominator);
  bool ok = arb_set_str(r, text.substr(0, slash).c_str(), bits_) == 0 &&
            arb_set_str(denominator, text.substr(slash + 1).c_str(), bits_) == 0;
  if (ok) arb_div(r, r, denominator, bits_);
  arb_clear(denominator);
  return ok;
}

void BallArith::dot_accumulate(Number* r, const Number* x, int64_t x_stride, const Number* y,
                               int64_t y_stride, int64_t count) const {
  bool special = is_special(r);
  for (int64_t i = 0; i < count && !special; ++i) {
    special = is_special(x + i * x_stride) || is_special(y + i * y_stride);
  }
  if (special) {  // term by term, each by the special rules (arb_dot knows no NaN or ∞)
    arb_t term;
    arb_init(term);
    for (int64_t i = 0; i < count; ++i) {
      mul(term, x + i * x_stride, y + i * y_stride);
      add(r, r, term);
    }
    arb_clear(term);
    return;
  }
  arb_t total;
  arb_init(total);
  arb_dot(total, r, 0, x, x_stride, y, y_stride, count, bits_);
  arb_swap(r, total);
  arb_clear(total);
}

int BallArith::compare(const Number* x, const Number* y) const {
  if (arf_is_nan(arb_midref(x)) || arf_is_nan(arb_midref(y))) return kUnordered;
  if (arb_lt(x, y)) return -1;
  if (arb_gt(x, y)) return 1;
  if (arb_eq(x, y)) return 0;
  user_error("E0520").hint("run this entry with --arith mpfr, or raise --bits")
      << "ball arithmetic cannot decide a comparison: the balls " << to_decimal(x, 6) << " ± "
      << radius_decimal(x) << " and " << to_decimal(y, 6) << " ± " << radius_decimal(y)
      << " overlap";
  return 0;
}

std::string BallArith::to_decimal(const Number* x, int digits) const {
  const arf_struct* mid = arb_midref(x);
  mpfr_t point;
  mpfr_init2(point, std::max<long>(2, arf_bits(mid)));
  arf_get_mpfr(point, mid, MPFR_RNDN);  // exact: the precision holds every bit of the midpoint
  std::string text = format_mpfr(point, digits);
  mpfr_clear(point);
  return text;
}

std::string BallArith::radius_decimal(const Number* x) const {
  arf_t radius;
  arf_init(radius);
  arf_set_mag(radius, arb_radref(x));
  mpfr_t bound;
  mpfr_init2(bound, 64);
  arf_get_mpfr(bound, radius, MPFR_RNDU);  // rounded up: still a bound
  std::string text = format_mpfr(bound, 3, MPFR_RNDU);
  mpfr_clear(bound);
  arf_clear(radius);
  return text;
}

}  // namespace presk::reference
