// The reductions sum, mean and reduce_max over attrs.axes (kept with size 1). Each output
// element adds its terms one by one in row-major order of the reduced indices, starting from
// an exact 0, each addition rounded (MPFR) or enclosed (Arb); mean divides that sum by the
// term count with one more rounding.
#include <algorithm>
#include <cmath>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

// Where each output element's terms lie in the operand: base(o) + term_offsets[k], k in
// row-major order of the reduced indices.
struct ReductionPlan {
  std::vector<int64_t> term_offsets;
  Shape out_shape;
  Shape operand_strides;

  int64_t base(int64_t flat) const {
    int64_t offset = 0;
    for (size_t i = out_shape.size(); i-- > 0;) {
      offset += (flat % out_shape[i]) * operand_strides[i];
      flat /= out_shape[i];
    }
    return offset;
  }
};

ReductionPlan plan_reduction(const Shape& operand, const std::vector<int64_t>& axes) {
  ReductionPlan plan;
  plan.out_shape = operand;
  plan.operand_strides = row_major_strides(operand);
  Shape reduced_extents, reduced_strides;
  for (size_t i = 0; i < operand.size(); ++i) {
    bool reduced = false;
    for (int64_t axis : axes) reduced |= (axis < 0 ? axis + static_cast<int64_t>(operand.size()) : axis) == static_cast<int64_t>(i);
    if (!reduced) continue;
    plan.out_shape[i] = 1;
    reduced_extents.push_back(operand[i]);
    reduced_strides.push_back(plan.operand_strides[i]);
  }
  int64_t terms = element_count(reduced_extents);
  for (int64_t k = 0; k < terms; ++k) {
    int64_t rest = k, offset = 0;
    for (size_t j = reduced_extents.size(); j-- > 0;) {
      offset += (rest % reduced_extents[j]) * reduced_strides[j];
      rest /= reduced_extents[j];
    }
    plan.term_offsets.push_back(offset);
  }
  return plan;
}

template <class A, class N>
void reduce_one(const A& a, ir::Op op, N* r, const Value<A>& x, int64_t base,
                const std::vector<int64_t>& offsets) {
  auto count = static_cast<int64_t>(offsets.size());
  switch (op) {
    case ir::Op::sum:  // Σ in index order
      a.set_zero(r);
      for (int64_t k = 0; k < count; ++k) a.add(r, r, x.real(base + offsets[k]));
      return;
    case ir::Op::mean:  // (Σ in index order) / n
      a.set_zero(r);
      for (int64_t k = 0; k < count; ++k) a.add(r, r, x.real(base + offsets[k]));
      a.div_int(r, r, count);
      return;
    case ir::Op::reduce_max:  // exact
      a.set(r, x.real(base + offsets[0]));
      for (int64_t k = 1; k < count; ++k) a.max(r, r, x.real(base + offsets[k]));
      return;
    default: internal_assert(false && "not a reduction");
  }
}

// One output element's statistics; x(i) is the operand's element i as binary64.
template <class X>
TermStatistics term_statistics(const X& x, int64_t base, const std::vector<int64_t>& offsets) {
  TermStatistics s;
  double squares = 0;
  for (int64_t offset : offsets) {
    double term = x(base + offset);
    s.sum_abs_terms += std::fabs(term);
    squares += term * term;
  }
  s.root_sum_squares = std::sqrt(squares);
  s.operand_abs_sums[0] = s.sum_abs_terms;
  return s;
}

// An integer reduce_max or sum: exact; a partial sum outside int64 is E0550 (as for `add`).
template <class A>
Value<A> integer_reduction(const ir::Let& let, const ReductionPlan& plan, const Value<A>& x) {
  Value<A> out = Value<A>::make_integer(let.type.kind, let.type.shape);
  for (int64_t o = 0; o < out.size(); ++o) {
    int64_t base = plan.base(o), acc = let.op == ir::Op::reduce_max ? x.integers[base] : 0;
    for (int64_t offset : plan.term_offsets) {
      int64_t v = x.integers[base + offset];
      if (let.op == ir::Op::reduce_max) {
        acc = std::max(acc, v);
      } else if (__builtin_add_overflow(acc, v, &acc)) {
        user_error("E0550", let.span).hint("Z values are 64-bit integers: keep them within ±9223372036854775807")
            << "integer overflow: a partial sum of this `sum` (in index order) lies outside 64 bits";
      }
    }
    out.integers[o] = acc;
  }
  return out;
}

}  // namespace

template <class A>
Value<A> eval_reduction(const A& arith, const ir::Let& let, const Value<A>& x,
                        std::vector<TermStatistics>* terms) {
  ReductionPlan plan = plan_reduction(x.shape, let.attrs.axes);
  internal_assert(element_count(plan.out_shape) == let.type.element_count());
  if (!x.is_real()) return integer_reduction<A>(let, plan, x);
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  parallel_chunks(out.size(), 16, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      reduce_one(arith, let.op, out.real(o), x, plan.base(o), plan.term_offsets);
    }
  });
  if (terms != nullptr) {
    terms->resize(static_cast<size_t>(out.size()));
    for (int64_t o = 0; o < out.size(); ++o) {
      (*terms)[o] = term_statistics([&](int64_t i) { return arith.to_double(x.real(i)); }, plan.base(o), plan.term_offsets);
    }
  }
  return out;
}

std::vector<TermStatistics> binary64_reduction_terms(const ir::Let& let, const std::vector<int64_t>& x_shape,
                                                     const double* x) {
  ReductionPlan plan = plan_reduction(x_shape, let.attrs.axes);
  std::vector<TermStatistics> terms(static_cast<size_t>(element_count(plan.out_shape)));
  parallel_chunks(static_cast<int64_t>(terms.size()), 16, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) terms[o] = term_statistics([x](int64_t i) { return x[i]; }, plan.base(o), plan.term_offsets);
  });
  return terms;
}

template Value<MpfrArith> eval_reduction(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&,
                                         std::vector<TermStatistics>*);
template Value<BallArith> eval_reduction(const BallArith&, const ir::Let&, const Value<BallArith>&,
                                         std::vector<TermStatistics>*);

}  // namespace presk::reference
