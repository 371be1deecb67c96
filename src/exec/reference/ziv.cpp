// ziv.h: one Arb evaluation, both ends of its ball rounded; MPFR when they differ.
#include "exec/reference/ziv.h"

#include <arb.h>

#include "exec/reference/fixed_exp.h"

namespace presk::reference {
namespace {

// Each thread's Arb and MPFR temporaries, kept between calls (no allocation per call once
// their limbs have grown).
struct Scratch {
  arb_t x, y;
  arf_t low, high;
  mpfr_t a, b;
  Scratch() {
    arb_init(x);
    arb_init(y);
    arf_init(low);
    arf_init(high);
    mpfr_init2(a, MPFR_PREC_MIN);
    mpfr_init2(b, MPFR_PREC_MIN);
  }
  ~Scratch() {
    arb_clear(x);
    arb_clear(y);
    arf_clear(low);
    arf_clear(high);
    mpfr_clear(a);
    mpfr_clear(b);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Inputs Arb takes here: regular, |x| < 2^20 (so exp(x) stays far inside MPFR's exponent range),
// x > 0 for log, and precisions up to 64 limbs.
bool arb_takes(Elementary f, mpfr_srcptr x, long bits) {
  return mpfr_regular_p(x) && mpfr_get_exp(x) <= 20 && bits <= 64 * 64 &&
         (f != Elementary::Log || mpfr_sgn(x) > 0);
}

// The ball's rounding when both ends agree on a nonzero number; false otherwise.
bool round_ball(Scratch& s, mpfr_ptr r, long bits) {
  if (!arb_is_finite(s.y)) return false;
  long work = bits + kZivExtraBits;
  arb_get_lbound_arf(s.low, s.y, work);
  arb_get_ubound_arf(s.high, s.y, work);
  if (mpfr_get_prec(s.a) != bits) {
    mpfr_set_prec(s.a, bits);
    mpfr_set_prec(s.b, bits);
  }
  arf_get_mpfr(s.a, s.low, MPFR_RNDN);
  arf_get_mpfr(s.b, s.high, MPFR_RNDN);
  if (mpfr_zero_p(s.a) || !mpfr_equal_p(s.a, s.b)) return false;
  mpfr_set(r, s.a, MPFR_RNDN);
  return true;
}

}  // namespace

void correctly_rounded(Elementary f, mpfr_ptr r, mpfr_srcptr x) {
  if (f == Elementary::Exp && exp_decided(r, x)) return;
  if (f == Elementary::Tanh && tanh_decided(r, x)) return;
  long bits = mpfr_get_prec(r);
  if (arb_takes(f, x, bits)) {
    thread_local Scratch scratch;
    arf_set_mpfr(arb_midref(scratch.x), x);
    mag_zero(arb_radref(scratch.x));
    long work = bits + kZivExtraBits;
    switch (f) {
      case Elementary::Exp: arb_exp(scratch.y, scratch.x, work); break;
      case Elementary::Log: arb_log(scratch.y, scratch.x, work); break;
      case Elementary::Tanh: arb_tanh(scratch.y, scratch.x, work); break;
    }
    if (round_ball(scratch, r, bits)) return;
  }
  switch (f) {
    case Elementary::Exp: mpfr_exp(r, x, MPFR_RNDN); break;
    case Elementary::Log: mpfr_log(r, x, MPFR_RNDN); break;
    case Elementary::Tanh: mpfr_tanh(r, x, MPFR_RNDN); break;
  }
}

}  // namespace presk::reference
