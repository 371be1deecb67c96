// The gradient check of src/ad/: an entry's generated vjp, run by the exact reference at 512
// bits, against central differences of the same entry computed by the reference.
//  * real arguments: the step h = 2⁻¹⁰⁰ along a random direction, exact in MPFR;
//  * parameters (held as binary64): the values are first rounded to multiples of 2⁻²⁰ so that
//    θ ± h·d is exact in binary64 for h = 2⁻³⁰ and d ∈ {k/8}, and the difference quotients at
//    h and 2h are Richardson-extrapolated (error O(h⁴) ≈ 2⁻¹²⁰).
// A tensor result is reduced to ⟨c, f⟩ with a random c; the vjp is seeded with c.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "exec/reference/parameters.h"

namespace presk::testing {

struct GradientAgreement {
  double argument_digits = 0;  // significant digits of ⟨x̄, d_x⟩ against the differences
  double param_digits = 0;     // the same for ⟨θ̄, d_θ⟩ (99 where there is nothing to check)
  std::string detail;          // the two sides, for a failure message
};

// Checks the entry `entry` of `program` (which must not contain vjps yet) at `seed`.
GradientAgreement check_gradient(const ir::Program& program, const std::string& entry,
                                 uint64_t seed = 7);

// The same with the vjps given: `with_vjps` (the program and its vjps, e.g. a golden file parsed
// back) is run for the vjp side, `program` for the differences.
GradientAgreement check_gradient_of(const ir::Program& program, const ir::Program& with_vjps, const std::string& entry,
                                    uint64_t seed = 7);

// The program of printed IR `text`, verified.
ir::Program parse_ir(const std::string& text);

}  // namespace presk::testing
