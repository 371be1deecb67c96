// MPFR storage and the few MPFR operations that are more than one call.
#include "exec/reference/arith_mpfr.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include "exec/reference/exact_fma.h"
#include "exec/reference/limbs.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"
#include "support/exact_real.h"

namespace presk::reference {

namespace {

__extension__ typedef unsigned __int128 Wide;

// Whether the fast path below takes r, x and y: r of two limbs, x and y regular of at most two.
bool two_limbs(mpfr_srcptr r, mpfr_srcptr x, mpfr_srcptr y) {
  const long p = mpfr_get_prec(r);
  return p > 64 && p <= 128 && mpfr_regular_p(x) && mpfr_regular_p(y) && mpfr_get_prec(x) <= 128 &&
         mpfr_get_prec(y) <= 128;
}

}  // namespace

bool mul_two_limbs(mpfr_ptr r, mpfr_srcptr x, mpfr_srcptr y) {
  if (!two_limbs(r, x, y)) return false;
  // X = x1·2^64 + x0 (x0 = 0 for a one-limb x), the significand's top bit at 127; the same for Y
  const mp_limb_t x1 = x->_mpfr_d[mpfr_get_prec(x) > 64 ? 1 : 0], x0 = mpfr_get_prec(x) > 64 ? x->_mpfr_d[0] : 0;
  const mp_limb_t y1 = y->_mpfr_d[mpfr_get_prec(y) > 64 ? 1 : 0], y0 = mpfr_get_prec(y) > 64 ? y->_mpfr_d[0] : 0;
  const Wide low = static_cast<Wide>(x0) * y0, cross1 = static_cast<Wide>(x1) * y0, cross0 = static_cast<Wide>(x0) * y1,
             high = static_cast<Wide>(x1) * y1;
  // n3…n0 = X·Y (the top bit at 255 or 254)
  Wide middle = static_cast<Wide>(static_cast<mp_limb_t>(low >> 64)) + static_cast<mp_limb_t>(cross1) +
                static_cast<mp_limb_t>(cross0);
  mp_limb_t n0 = static_cast<mp_limb_t>(low), n1 = static_cast<mp_limb_t>(middle);
  Wide top = high + static_cast<mp_limb_t>(middle >> 64) + static_cast<mp_limb_t>(cross1 >> 64) +
             static_cast<mp_limb_t>(cross0 >> 64);
  mp_limb_t n3 = static_cast<mp_limb_t>(top >> 64), n2 = static_cast<mp_limb_t>(top);
  int64_t e = int64_t{x->_mpfr_exp} + y->_mpfr_exp;
  if ((n3 >> 63) == 0) {  // normalize: the top bit to 255
    n3 = (n3 << 1) | (n2 >> 63), n2 = (n2 << 1) | (n1 >> 63), n1 = (n1 << 1) | (n0 >> 63), n0 <<= 1;
    --e;
  }
  return limbs::round_window256(r, static_cast<Wide>(n3) << 64 | n2, static_cast<Wide>(n1) << 64 | n0, false, e,
                         x->_mpfr_sign * y->_mpfr_sign);
}

MpfrBuffer::MpfrBuffer(int64_t count, long bits) : count_(count) {
  internal_assert(count >= 0);
  size_t header_bytes = static_cast<size_t>(count) * sizeof(__mpfr_struct);
  header_bytes = (header_bytes + 15) / 16 * 16;
  size_t limb_bytes = mpfr_custom_get_size(bits);
  memory_ = std::malloc(header_bytes + static_cast<size_t>(count) * limb_bytes + 16);
  if (memory_ == nullptr) throw std::bad_alloc();
  numbers_ = static_cast<__mpfr_struct*>(memory_);
  char* limbs = static_cast<char*>(memory_) + header_bytes;
  parallel_chunks(count, 16384, [&](int64_t begin, int64_t end) {  // each header written once
    for (int64_t i = begin; i < end; ++i) {
      void* mantissa = limbs + static_cast<size_t>(i) * limb_bytes;
      mpfr_custom_init(mantissa, bits);
      mpfr_custom_init_set(&numbers_[i], MPFR_ZERO_KIND, 0, bits, mantissa);
    }
  });
}

MpfrBuffer::~MpfrBuffer() { std::free(memory_); }

MpfrBuffer::MpfrBuffer(MpfrBuffer&& other) noexcept
    : memory_(std::exchange(other.memory_, nullptr)),
      numbers_(std::exchange(other.numbers_, nullptr)),
      count_(std::exchange(other.count_, 0)) {}

MpfrBuffer& MpfrBuffer::operator=(MpfrBuffer&& other) noexcept {
  if (this != &other) {
    std::free(memory_);
    memory_ = std::exchange(other.memory_, nullptr);
    numbers_ = std::exchange(other.numbers_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

bool MpfrArith::set_decimal(Number* r, const std::string& text) const {
  if (text.find('/') != std::string::npos) {  // an exact quotient: one rounding of the rational
    std::optional<ExactReal> value = ExactReal::parse(text);
    if (value) mpfr_set_q(r, value->get(), MPFR_RNDN);
    return value.has_value();
  }
  char* end = nullptr;
  mpfr_strtofr(r, text.c_str(), &end, 10, MPFR_RNDN);
  return end != nullptr && end != text.c_str() && *end == '\0';
}

// The chain of mpfr_fma, computed by the limb kernel (exact_fma.h) with identical bits.
void MpfrArith::dot_accumulate(Number* r, const Number* x, int64_t x_stride, const Number* y,
                               int64_t y_stride, int64_t count) const {
  fma_chain(r, x, x_stride, y, y_stride, count);
}

int MpfrArith::compare(const Number* x, const Number* y) const {
  if (mpfr_nan_p(x) || mpfr_nan_p(y)) return kUnordered;
  int c = mpfr_cmp(x, y);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string MpfrArith::to_decimal(const Number* x, int digits) const {
  return format_mpfr(x, digits);
}

void round_mpfr(mpfr_ptr r, mpfr_srcptr x, Rounding kind) {
  if (!mpfr_number_p(x) || mpfr_zero_p(x)) {
    mpfr_set(r, x, MPFR_RNDN);
    return;
  }
  switch (kind) {
    case Rounding::nearest_integer: mpfr_rint(r, x, MPFR_RNDN); return;  // ties to even
    case Rounding::floor: mpfr_floor(r, x); return;
    case Rounding::ceil: mpfr_ceil(r, x); return;
    case Rounding::binary16:
    case Rounding::bfloat16: break;
  }
  // x = m·2^e with ½ ≤ |m| < 1: a format of p significant bits and smallest quantum 2^qmin has
  // the quantum 2^max(e − p, qmin) at x; x / quantum rounded to the nearest integer (ties to
  // even), times the quantum, is the nearest number of the format; beyond its largest, ±∞.
  const bool half = kind == Rounding::binary16;
  const long p = half ? 11 : 8, qmin = half ? -24 : -133, emax = half ? 16 : 128;
  const long quantum = std::max<long>(mpfr_get_exp(x) - p, qmin);
  mpfr_t scaled;
  mpfr_init2(scaled, mpfr_get_prec(x) + 2);
  mpfr_mul_2si(scaled, x, -quantum, MPFR_RNDN);  // exact
  mpfr_rint(scaled, scaled, MPFR_RNDN);
  mpfr_mul_2si(r, scaled, quantum, MPFR_RNDN);   // exact: at most p + 1 bits
  mpfr_clear(scaled);
  if (mpfr_get_exp(r) > emax) mpfr_set_inf(r, mpfr_sgn(x));
}

std::string format_mpfr(const __mpfr_struct* x, int digits, mpfr_rnd_t rounding) {
  if (mpfr_nan_p(x)) return "nan";
  if (mpfr_inf_p(x)) return mpfr_sgn(x) > 0 ? "inf" : "-inf";
  if (mpfr_zero_p(x)) return mpfr_signbit(x) ? "-0" : "0";
  mpfr_exp_t exponent = 0;
  char* text = mpfr_get_str(nullptr, &exponent, 10, static_cast<size_t>(digits), x, rounding);
  std::string mantissa(text);
  mpfr_free_str(text);
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  // mantissa = 0.d₁d₂… × 10^exponent  →  d₁.d₂… × 10^(exponent − 1)
  std::string out = sign + mantissa.substr(0, 1);
  if (mantissa.size() > 1) out += "." + mantissa.substr(1);
  long power = static_cast<long>(exponent) - 1;
  out += (power < 0 ? "e-" : "e+") + std::to_string(power < 0 ? -power : power);
  return out;
}

}  // namespace presk::reference
