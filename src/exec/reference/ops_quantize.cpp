// The IR's `quantize` (ops.def; docs/chip.md, "The quantize op"): each block of attrs.starts[0]
// values along the last axis replaced by the values its quantized form stands for, by the
// scheme's exact meaning (numerics/scheme/meaning.h) on the numbers as the reference holds them;
// with spec "keep/<mode>", each row (the last axis) as a cache keeps it.
#include <arb.h>
#include <mpfr.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
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

}  // namespace

template <class A>
Value<A> eval_quantize(const A& arith, const ir::Let& let, const Value<A>& x) {
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

template Value<MpfrArith> eval_quantize(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&);
template Value<BallArith> eval_quantize(const BallArith&, const ir::Let&, const Value<BallArith>&);

}  // namespace presk::reference
