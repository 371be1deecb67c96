// Arb storage and the few ball operations that are more than one call.
#include "exec/reference/arith_ball.h"

#include <algorithm>
#include <utility>

#include "exec/reference/arith_mpfr.h"
#include "support/diagnostics.h"

namespace presk::reference {

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
