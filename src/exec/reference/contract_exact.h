// The exact contraction's pieces (ops_contract.cpp), shared with the in-place path
// (ops_in_place.cpp), which packs a parameter's tile straight from its stored values: each
// operand's rows in fixed point (fixed_dot.h), the output elements they decide, and the exact
// computation (exact_dot.h) of the few they do not — the same number, rounded once.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/contraction_plan.h"
#include "exec/reference/fixed_dot.h"

namespace presk::reference {

// An operand's rows: row r (the index of the operand's own free letters, row-major in output
// order) holds its K contracted entries in for_each_run's order; row_strides[i] is free letter
// i's stride in rows (output order), or 0.
struct PackedOperand {
  FixedRows rows;
  std::vector<int64_t> row_strides;
};

// The rows of operand x (is_x) or w: the offsets of the K contracted entries (in for_each_run's
// order), each row's base offset, and the free letters' strides in rows (output order, or 0).
struct RowLayout {
  std::vector<int64_t> offsets, bases, row_strides;
};
RowLayout row_layout(const ContractionPlan& plan, bool is_x);
// Output element o's rows of x and w, from each operand's free letters' strides in rows.
std::pair<int64_t, int64_t> rows_of(const ContractionPlan& plan, const std::vector<int64_t>& x_row_strides,
                                    const std::vector<int64_t>& w_row_strides, int64_t o);

// The operand x (is_x) or w of `plan` packed from its exact numbers (in binades if asked and
// they fit), or from binary64 values in its row-major layout (in binades).
PackedOperand pack_operand(const MpfrArith& arith, const ContractionPlan& plan, const Value<MpfrArith>& v,
                           bool is_x, bool binades);
PackedOperand pack_operand(long bits, const ContractionPlan& plan, const double* values, bool is_x);

// Where output element o goes.
using OutputAt = std::function<__mpfr_struct*(int64_t o)>;

// Each output element o < count that the fixed rows decide, into out(o) (in parallel); returns
// the others, in increasing order.
std::vector<int64_t> contract_fixed(const ContractionPlan& plan, const PackedOperand& x, const PackedOperand& w,
                                    int64_t count, const OutputAt& out);

// The output elements `which` computed exactly from the operands as they are, into out(o).
void contract_exact_elements(const MpfrArith& arith, const ContractionPlan& plan, const Value<MpfrArith>& x,
                             const Value<MpfrArith>& w, const std::vector<int64_t>& which, const OutputAt& out);

// Each output element exactly, rounded once: the fixed-point rows decide almost every element;
// ExactDot computes the rest (the same number). One operand may be packed in binades (a weight
// of binary64, f32 or bf16 values; w first, else x), never both.
void contract_exact(const MpfrArith& arith, const ContractionPlan& plan, const Value<MpfrArith>& x,
                    const Value<MpfrArith>& w, Value<MpfrArith>& out);

// A ball operand of a contraction (contract_ball.cpp): its midpoints as MPFR numbers at the
// working precision, and its rows (row_layout) as binary64 upper bounds of |m| and of r, entry k
// of row r at [r·K + k].
struct BallRows {
  Value<MpfrArith> mid;
  RowLayout layout;
  std::vector<double> abs_mid, radius;
  bool exact = true;  // every radius 0 (radius empty)
};
// false where an entry's midpoint is NaN or infinite, has more bits than the working precision,
// or a magnitude beyond binary64's (an infinite radius is held as ∞).
bool ball_rows(const BallArith& arith, const ContractionPlan& plan, const Value<BallArith>& v, bool is_x,
               BallRows& rows);
// An exact operand of binary64 values in its row-major layout (no midpoints: |v| only).
BallRows exact_ball_rows(const ContractionPlan& plan, const double* values, bool is_x);
// A proven upper bound on output o's Σ_k (|m_x|·r_w + r_x·(|m_w| + r_w)).
double radius_bound(const ContractionPlan& plan, const BallRows& x, const BallRows& w, int64_t o);
// out[o] ← [mid[o] ± (radius[o] + 2^(e − bits))] (radius empty: 0), e mid[o]'s exponent: the
// midpoint rounded once from the exact sum lies within half an ulp of it.
void set_balls(const BallArith& arith, const Value<MpfrArith>& mid, const std::vector<double>& radius,
               Value<BallArith>& out);

// The ball contraction (contract_ball.cpp): each output ball's midpoint the exact contraction of
// the operands' midpoints, its radius a proven bound on the rest. false (out untouched) where an
// operand has a NaN or infinite midpoint or radius, a midpoint with more than the working
// precision's bits, or a magnitude beyond binary64's range: arb_dot's chain is the path there.
bool contract_ball(const BallArith& arith, const ContractionPlan& plan, const Value<BallArith>& x,
                   const Value<BallArith>& w, Value<BallArith>& out);

}  // namespace presk::reference
