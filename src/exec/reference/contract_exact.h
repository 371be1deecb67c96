// The exact contraction's pieces (ops_contract.cpp), shared with the in-place path
// (ops_in_place.cpp), which packs a parameter's tile straight from its stored values: each
// operand's rows in fixed point (fixed_dot.h), the output elements they decide, and the exact
// computation (exact_dot.h) of the few they do not — the same number, rounded once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

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

}  // namespace presk::reference
