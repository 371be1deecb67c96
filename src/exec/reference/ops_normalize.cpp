// softmax, log_softmax (along attrs.axes[0]) and cross_entropy, all max-subtracted. With
// m = max xₖ (exact) and s = Σ exp(xₖ − m) added in index order, each step rounded:
//   softmax(x)ₖ     = exp(xₖ − m) / s
//   log_softmax(x)ₖ = (xₖ − m) − log s
//   cross_entropy   = (Σₚ −log_softmax(logitsₚ)[targetₚ]) / P, positions p in row-major order.
// A −∞ entry (a causal mask) contributes exp(−∞) = 0 exactly.
#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
#include "exec/reference/ziv.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

// A row of n numbers spaced `stride` apart.
template <class N>
struct Row {
  N* first;
  int64_t stride;
  int64_t count;
  N* at(int64_t k) const { return first + k * stride; }
};

// m = max of the row (exact), then s = Σ exp(xₖ − m) in index order; `t` is scratch.
template <class A, class N>
void max_and_sum_exp(const A& a, Row<const N> x, N* m, N* s, N* t) {
  a.set(m, x.at(0));
  for (int64_t k = 1; k < x.count; ++k) a.max(m, m, x.at(k));
  a.set_zero(s);
  for (int64_t k = 0; k < x.count; ++k) {
    a.sub(t, x.at(k), m);
    elementary(a, Elementary::Exp, t, t);
    a.add(s, s, t);
  }
}

template <class A, class N>
void softmax_row(const A& a, Row<const N> x, Row<N> y, N* scratch) {
  N *m = scratch, *s = scratch + 1;
  a.set(m, x.at(0));
  for (int64_t k = 1; k < x.count; ++k) a.max(m, m, x.at(k));
  a.set_zero(s);
  for (int64_t k = 0; k < x.count; ++k) {
    a.sub(y.at(k), x.at(k), m);
    elementary(a, Elementary::Exp, y.at(k), y.at(k));
    a.add(s, s, y.at(k));
  }
  for (int64_t k = 0; k < x.count; ++k) a.div(y.at(k), y.at(k), s);
}

template <class A, class N>
void log_softmax_row(const A& a, Row<const N> x, Row<N> y, N* scratch) {
  N *m = scratch, *s = scratch + 1;
  max_and_sum_exp(a, x, m, s, scratch + 2);
  elementary(a, Elementary::Log, s, s);
  for (int64_t k = 0; k < x.count; ++k) {
    a.sub(y.at(k), x.at(k), m);
    a.sub(y.at(k), y.at(k), s);
  }
}

}  // namespace

template <class A>
Value<A> eval_normalization(const A& arith, const ir::Let& let, const Value<A>& x) {
  using N = typename A::Number;
  int64_t axis = single_axis(let, static_cast<int64_t>(x.shape.size()));
  int64_t count = x.shape[axis];
  int64_t inner = row_major_strides(x.shape)[axis];
  int64_t rows = x.size() / count;
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  parallel_chunks(rows, 4, [&](int64_t begin, int64_t end) {
    typename A::Buffer scratch = arith.allocate(3);
    for (int64_t r = begin; r < end; ++r) {
      int64_t first = (r / inner) * count * inner + r % inner;
      Row<const N> in{x.real(first), inner, count};
      Row<N> result{out.real(first), inner, count};
      if (let.op == ir::Op::softmax) softmax_row(arith, in, result, scratch.data());
      else log_softmax_row(arith, in, result, scratch.data());
    }
  });
  return out;
}

template <class A>
Value<A> eval_cross_entropy(const A& arith, const ir::Let& let, const Value<A>& logits,
                            const Value<A>& targets) {
  using N = typename A::Number;
  int64_t classes = logits.shape.back();
  int64_t positions = targets.size();
  internal_assert(positions * classes == logits.size() && positions > 0);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t target = targets.integers[p];
    if (target < 0 || target >= classes) {
      user_error("E0504", let.span).hint("targets index the last axis of the logits")
          << "cross_entropy target " << target << " at position " << p << " is outside [0, "
          << classes << ")";
    }
  }
  typename A::Buffer losses = arith.allocate(positions);  // −log_softmax at each target
  parallel_chunks(positions, 4, [&](int64_t begin, int64_t end) {
    typename A::Buffer scratch = arith.allocate(3);
    N *m = scratch.data(), *s = m + 1, *t = m + 2;
    for (int64_t p = begin; p < end; ++p) {
      Row<const N> row{logits.real(p * classes), 1, classes};
      max_and_sum_exp(arith, row, m, s, t);
      elementary(arith, Elementary::Log, s, s);
      arith.sub(t, row.at(targets.integers[p]), m);
      arith.sub(t, t, s);                    // log_softmax at the target
      arith.neg(losses.data() + p, t);       // exact
    }
  });
  Value<A> out = Value<A>::make_real(arith, let.type.shape);
  N* total = out.real(0);
  arith.set_zero(total);
  for (int64_t p = 0; p < positions; ++p) arith.add(total, total, losses.data() + p);
  arith.div_int(total, total, positions);
  return out;
}

template Value<MpfrArith> eval_normalization(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&);
template Value<BallArith> eval_normalization(const BallArith&, const ir::Let&, const Value<BallArith>&);
template Value<MpfrArith> eval_cross_entropy(const MpfrArith&, const ir::Let&, const Value<MpfrArith>&,
                                             const Value<MpfrArith>&);
template Value<BallArith> eval_cross_entropy(const BallArith&, const ir::Let&, const Value<BallArith>&,
                                             const Value<BallArith>&);

}  // namespace presk::reference
