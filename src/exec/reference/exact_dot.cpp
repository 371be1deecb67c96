// The window of exact_dot.h. A regular MPFR number of precision p is sign · M · 2^(e − 64N),
// M an integer of N = ⌈p/64⌉ limbs. The product of two is sign · Mx·My · 2^(ex + ey − 128N),
// Mx·My exact in 2N limbs. With e_min the least ex + ey over the nonzero products of the
// element, product k lands in the window shifted left by ex + ey − e_min bits; the window has
// (e_max − e_min)/64 + 2N + 3 limbs, so the 2N + 1 limbs of a shifted product fit and the top
// limbs hold the carries of up to 2^63 terms and the sign. Sums and differences are exact
// integer operations (add/subtract with carry, a carry or borrow running up while it lasts),
// so the order of the terms does not matter. finish() takes the magnitude, locates its top bit
// and rounds once to p bits, to nearest with ties to even (the round bit and a sticky OR of
// every bit below it).
#include "exec/reference/exact_dot.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "exec/reference/limbs.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

using limbs::add_carry;
using limbs::kLimbBits;
using limbs::Limb;
using limbs::multiply;
using limbs::spill;

bool finite(const __mpfr_struct* x) { return mpfr_regular_p(x) || mpfr_zero_p(x); }

// The bits of `low` that a left shift by s ∈ [0, 64) moves into the limb above (0 for s = 0).
inline Limb rise(Limb low, int s) { return (low >> 1) >> (kLimbBits - 1 - s); }

// p = a·b for N = 2 (4 limbs), in 128-bit halves.
// When one operand's low limb is 0 (a binary64 weight, or any number of ≤ 64 bits) it takes
// two multiplications instead of four.
inline void product_2(const Limb* a, const Limb* b, Limb* p) {
  using limbs::Wide;
  if (a[0] == 0 || b[0] == 0) {
    Limb m = a[0] == 0 ? a[1] : b[1];
    const Limb* other = a[0] == 0 ? b : a;
    Wide low = static_cast<Wide>(m) * other[0], high = static_cast<Wide>(m) * other[1];
    high += low >> kLimbBits;
    p[0] = 0;
    p[1] = static_cast<Limb>(low);
    p[2] = static_cast<Limb>(high);
    p[3] = static_cast<Limb>(high >> kLimbBits);
    return;
  }
  Wide low = static_cast<Wide>(a[0]) * b[0], cross1 = static_cast<Wide>(a[0]) * b[1];
  Wide cross2 = static_cast<Wide>(a[1]) * b[0], high = static_cast<Wide>(a[1]) * b[1];
  Wide middle = (low >> kLimbBits) + static_cast<Limb>(cross1) + static_cast<Limb>(cross2);
  high += (middle >> kLimbBits) + (cross1 >> kLimbBits) + (cross2 >> kLimbBits);
  p[0] = static_cast<Limb>(low);
  p[1] = static_cast<Limb>(middle);
  p[2] = static_cast<Limb>(high);
  p[3] = static_cast<Limb>(high >> kLimbBits);
}

// Adds every nonzero product xₖ·yₖ's magnitude into the window of its sign: w (positive) or
// w + size (negative), each of `size` limbs with bit 0 weighing 2^(e_min − 128N). Zero
// products are skipped; there are no infinities or NaNs. The sign picks a window rather than
// an add or a subtract, so the loop has no branch on it.
template <int N>
void add_products(Limb* w, int size, int64_t e_min, const __mpfr_struct* x, int64_t x_stride,
                  const __mpfr_struct* y, int64_t y_stride, int64_t count) {
  for (int64_t k = 0; k < count; ++k, x += x_stride, y += y_stride) {
    if (!mpfr_regular_p(x) || !mpfr_regular_p(y)) continue;  // a zero
    Limb p[2 * N];
    if constexpr (N == 2) {
      product_2(x->_mpfr_d, y->_mpfr_d, p);
    } else {
      multiply<N>(x->_mpfr_d, y->_mpfr_d, p);
    }
    auto offset = static_cast<uint64_t>(static_cast<int64_t>(x->_mpfr_exp) + y->_mpfr_exp - e_min);
    auto q = static_cast<int>(offset / kLimbBits), s = static_cast<int>(offset % kLimbBits);
    bool negative = (x->_mpfr_sign < 0) != (y->_mpfr_sign < 0);
    Limb* window = w + (negative ? size : 0);
    Limb* a = window + q;
    // a += p · 2^s: limb i of the shifted product is p[i] << s with the bits p[i − 1] spills
    Limb t[2 * N + 1];
    t[0] = p[0] << s;
#pragma GCC unroll 32
    for (int i = 1; i < 2 * N; ++i) t[i] = (p[i] << s) | rise(p[i - 1], s);
    t[2 * N] = rise(p[2 * N - 1], s);
    unsigned char c = 0;
#pragma GCC unroll 33
    for (int i = 0; i <= 2 * N; ++i) {
      unsigned long long sum = 0;
      c = _addcarry_u64(c, a[i], t[i], &sum);
      a[i] = sum;
    }
    for (int j = q + 2 * N + 1; c != 0 && j < size; ++j) c = ++window[j] == 0;
  }
}

