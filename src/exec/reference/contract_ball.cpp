// The ball contraction (issue #37: the reference's own gap certified at scale). For operands
// [m_x ± r_x] and [m_w ± r_w], every real sum Σ x·w of points in the balls lies within
//   Σ (|m_x|·r_w + r_x·(|m_w| + r_w))
// of Σ m_x·m_w. The output's midpoint is that exact sum of the midpoints' products rounded once
// at the working precision (the exact contraction, contract_exact.h), so within 2^(e − bits) of
// it (e its MPFR exponent); the radius is the bound above, computed in binary64 from upper bounds
// of |m| and r and raised by the largest rounding error of a sum of n ≤ 2K nonnegative terms
// with two roundings each, and by gradual underflow (each product loses at most 2^−1075; Higham,
// "Accuracy and Stability of Numerical Algorithms", §3.1 and §2.2):
//   S ≤ (ŝ + 2n·2^−1074)·(1 + 2(n + 6)·2^−53),  the two operations' results raised by 2 ulps.
// A proven enclosure, as arb_dot's, at the exact contraction's speed: arb_dot takes 20–30 ns a
// term at 128 bits, the fixed-point rows a few. The midpoint is the MPFR reference's own number
// where the operands' midpoints are its inputs, so a ball run at the reference's bits encloses
// the reference's results closely; the radius grows as any ball's does (Σ|w| a contraction).
#include <arb.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "exec/reference/contract_exact.h"
#include "exec/reference/ops.h"

namespace presk::reference {

bool ball_rows(const BallArith& arith, const ContractionPlan& plan, const Value<BallArith>& v, bool is_x,
               BallRows& rows) {
  const MpfrArith mpfr(arith.bits());
  rows.mid = Value<MpfrArith>::make_real(mpfr, v.shape);
  rows.layout = row_layout(plan, is_x);
  std::atomic<bool> ok{true}, exact{true};
  parallel_chunks(v.size(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const arb_struct* ball = v.real(i);
      if (!arf_is_finite(arb_midref(ball)) || arf_get_mpfr(rows.mid.real(i), arb_midref(ball), MPFR_RNDN) != 0) {
        ok = false;
        return;
      }
      if (!mag_is_zero(arb_radref(ball))) exact = false;
    }
  });
  if (!ok) return false;
  rows.exact = exact;
  const int64_t row_count = static_cast<int64_t>(rows.layout.bases.size());
  const int64_t k_count = static_cast<int64_t>(rows.layout.offsets.size());
  rows.abs_mid.assign(static_cast<size_t>(row_count * k_count), 0);
  if (!rows.exact) rows.radius.assign(rows.abs_mid.size(), 0);
  parallel_chunks(row_count, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t k = 0; k < k_count; ++k) {
        const arb_struct* ball = v.real(rows.layout.bases[static_cast<size_t>(r)] + rows.layout.offsets[static_cast<size_t>(k)]);
        const size_t at = static_cast<size_t>(r * k_count + k);
        rows.abs_mid[at] = std::fabs(arf_get_d(arb_midref(ball), ARF_RND_UP));  // away from 0
        if (!rows.exact) rows.radius[at] = mag_get_d(arb_radref(ball));           // an upper bound; ∞ stays ∞
        if (!std::isfinite(rows.abs_mid[at])) ok = false;
      }
    }
  });
  return ok;
}

BallRows exact_ball_rows(const ContractionPlan& plan, const double* values, bool is_x) {
  BallRows rows;
  rows.layout = row_layout(plan, is_x);
  const int64_t k_count = static_cast<int64_t>(rows.layout.offsets.size());
  rows.abs_mid.resize(rows.layout.bases.size() * rows.layout.offsets.size());
  parallel_chunks(static_cast<int64_t>(rows.layout.bases.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t k = 0; k < k_count; ++k) {
        rows.abs_mid[static_cast<size_t>(r * k_count + k)] =
            std::fabs(values[rows.layout.bases[static_cast<size_t>(r)] + rows.layout.offsets[static_cast<size_t>(k)]]);
      }
    }
  });
  return rows;
}

double radius_bound(const ContractionPlan& plan, const BallRows& x, const BallRows& w, int64_t o) {
  if (x.exact && w.exact) return 0;
  const auto [xr, wr] = rows_of(plan, x.layout.row_strides, w.layout.row_strides, o);
  const int64_t k_count = static_cast<int64_t>(x.layout.offsets.size());
  const size_t xo = static_cast<size_t>(xr * k_count), wo = static_cast<size_t>(wr * k_count);
  double s[4] = {0, 0, 0, 0};  // four chains: any order is within the bound
  const double* ax = x.abs_mid.data() + xo;
  const double* aw = w.abs_mid.data() + wo;
  if (!w.exact) {
    const double* rw = w.radius.data() + wo;
    for (int64_t k = 0; k < k_count; ++k) s[k & 3] += ax[k] * rw[k];
  }
  if (!x.exact) {
    const double* rx = x.radius.data() + xo;
    const double* rw = w.exact ? nullptr : w.radius.data() + wo;
    for (int64_t k = 0; k < k_count; ++k) s[k & 3] += rx[k] * (rw == nullptr ? aw[k] : aw[k] + rw[k]);
  }
  const double sum = (s[0] + s[1]) + (s[2] + s[3]);  // ∞, or NaN (0·∞): not finite, an infinite radius
  const double n = 2 * static_cast<double>(k_count);  // the summands, at most
  const double raised = (sum + 2 * n * 0x1p-1074) * (1 + 2 * (n + 6) * 0x1p-53);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return std::nextafter(std::nextafter(raised, kInf), kInf);
}

void set_balls(const BallArith& arith, const Value<MpfrArith>& mid, const std::vector<double>& radius,
               Value<BallArith>& out) {
  parallel_chunks(out.size(), 64, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      arb_struct* r = out.real(o);
      const __mpfr_struct* m = mid.real(o);
      arf_set_mpfr(arb_midref(r), m);
      const double bound = radius.empty() ? 0 : radius[static_cast<size_t>(o)];
      if (std::isfinite(bound)) {
        mag_set_d(arb_radref(r), bound);  // an upper bound
      } else {
        mag_inf(arb_radref(r));
      }
      if (!mpfr_zero_p(m)) arb_add_error_2exp_si(r, mpfr_get_exp(m) - arith.bits());  // ≥ half an ulp
    }
  });
}

bool contract_ball(const BallArith& arith, const ContractionPlan& plan, const Value<BallArith>& x,
                   const Value<BallArith>& w, Value<BallArith>& out) {
  if (x.size() == 0 || w.size() == 0 || out.size() == 0) return false;
  BallRows xs, ws;
  if (!ball_rows(arith, plan, x, true, xs) || !ball_rows(arith, plan, w, false, ws)) return false;
  const MpfrArith mpfr(arith.bits());
  Value<MpfrArith> mid = Value<MpfrArith>::make_real(mpfr, out.shape);
  contract_exact(mpfr, plan, xs.mid, ws.mid, mid);
  std::vector<double> radius(xs.exact && ws.exact ? 0 : static_cast<size_t>(out.size()));
  parallel_chunks(static_cast<int64_t>(radius.size()), 8, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) radius[static_cast<size_t>(o)] = radius_bound(plan, xs, ws, o);
  });
  set_balls(arith, mid, radius, out);
  return true;
}

}  // namespace presk::reference
