// The IR's `quantize` (ops.def; docs/chip.md, "The quantize op"): each block of attrs.starts[0]
// values along the last axis replaced by the values its quantized form stands for, by the
// scheme's exact meaning (numerics/scheme/meaning.h) on the numbers as the reference holds them;
// with spec "keep/<mode>", each row (the last axis) as a cache keeps it.
#include <arb.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
#include "numerics/scheme/attention_spec.h"
#include "numerics/scheme/contract.h"
#include "numerics/scheme/meaning.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

void quantize_block(const MpfrArith& arith, const __mpfr_struct* x, __mpfr_struct* out, int64_t n,
                    const numerics::Scheme& scheme) {
  const numerics::QuantizedBlock q = numerics::quantize_block_exact(x, static_cast<size_t>(n), scheme);
  for (int64_t i = 0; i < n; ++i) arith.set_double(out + i, q.values[static_cast<size_t>(i)]);  // exact
}

// Where every ball of x is a point: out = meaning(the midpoints, exactly as MPFR numbers),
// each value exact; true. False (out untouched) where a ball has a radius.
template <class Meaning>
bool on_points(const BallArith& arith, const arb_struct* x, arb_struct* out, int64_t n, Meaning meaning) {
  for (int64_t i = 0; i < n; ++i) {
    if (!arb_is_exact(x + i)) return false;
  }
  std::vector<__mpfr_struct> mids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    mpfr_init2(&mids[i], std::max<long>(2, static_cast<long>(arf_bits(arb_midref(x + i)))));
    arf_get_mpfr(&mids[i], arb_midref(x + i), MPFR_RNDN);  // exact: the midpoint's own bits
  }
  const std::vector<double> values = meaning(mids.data());
  for (int64_t i = 0; i < n; ++i) {
    arith.set_double(out + i, values[static_cast<size_t>(i)]);
    mpfr_clear(&mids[i]);
  }
  return true;
}

// A ball arithmetic's block: where every ball is a point, the meaning on those points; else a
// ball about 0 of radius 2·max|x| over the block, which holds the value of any point of the
// balls (a value lies within half its scale's step of x, and a scale is at most 2·max|x|/127).
void quantize_block(const BallArith& arith, const arb_struct* x, arb_struct* out, int64_t n,
                    const numerics::Scheme& scheme) {
  const auto meaning = [&](const __mpfr_struct* mids) {
    return numerics::quantize_block_exact(mids, static_cast<size_t>(n), scheme).values;
  };
  if (on_points(arith, x, out, n, meaning)) return;
  arb_t largest, a;
  arb_init(largest);
  arb_init(a);
  for (int64_t i = 0; i < n; ++i) {
    arb_abs(a, x + i);
    arb_max(largest, largest, a, arith.bits());
  }
  mag_t radius;
  mag_init(radius);
  arb_get_mag(radius, largest);
  mag_mul_2exp_si(radius, radius, 1);
  for (int64_t i = 0; i < n; ++i) {
    arb_zero(out + i);
    mag_set(arb_radref(out + i), radius);
  }
  mag_clear(radius);
  arb_clear(a);
  arb_clear(largest);
}

// A cache row kept (numerics::keep_row_exact): the meaning on the reference's numbers, or for
// balls that are not points, a ball about 0 of radius 2n·max|x| over the row, which holds what
// any point of the balls reads back (a rotated row's codes stand for |H·x| ≤ n·max|x| within
// half a step, and H·(s·q)/n is no larger than the largest s·q).
void keep_row(const MpfrArith& arith, const __mpfr_struct* x, __mpfr_struct* out, int64_t n, const numerics::Keep& keep) {
  const numerics::KeptRow row = numerics::keep_row_exact(x, static_cast<size_t>(n), keep);
  for (int64_t i = 0; i < n; ++i) arith.set_double(out + i, row.values[static_cast<size_t>(i)]);  // exact
}

