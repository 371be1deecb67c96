// The statistics hook of the reference interpreter. An Observer, when one is attached, is
// handed every site's value as the interpreter computes it (the value itself, not a copy),
// and, for sums and contractions when it asks, per output element the magnitudes of the terms
// that were added. With no observer attached the interpreter does none of this work.
// Calls are made from the interpreter's own thread, one let after another, in program order;
// a site inside a fold is reported once per layer.
#pragma once

#include <arb.h>
#include <mpfr.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::reference {

// Where a value was computed: the site `<function>/%<let_index>` in the parameter context
// (module path, layer indices of the enclosing stacks) of the call that ran it.
struct SiteContext {
  const ir::Function& function;
  uint32_t let_index;
  const std::string& module_path;
  const std::vector<int64_t>& layers;

  std::string site_name() const { return function.site_name(let_index); }
};

// A read-only view of a site's value: exactly one of the four pointers is set, by the
// arithmetic of the run (MPFR points, Arb balls, or binary64 values from a run of the native
// executor in f64: `--sweep f64`) or the element kind (Z, B as 0/1).
struct ValueView {
  const ir::Type& type;
  int64_t count = 0;
  const __mpfr_struct* mpfr = nullptr;
  const arb_struct* ball = nullptr;  // midpoints are what an envelope should read
  const int64_t* integers = nullptr;
  const double* f64 = nullptr;
};

// For one output element of a sum or contraction with terms tᵢ = xᵢ·wᵢ (a sum: tᵢ = xᵢ):
// Σ|tᵢ|, √Σtᵢ², and each operand's factor Σ|xᵢ|, Σ|wᵢ| (a sum has one operand: the second is
// 0). Computed in binary64 from the terms rounded to binary64: magnitudes for bounds, to a
// relative accuracy of about n·2⁻⁵³, not exact quantities.
struct TermStatistics {
  double sum_abs_terms = 0;
  double root_sum_squares = 0;
  double operand_abs_sums[2] = {0, 0};
};

// The statistics above per output element of a sum or mean (`let`, over x of shape `x_shape`)
// or of a contraction (`let.attrs.spec` over x and w), from binary64 operands laid out
// row-major: the same terms, in the same order, as the interpreter hands an observer
// (ops_reduce.cpp, ops_contract.cpp). Output elements are computed in parallel.
std::vector<TermStatistics> binary64_reduction_terms(const ir::Let& let, const std::vector<int64_t>& x_shape,
                                                     const double* x);
std::vector<TermStatistics> binary64_contraction_terms(const ir::Let& let, const std::vector<int64_t>& x_shape,
                                                       const double* x, const std::vector<int64_t>& w_shape,
                                                       const double* w);

class Observer {
 public:
  virtual ~Observer() = default;
  // Every let's value, right after it is computed.
  virtual void on_value(const SiteContext& site, const ValueView& value) = 0;
  // Whether on_terms should be called (the interpreter then computes the statistics).
  virtual bool wants_terms() const { return false; }
  // Whether on_value is handed the parameters read in place too (they are then converted whole,
  // as exact numbers); false: they stay in place, and on_value does not see them.
  virtual bool wants_parameters() const { return true; }
  // Per output element (row-major) of a sum, mean or contraction site, before on_value.
  virtual void on_terms(const SiteContext& site, std::span<const TermStatistics> terms) {
    (void)site;
    (void)terms;
  }
};

}  // namespace presk::reference
