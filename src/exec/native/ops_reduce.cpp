// Reductions (sum, mean, reduce_max), normalizations (softmax, log_softmax) and
// cross_entropy. A bf16 site accumulates in f32 and rounds once when it stores; f32 and f64
// sites accumulate in their own type. Every sum follows the realization's order.
#include <algorithm>
#include <cmath>

#include "exec/native/contract_driver.h"
#include "exec/native/kernels_rows.h"
#include "exec/native/ops.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

// Offsets of the reduced elements (row-major over the reduced axes) and the base offset of
// each output element (row-major over the kept axes), into a row-major `shape`.
struct ReductionPlan {
  std::vector<size_t> terms;
  std::vector<size_t> bases;
  bool contiguous = false;  // terms[t] == t for every t
  bool rows = false;        // contiguous, and bases[o] == o · |terms|: output o reduces row o
  bool columns = false;     // bases[o] == o: output o sums x[terms[t] + o] (the leading axes reduced)
};

std::vector<size_t> offsets_over(const std::vector<int64_t>& shape, const std::vector<bool>& take) {
  const std::vector<size_t> strides = strides_of(shape);
  std::vector<size_t> offsets = {0};
  for (size_t a = 0; a < shape.size(); ++a) {
    if (!take[a]) continue;
    std::vector<size_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(shape[a]));
    for (size_t base : offsets) {
      for (int64_t i = 0; i < shape[a]; ++i) next.push_back(base + static_cast<size_t>(i) * strides[a]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

ReductionPlan plan_reduction(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis)] = true;
  std::vector<bool> kept(shape.size());
  for (size_t a = 0; a < shape.size(); ++a) kept[a] = !reduced[a];
  ReductionPlan plan{offsets_over(shape, reduced), offsets_over(shape, kept)};
  plan.contiguous = true;
  for (size_t t = 0; t < plan.terms.size(); ++t) plan.contiguous &= plan.terms[t] == t;
  plan.rows = plan.contiguous;
  plan.columns = true;
  for (size_t o = 0; o < plan.bases.size(); ++o) {
    plan.rows &= plan.bases[o] == o * plan.terms.size();
    plan.columns &= plan.bases[o] == o;
  }
  return plan;
}

// f(base + t) for each term offset t of `plan`; a plain counted loop when the terms are
// contiguous (a reduction over the last axis), so the compiler can vectorize it.
template <typename F>
void for_each_term(const ReductionPlan& plan, size_t base, F f) {
  if (plan.contiguous) {
    for (size_t t = 0; t < plan.terms.size(); ++t) f(base + t);
  } else {
    for (size_t t : plan.terms) f(base + t);
  }
}

// The maximum of the terms in order, as a fold of maxNum (NaN terms are skipped; all NaN: NaN).
template <typename C>
C max_fold(const C* base, const std::vector<size_t>& offsets) {
  C m = base[offsets[0]];
  for (size_t t = 1; t < offsets.size(); ++t) {
    const C x = base[offsets[t]];
    if (m != m || x > m || (x == m && !std::signbit(x))) m = x != x ? m : x;
  }
  return m;
}

// Whether sums follow the sequential chain (sequential and blocked orders: the same bits).
bool sequential(const Order& order) { return order.kind != OrderKind::interleaved || order.partials <= 1; }

inline constexpr size_t kReduceRows = 16;      // rows per task of the row-wise reductions
inline constexpr size_t kReduceColumns = 2048;  // outputs per task of the column-wise sums

// Sequential sums of columns: out[o] = x[t0 + o] + x[t1 + o] + … for o in [o0, o1), each
// output its own chain in the terms' order, added a term (a vector of outputs) at a time.
template <typename C>
void sequential_column_sums(const C* x, const std::vector<size_t>& terms, size_t o0, size_t o1, C* out) {
  if (terms.empty()) {
    std::fill(out + o0, out + o1, C(0));
    return;
  }
  std::copy(x + terms[0] + o0, x + terms[0] + o1, out + o0);
  for (size_t t = 1; t < terms.size(); ++t) arith_run(Arith::add, out + o0, out + o0, x + terms[t] + o0, false, o1 - o0);
}

template <typename C>
Value reduce(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  const Loaded<C> x = view_as<C>(operand, ctx.site);
  const ReductionPlan plan = plan_reduction(operand.shape, let.attrs.axes);
  Buffer<C> out(plan.bases.size());
  const C count = static_cast<C>(plan.terms.size());
  const size_t len = plan.terms.size();
  const bool row_sums = plan.rows && let.op != ir::Op::reduce_max && sequential(ctx.realization.order);
  if (plan.columns && !plan.rows && let.op != ir::Op::reduce_max && sequential(ctx.realization.order)) {
    for_each_task((out.size() + kReduceColumns - 1) / kReduceColumns, ctx.options.threads, [&](size_t block) {
      const size_t o0 = block * kReduceColumns, o1 = std::min(out.size(), o0 + kReduceColumns);
      sequential_column_sums(x.data, plan.terms, o0, o1, out.data());
      if (let.op == ir::Op::mean) arith_run(Arith::div, out.data() + o0, out.data() + o0, &count, true, o1 - o0);
    });
    return store_as<C>(std::move(out), let.type.shape, ctx.site, ctx.options.threads);
  }
  for_each_task((out.size() + kReduceRows - 1) / kReduceRows, ctx.options.threads, [&](size_t block) {
    const size_t begin = block * kReduceRows, end = std::min(out.size(), begin + kReduceRows);
    if (row_sums) sequential_row_sums(x.data + plan.bases[begin], end - begin, len, len, out.data() + begin);
    for (size_t o = begin; o < end; ++o) {
      const C* base = x.data + plan.bases[o];
      if (let.op == ir::Op::reduce_max) {
        out[o] = plan.rows ? max_of_row(base, len, ctx.options.force_scalar) : max_fold(base, plan.terms);
      } else {
        const C s = row_sums ? out[o] : ordered_sum(base, plan.terms, ctx.realization.order);
        out[o] = let.op == ir::Op::mean ? s / count : s;  // mean: one division by the count
      }
    }
  });
  return store_as<C>(std::move(out), let.type.shape, ctx.site, ctx.options.threads);
}

void unary_rows(UnaryFn fn, const double* x, double* y, size_t n, bool force_scalar) { unary_f64(fn, x, y, n, force_scalar); }
void unary_rows(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar) { unary_f32(fn, x, y, n, force_scalar); }

// softmax / log_softmax over the last axes (rows of `len` contiguous terms): the steps of
// normalize below, row block by row block (threads take whole blocks; every element gets the
// same operations, so the same bits).
template <typename C>
Value normalize_rows(const ir::Let& let, const Value& operand, size_t len, const OpContext& ctx) {
  const Loaded<C> x = view_as<C>(operand, ctx.site);
  const bool log = let.op == ir::Op::log_softmax;
  const size_t rows = len ? x.size / len : 0;
  const bool force_scalar = ctx.options.force_scalar;
  Buffer<C> e(x.size), d(log ? x.size : 0);
  for_each_task((rows + kReduceRows - 1) / kReduceRows, ctx.options.threads, [&](size_t block) {
    const size_t r0 = block * kReduceRows, count = std::min(rows, r0 + kReduceRows) - r0;
    C* shifted = (log ? d.data() : e.data()) + r0 * len;  // softmax: d lives where e will
    for (size_t r = 0; r < count; ++r) {
      const C* row = x.data + (r0 + r) * len;
      const C m = max_of_row(row, len, force_scalar);
      arith_run(Arith::sub, shifted + r * len, row, &m, true, len);
    }
    C* out = e.data() + r0 * len;
    unary_rows(UnaryFn::exp, shifted, out, count * len, force_scalar);
    C sums[kReduceRows];
    if (sequential(ctx.realization.order)) {
      sequential_row_sums(out, count, len, len, sums);
    } else {
      const std::vector<size_t> terms = offsets_over({static_cast<int64_t>(len)}, {true});
      for (size_t r = 0; r < count; ++r) sums[r] = ordered_sum(out + r * len, terms, ctx.realization.order);
    }
    if (log) unary_rows(UnaryFn::log, sums, sums, count, force_scalar);
    for (size_t r = 0; r < count; ++r) {
      const C s = sums[r];
      C* y = out + r * len;
      arith_run(log ? Arith::sub : Arith::div, y, log ? shifted + r * len : y, &s, true, len);
    }
  });
  return store_as<C>(std::move(e), let.type.shape, ctx.site, ctx.options.threads);
}

// softmax along one axis: m = max, d = x − m, e = exp(d), s = Σ e (ordered);
// softmax = e / s, log_softmax = d − log(s).
template <typename C>
Value normalize(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  const ReductionPlan plan = plan_reduction(operand.shape, let.attrs.axes);
  if (plan.rows) return normalize_rows<C>(let, operand, plan.terms.size(), ctx);
  Buffer<C> d = load_as<C>(operand, ctx.site);
  for (size_t base : plan.bases) {
    const C m = max_fold(d.data() + base, plan.terms);
    for_each_term(plan, base, [&](size_t i) { d[i] = d[i] - m; });
  }
  Buffer<C> e(d.size());
  apply_unary(UnaryFn::exp, d.data(), e, ctx);
  Buffer<C> sums(plan.bases.size());
  for (size_t o = 0; o < plan.bases.size(); ++o) sums[o] = ordered_sum(e.data() + plan.bases[o], plan.terms, ctx.realization.order);
  if (let.op == ir::Op::log_softmax) apply_unary(UnaryFn::log, sums, ctx);
  for (size_t o = 0; o < plan.bases.size(); ++o) {
    const C s = sums[o];
    if (let.op == ir::Op::softmax) {
      for_each_term(plan, plan.bases[o], [&](size_t i) { e[i] = e[i] / s; });
    } else {
      for_each_term(plan, plan.bases[o], [&](size_t i) { e[i] = d[i] - s; });
    }
  }
  return store_as<C>(std::move(e), let.type.shape, ctx.site, ctx.options.threads);
}

// Mean over positions of log(Σ exp(x − m)) − (x_target − m); both sums ordered.
template <typename C>
Value cross_entropy(const ir::Let& let, const Value& logits, const Value& targets, const OpContext& ctx) {
  Buffer<C> d = load_as<C>(logits, ctx.site);
  const std::vector<int64_t> target = load_integers(targets);
  const int64_t classes = logits.shape.back();
  const ReductionPlan plan = plan_reduction(logits.shape, {static_cast<int64_t>(logits.shape.size()) - 1});
  std::vector<C> shifted_target(plan.bases.size());
  for (size_t o = 0; o < plan.bases.size(); ++o) {
    if (target[o] < 0 || target[o] >= classes) {
      user_error("E0624") << "cross_entropy target " << target[o] << " at position " << o << " is outside [0, "
                          << classes << ")";
    }
    const C m = max_fold(d.data() + plan.bases[o], plan.terms);
    for (size_t t : plan.terms) d[plan.bases[o] + t] = d[plan.bases[o] + t] - m;
    shifted_target[o] = d[plan.bases[o] + static_cast<size_t>(target[o])];
  }
  apply_unary(UnaryFn::exp, d, ctx);
  Buffer<C> losses(plan.bases.size());
  for (size_t o = 0; o < plan.bases.size(); ++o) losses[o] = ordered_sum(d.data() + plan.bases[o], plan.terms, ctx.realization.order);
  apply_unary(UnaryFn::log, losses, ctx);
  std::vector<size_t> all(losses.size());
  for (size_t o = 0; o < losses.size(); ++o) losses[o] = losses[o] - shifted_target[o], all[o] = o;
  const C total = ordered_sum(losses.data(), all, ctx.realization.order);
  const C mean = total / static_cast<C>(losses.size());
  return store_as<C>(Buffer<C>(element_count(let.type.shape), mean), let.type.shape, ctx.site);
}

// A Z sum or reduce_max: exact, in index order, as the reference; a partial sum outside int64
// is E0670 (as for `add`).
Value reduce_integers(const ir::Let& let, const Value& operand) {
  const std::vector<int64_t> x = load_integers(operand);
  const ReductionPlan plan = plan_reduction(operand.shape, let.attrs.axes);
  std::vector<int64_t> out(plan.bases.size());
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t acc = let.op == ir::Op::reduce_max ? x[plan.bases[o]] : 0;
    for (size_t t : plan.terms) {
      const int64_t v = x[plan.bases[o] + t];
      if (let.op == ir::Op::reduce_max) {
        acc = std::max(acc, v);
      } else if (__builtin_add_overflow(acc, v, &acc)) {
        user_error("E0670", let.span).hint("Z values are 64-bit integers: keep them within ±9223372036854775807")
            << "integer overflow: a partial sum of this `sum` (in index order) lies outside 64 bits";
      }
    }
    out[o] = acc;
  }
  return make_integers(std::move(out), let.type.shape);
}

}  // namespace

Value run_reduction(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  if (let.type.kind == ir::ElemKind::Int) return reduce_integers(let, operand);
  if (ctx.site == RealType::f64) return reduce<double>(let, operand, ctx);
  return reduce<float>(let, operand, ctx);
}

Value run_normalization(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  if (ctx.site == RealType::f64) return normalize<double>(let, operand, ctx);
  return normalize<float>(let, operand, ctx);
}

Value run_cross_entropy(const ir::Let& let, const Value& logits, const Value& targets, const OpContext& ctx) {
  if (ctx.site == RealType::f64) return cross_entropy<double>(let, logits, targets, ctx);
  return cross_entropy<float>(let, logits, targets, ctx);
}

}  // namespace presk::exec::native