void keep_row(const BallArith& arith, const arb_struct* x, arb_struct* out, int64_t n, const numerics::Keep& keep) {
  const auto meaning = [&](const __mpfr_struct* mids) {
    return numerics::keep_row_exact(mids, static_cast<size_t>(n), keep).values;
  };
  if (on_points(arith, x, out, n, meaning)) return;
  quantize_block(arith, x, out, n, numerics::Scheme{});  // a ball of radius 2·max|x|
  for (int64_t i = 0; i < n; ++i) mag_mul_ui(arb_radref(out + i), arb_radref(out + i), static_cast<uint64_t>(n));
}

// The reference's numbers as MPFR numbers, exactly: its own for MPFR; a ball arithmetic's
// midpoints where every ball is a point (`exact` false, and no numbers, otherwise).
struct ExactNumbers {
  std::vector<__mpfr_struct> owned;
  const __mpfr_struct* data = nullptr;
  bool exact = true;
  ExactNumbers(const MpfrArith&, const Value<MpfrArith>& x) : data(x.real(0)) {}
  ExactNumbers(const BallArith&, const Value<BallArith>& x) {
    for (int64_t i = 0; i < x.size() && exact; ++i) exact = arb_is_exact(x.real(i));
    if (!exact) return;
    owned.resize(static_cast<size_t>(x.size()));
    for (int64_t i = 0; i < x.size(); ++i) {
      mpfr_init2(&owned[i], std::max<long>(2, static_cast<long>(arf_bits(arb_midref(x.real(i))))));
      arf_get_mpfr(&owned[i], arb_midref(x.real(i)), MPFR_RNDN);  // exact: the midpoint's own bits
    }
    data = owned.data();
  }
  ExactNumbers(const ExactNumbers&) = delete;
  ExactNumbers& operator=(const ExactNumbers&) = delete;
  ~ExactNumbers() {
    for (__mpfr_struct& m : owned) mpfr_clear(&m);
  }
};

// Every element of `out` a ball about 0 of radius r (r ≥ 0 an upper bound, as a double).
void balls_about_zero(const BallArith&, Value<BallArith>& out, const arb_t r) {
  mag_t radius;
  mag_init(radius);
  arb_get_mag(radius, r);
  for (int64_t i = 0; i < out.size(); ++i) {
    arb_zero(out.real(i));
    mag_set(arb_radref(out.real(i)), radius);
  }
  mag_clear(radius);
}
void balls_about_zero(const MpfrArith&, Value<MpfrArith>&, const arb_t) { internal_assert(false && "MPFR numbers are points"); }

// The largest |x| of a ball value, as a ball.
void largest_of(const BallArith& arith, const Value<BallArith>& x, arb_t largest) {
  arb_t a;
  arb_init(a);
  arb_zero(largest);
  for (int64_t i = 0; i < x.size(); ++i) {
    arb_abs(a, x.real(i));
    arb_max(largest, largest, a, arith.bits());
  }
  arb_clear(a);
}
void largest_of(const MpfrArith&, const Value<MpfrArith>&, arb_t) { internal_assert(false && "MPFR numbers are points"); }

// A value row's codes in units of its scale (spec "codes/…"): each row by the scheme's meaning.
// Balls that are not points: a ball about 0 of radius 128, which holds any row's codes.
template <class A>
Value<A> eval_codes(const A& arith, const ir::Let& let, const Value<A>& x, const numerics::Scheme& scheme) {
  const int64_t row = scheme.block.count;
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  const ExactNumbers numbers(arith, x);
  if (!numbers.exact) {
    arb_t r;
    arb_init(r);
    arb_set_ui(r, 128);
    balls_about_zero(arith, out, r);
    arb_clear(r);
    return out;
  }
  parallel_chunks(x.size() / row, 16, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const numerics::QuantizedBlock q = numerics::quantize_block_exact(numbers.data + b * row, static_cast<size_t>(row), scheme);
      for (int64_t i = 0; i < row; ++i) {
        const double code = q.scale == 0 ? 0.0
                            : std::isfinite(q.scale) ? numerics::codes_value(q.words, static_cast<size_t>(i), scheme.words)
                                                     : std::numeric_limits<double>::quiet_NaN();
        arith.set_double(out.real(b * row + i), code);  // exact
      }
    }
  });
  return out;
}