using AddProducts = void (*)(Limb*, int, int64_t, const __mpfr_struct*, int64_t,
                             const __mpfr_struct*, int64_t, int64_t);

template <int... Ns>
constexpr auto add_table(std::integer_sequence<int, Ns...>) {
  return std::array<AddProducts, sizeof...(Ns)>{&add_products<Ns + 1>...};
}

constexpr auto kAddProducts = add_table(std::make_integer_sequence<int, kExactDotMaxBits / 64>());

std::atomic<ContractionSums> process_sums{ContractionSums::Exact};

}  // namespace

ContractionSums contraction_sums() { return process_sums.load(std::memory_order_relaxed); }

void set_contraction_sums(ContractionSums sums) { process_sums.store(sums, std::memory_order_relaxed); }

ExactDot::ExactDot(long bits)
    : bits_(bits),
      limbs_(static_cast<int>((bits + kLimbBits - 1) / kLimbBits)),
      emin_(mpfr_get_emin()),
      emax_(mpfr_get_emax()) {}

void ExactDot::scan(const __mpfr_struct* x, int64_t x_stride, const __mpfr_struct* y,
                    int64_t y_stride, int64_t count) {
  internal_assert(mode_ == Mode::Scanning);
  for (int64_t k = 0; k < count; ++k, x += x_stride, y += y_stride) {
    if (!mpfr_regular_p(x) || !mpfr_regular_p(y)) {
      special_ = special_ || !finite(x) || !finite(y);
      continue;
    }
    int64_t e = static_cast<int64_t>(x->_mpfr_exp) + y->_mpfr_exp;
    e_min_ = any_ ? std::min(e_min_, e) : e;
    e_max_ = any_ ? std::max(e_max_, e) : e;
    any_ = true;
  }
}

// The window when every product is finite, the exponents span at most kExactDotMaxSpan bits
// and the result's exponent lies inside MPFR's range whatever cancels; mpfr_dot otherwise.
void ExactDot::choose_mode() {
  int64_t lowest = e_min_ - int64_t{2} * limbs_ * kLimbBits;  // the window's bit 0
  bool window = !special_ && bits_ <= kExactDotMaxBits && e_max_ - e_min_ <= kExactDotMaxSpan &&
                lowest > emin_ && e_max_ + 2 * kLimbBits < emax_;
  mode_ = window ? Mode::Window : Mode::Collect;
  if (!window) return;
  window_limbs_ = static_cast<int>((e_max_ - e_min_) / kLimbBits) + 2 * limbs_ + 3;
  auto both = static_cast<size_t>(2 * window_limbs_);  // the positive and the negative window
  if (window_.size() < both) window_.resize(both);
  std::memset(window_.data(), 0, sizeof(Limb) * both);
}

void ExactDot::add(const __mpfr_struct* x, int64_t x_stride, const __mpfr_struct* y,
                   int64_t y_stride, int64_t count) {
  if (mode_ == Mode::Scanning) choose_mode();
  if (mode_ == Mode::Window) {
    if (!any_) return;  // every product is zero
    kAddProducts[static_cast<size_t>(limbs_ - 1)](window_.data(), window_limbs_, e_min_, x,
                                                   x_stride, y, y_stride, count);
    return;
  }
  for (int64_t k = 0; k < count; ++k) {
    xs_.push_back(const_cast<mpfr_ptr>(x + k * x_stride));
    ys_.push_back(const_cast<mpfr_ptr>(y + k * y_stride));
  }
}

void ExactDot::finish(__mpfr_struct* r) {
  internal_assert(mpfr_get_prec(r) == bits_);
  if (mode_ == Mode::Scanning) choose_mode();  // no terms at all
  if (mode_ == Mode::Window) {
    if (any_) {
      limbs::subtract(window_.data(), window_.data() + window_limbs_, window_limbs_);
      limbs::round_window(window_.data(), window_limbs_, e_min_ - int64_t{2} * limbs_ * kLimbBits, bits_,
                   limbs_, r);
    } else {
      mpfr_set_zero(r, 1);
    }
  } else {
    if (xs_.empty()) {
      mpfr_set_zero(r, 1);
    } else {
      mpfr_dot(r, xs_.data(), ys_.data(), static_cast<unsigned long>(xs_.size()), MPFR_RNDN);
    }
    if (mpfr_zero_p(r)) mpfr_set_zero(r, 1);
    xs_.clear();
    ys_.clear();
  }
  mode_ = Mode::Scanning;
  special_ = any_ = false;
  e_min_ = e_max_ = 0;
}

}  // namespace presk::reference