// An attention's weights each taken times its value row's scale (spec "weights|…"): t = p·s
// exactly, then each tile of keys in the weights' form by its meaning. Balls that are not points:
// a ball about 0 of radius max|p|·max|v|, which holds every t̂ (a scale is at most 2·max|row|/127,
// and t̂ at most 2·max|t| over its tile).
template <class A>
Value<A> eval_weights(const A& arith, const ir::Let& let, const Value<A>& p, const Value<A>& v,
                      const numerics::WeightsForm& form) {
  const int64_t tile = let.attrs.starts[0], row = v.shape.back();
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  const ExactNumbers weights(arith, p), values(arith, v);
  if (!weights.exact || !values.exact) {
    arb_t r, m;
    arb_init(r);
    arb_init(m);
    largest_of(arith, p, r);
    largest_of(arith, v, m);
    arb_mul(r, r, m, arith.bits());
    balls_about_zero(arith, out, r);
    arb_clear(m);
    arb_clear(r);
    return out;
  }
  std::vector<double> scales(static_cast<size_t>(v.size() / row));
  for (size_t r = 0; r < scales.size(); ++r) {
    scales[r] = numerics::quantize_block_exact(values.data + r * static_cast<size_t>(row), static_cast<size_t>(row), form.values).scale;
  }
  const std::vector<size_t> row_of = numerics::value_row_of_weights(form, p.shape, v.shape);
  parallel_chunks(p.size() / tile, 16, [&](int64_t begin, int64_t end) {
    std::vector<__mpfr_struct> t(static_cast<size_t>(tile));
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t i = 0; i < tile; ++i) {
        const size_t at = static_cast<size_t>(b * tile + i);
        mpfr_init2(&t[i], mpfr_get_prec(weights.data + at) + 64);
        mpfr_mul_d(&t[i], weights.data + at, scales[row_of[at]], MPFR_RNDN);  // exact
      }
      const std::vector<double> taken =
          form.weights.float_format
              ? numerics::keep_row_exact(t.data(), t.size(), {numerics::Keep::Kind::float_format, *form.weights.float_format}).values
              : numerics::quantize_block_exact(t.data(), t.size(), *form.weights.scheme).values;
      for (int64_t i = 0; i < tile; ++i) {
        arith.set_double(out.real(b * tile + i), taken[static_cast<size_t>(i)]);  // exact
        mpfr_clear(&t[i]);
      }
    }
  });
  return out;
}

}  // namespace

template <class A>
Value<A> eval_quantize(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>* values) {
  if (values) {
    const std::optional<numerics::WeightsForm> form = numerics::weights_of_spec(let.attrs.spec, let.attrs.starts);
    internal_assert(form.has_value());  // the IR's type rule: a two-operand quantize is spec "weights|…"
    return eval_weights(arith, let, x, *values, *form);
  }
  if (const std::optional<numerics::Scheme> codes = numerics::codes_of_spec(let.attrs.spec, let.attrs.starts)) {
    return eval_codes(arith, let, x, *codes);
  }
  if (const std::optional<numerics::Keep> keep = numerics::keep_of_spec(let.attrs.spec)) {
    const int64_t row = x.shape.empty() ? 1 : x.shape.back();
    Value<A> out = Value<A>::make_real(arith, let.type.shape);
    parallel_chunks(x.size() / row, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) keep_row(arith, x.real(r * row), out.real(r * row), row, *keep);
    });
    return out;
  }
  const numerics::Scheme scheme = numerics::scheme_of_spec(let.attrs.spec, let.attrs.starts);
  const int64_t block = scheme.block.count;
  internal_assert(!x.shape.empty() && x.shape.back() % block == 0);
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  // Each block from its own values alone: the same bits at any thread count.
  parallel_chunks(x.size() / block, 16, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) quantize_block(arith, x.real(b * block), out.real(b * block), block, scheme);
  });
  return out;
}

template Value<MpfrArith> eval_quantize(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&, const Value<MpfrArith>*);
template Value<BallArith> eval_quantize(const BallArith&, const ir::Let&, const Value<BallArith>&, const Value<BallArith>*);

}  // namespace presk::reference
