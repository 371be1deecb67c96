// The bound's rules for what adds terms: sum, mean, reduce_max, contractions, softmax,
// log_softmax and cross_entropy (docs/precision.md "check"). A sum's propagated error follows
// the model (bound.h); its own rounding is Higham's γ_c · Σ|tᵢ| with c = c(order, k).
#include <algorithm>
#include <cmath>
#include <limits>

#include "precision/bound_rules.h"
#include "support/diagnostics.h"

namespace presk::precision::bound_detail {
namespace {

constexpr double kInverseE = 0.36787944117144233;  // max of e^d·|d| over d ≤ 0

// The statistics of one sum's terms tᵢ = xᵢ·wᵢ (a sum: wᵢ = 1), largest over its elements.
struct Terms {
  int64_t k = 0;
  double sum_abs = 0;           // Σ|tᵢ|
  double root_sum_squares = 0;  // √Σtᵢ²
  double factor_x = 0;          // Σ|wᵢ|: what x's error is multiplied by
  double factor_w = 0;          // Σ|xᵢ|: what w's error is multiplied by
};

// The envelope's statistics, or — for a site calibrated without them — their ceilings from the
// magnitudes: Σ|xw| ≤ k·max|x|·max|w|, √Σ(xw)² ≤ √k·max|x|·max|w|, Σ|w| ≤ k·max|w|.
Terms terms_of(const RuleContext& context, int64_t k, double x, double w, bool contraction) {
  Terms t;
  t.k = k;
  const auto kd = static_cast<double>(k);
  if (context.envelope != nullptr && context.envelope->terms) {
    const TermEnvelope& e = *context.envelope->terms;
    t.sum_abs = e.sum_abs_terms;
    t.root_sum_squares = e.root_sum_squares;
    t.factor_x = contraction ? e.operand_factors[0] : kd;
    t.factor_w = contraction ? e.operand_factors[1] : 0;
    return t;
  }
  t.sum_abs = kd * x * w;
  t.root_sum_squares = std::sqrt(kd) * x * w;
  t.factor_x = kd * w;
  t.factor_w = kd * x;
  return t;
}

// rss's confidence factor λ: n independent errors Xᵢ, |Xᵢ| ≤ aᵢ, mean zero, add up to more than
// λ·√Σaᵢ² with probability at most 2·exp(−λ²/2) (Hoeffding); over the N elements the site
// computed in the envelope, all stay within with probability ≥ 1 − δ for λ = √(2 ln(2N/δ)).
constexpr double kRssFailure = 1e-3;  // δ
double rss_confidence(const RuleContext& context) {
  const double elements =
      context.envelope != nullptr
          ? static_cast<double>(std::max<int64_t>(context.envelope->elements, 1))
          : 1;
  return std::sqrt(2 * std::log(2 * elements / kRssFailure));
}

// The error already in the terms, carried through the sum by the model (bound.h). Under cond
// and rss an absolute error (integer weights', not proportional to |xᵢ|) is carried by the
// operand factor (cond: δx·Σ|wᵢ|) or, independent, by √Σwᵢ² ≤ √(max|w|·Σ|wᵢ|) (rss). rss
// multiplies its root sums of squares by λ and never exceeds cond (what the terms can reach).
ErrorParts propagated(const RuleContext& context, const Terms& t, const Ceiling& x,
                      const Ceiling* w) {
  const double wx = w != nullptr ? w->magnitude : 1;
  const auto kd = static_cast<double>(t.k);
  ErrorParts error;
  switch (context.model) {
    case BoundModel::k:
      error.add(x.error, kd * wx);
      if (w != nullptr) error.add(w->error, kd * x.magnitude);
      break;
    case BoundModel::normwise:
      error.add(x.error, t.factor_x);
      if (w != nullptr) error.add(w->error, t.factor_w);
      break;
    case BoundModel::cond:
      context.carry(error, x.error, relative(t.sum_abs, x.magnitude), t.factor_x);
      if (w != nullptr)
        context.carry(error, w->error, relative(t.sum_abs, w->magnitude), t.factor_w);
      break;
    case BoundModel::rss: {
      const double lambda = rss_confidence(context);
      const double terms = std::min(lambda * t.root_sum_squares, t.sum_abs);
      context.carry(error, x.error, relative(terms, x.magnitude),
                    std::min(lambda * std::sqrt(wx * t.factor_x), t.factor_x));
      if (w != nullptr) {
        context.carry(error, w->error, relative(terms, w->magnitude),
                      std::min(lambda * std::sqrt(x.magnitude * t.factor_w), t.factor_w));
      }
      break;
    }
  }
  return error;
}

int64_t extent_product(const ir::Type& type, const std::vector<int64_t>& axes) {
  int64_t k = 1;
  for (int64_t axis : axes)
    k *= type.shape.at(static_cast<size_t>(axis < 0 ? axis + type.rank() : axis));
  return k;
}

// The contracted letters of an einsum spec "ab,bc->ac": in both operands, not in the output.
int64_t contracted_terms(const RuleContext& context) {
  const std::string& spec = context.let.attrs.spec;
  const size_t comma = spec.find(','), arrow = spec.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos);
  const std::string a = spec.substr(0, comma), b = spec.substr(comma + 1, arrow - comma - 1);
  const std::string out = spec.substr(arrow + 2);
  const ir::Type& type = context.function.type_of(context.let.operands[0]);
  int64_t k = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (b.find(a[i]) != std::string::npos && out.find(a[i]) == std::string::npos)
      k *= type.shape.at(i);
  }
  return k;
}

// The relative error of s = Σ exp(xₖ − m) along a row of n (every term in (0, 1], one of them
// 1, so s ≥ 1): the roundings of dₖ = xₖ − m (u·|dₖ| each, carried by exp: Σ eₖ·u|dₖ| / s ≤
// u·min(max|d|, n/e)), exp's own error, and the sum's γ_c.
double softmax_sum_relative(const RuleContext& context, double x, int64_t n) {
  const double u = context.compute_unit();
  const RealType compute = context.site == RealType::f64 ? RealType::f64 : RealType::f32;
  const double exp_error = 2 * transcendental_ulps(ir::Op::exp, compute) * u;
  const double d_roundings = u * std::min(2 * x, static_cast<double>(n) * kInverseE);
  return d_roundings + exp_error + gamma(rounding_depth(context.order, n, false), u);
}

}  // namespace

// sum: the model's propagation + γ_c(u)·Σ|xᵢ|; mean: that over k, plus the division's rounding;
// reduce_max: 1-Lipschitz, no rounding. A bf16 site accumulates in f32, rounds once at the end.
Ceiling reduction_rule(const RuleContext& context, const Ceiling& x) {
  if (context.let.type.kind != ir::ElemKind::Real) return exact_ceiling();
  if (context.let.op == ir::Op::reduce_max) return result_of(context, x.error);
  const int64_t k =
      extent_product(context.function.type_of(context.let.operands[0]), context.let.attrs.axes);
  const Terms t = terms_of(context, k, x.magnitude, 1, false);
  ErrorParts error = propagated(context, t, x, nullptr);
  const double u = context.compute_unit();
  error.add(context.source, gamma(rounding_depth(context.order, k, false), u) * t.sum_abs);
  if (context.let.op == ir::Op::mean) {
    error = error.scaled(1 / static_cast<double>(k));
    const bool bf16 = context.site == RealType::bf16;
    error.add(context.source, bf16 ? u * context.magnitude() : context.store_rounding());
  }
  error.add(context.source, context.bf16_store_rounding());
  return result_of(context, std::move(error));
}

// y = Σ xᵢwᵢ by fma chains: the model's propagation + γ_c(u)·Σ|xᵢwᵢ|, c = c(order, k, fma).
Ceiling contraction_rule(const RuleContext& context, const Ceiling& x, const Ceiling& w) {
  const int64_t k = contracted_terms(context);
  const Terms t = terms_of(context, k, x.magnitude, w.magnitude, true);
  ErrorParts error = propagated(context, t, x, &w);
  error.add(context.source,
            gamma(rounding_depth(context.order, k, true), context.compute_unit()) * t.sum_abs);
  error.add(context.source, context.bf16_store_rounding());
  return result_of(context, std::move(error));
}

// softmax is 1-Lipschitz in the ∞-norm (its Jacobian diag(p) − ppᵀ has row sums of |·| equal
// to 2pᵢ(1 − pᵢ) ≤ ½), log_softmax 2-Lipschitz (I − 1pᵀ: 2(1 − pᵢ) ≤ 2). Own roundings:
//   softmax      yₖ·u|dₖ| ≤ u·min(2·max|y|·max|x|, 1/e), + max|y|·(exp + δs/s + the division)
//   log_softmax  u·|dₖ| + δs/s + log's ulps·log n + the subtraction's u·max|y|
Ceiling normalization_rule(const RuleContext& context, const Ceiling& x) {
  const ir::Type& type = context.function.type_of(context.let.operands[0]);
  const int64_t n = extent_product(type, context.let.attrs.axes);
  const double u = context.compute_unit(), y = context.magnitude();
  const RealType compute = context.site == RealType::f64 ? RealType::f64 : RealType::f32;
  const double sum_relative = softmax_sum_relative(context, x.magnitude, n);
  ErrorParts error;
  double own = 0;
  if (context.let.op == ir::Op::softmax) {
    error.add(x.error, 1);
    const double exp_error = 2 * transcendental_ulps(ir::Op::exp, compute) * u;
    own = u * std::min(2 * y * x.magnitude, kInverseE) + y * (exp_error + sum_relative + u);
  } else {
    error.add(x.error, 2);
    const double log_n = std::log(static_cast<double>(n));
    const double log_error = 2 * transcendental_ulps(ir::Op::log, compute) * u * log_n;
    own = u * std::min(2 * x.magnitude, y + log_n) + sum_relative + log_error + u * y;
  }
  error.add(context.source, own);
  error.add(context.source, context.bf16_store_rounding());
  return result_of(context, std::move(error));
}

// The mean over P positions of ℓ = log s − d_target (−log_softmax at the target, 2-Lipschitz,
// ℓ ≥ 0): per position u·|d| + δs/s + log's ulps + u·|ℓ| with |d| ≤ 2·max|x|, |ℓ| ≤ 2·max|x| +
// log n; the ordered sum of the P losses γ_c(u)·P·max|loss|, divided by P, and the division.
Ceiling cross_entropy_rule(const RuleContext& context, const Ceiling& logits) {
  const ir::Type& type = context.function.type_of(context.let.operands[0]);
  const int64_t n = type.shape.empty() ? 1 : type.shape.back();
  const int64_t positions = type.element_count() / std::max<int64_t>(n, 1);
  const double u = context.compute_unit(), y = context.magnitude(), x = logits.magnitude;
  const RealType compute = context.site == RealType::f64 ? RealType::f64 : RealType::f32;
  const double log_n = std::log(static_cast<double>(n));
  const double log_error = 2 * transcendental_ulps(ir::Op::log, compute) * u * log_n;
  const double per_position =
      u * 2 * x + softmax_sum_relative(context, x, n) + log_error + u * (2 * x + log_n);
  const double mean = gamma(rounding_depth(context.order, positions, false), u) * y + u * y;
  ErrorParts error;
  error.add(logits.error, 2);
  error.add(context.source, per_position + mean);
  error.add(context.source, context.bf16_store_rounding());
  return result_of(context, std::move(error));
}

}  // namespace presk::precision::bound_detail

namespace presk::precision {

double gamma(int64_t c, double unit_roundoff) {
  const double cu = static_cast<double>(c) * unit_roundoff;
  return cu < 1 ? cu / (1 - cu) : std::numeric_limits<double>::infinity();
}

int64_t rounding_depth(const exec::native::Order& order, int64_t terms, bool fused) {
  if (terms <= 0) return 0;
  const int64_t first = fused ? 0 : 1;  // a plain sum's first term enters unrounded
  if (order.kind != exec::native::OrderKind::interleaved || order.partials <= 1)
    return terms - first;
  const int64_t n = order.partials, count = std::min(n, terms);
  // The tree: while more than one partial remains, p[r] ← p[2r] + p[2r+1]; an odd last one
  // moves up unchanged. depth[r]: the additions partial r goes through.
  std::vector<int64_t> depth(static_cast<size_t>(count), 0);
  std::vector<std::vector<int64_t>> groups;
  for (int64_t r = 0; r < count; ++r) groups.push_back({r});
  while (groups.size() > 1) {
    std::vector<std::vector<int64_t>> next;
    for (size_t i = 0; i + 1 < groups.size(); i += 2) {
      std::vector<int64_t> merged = groups[i];
      merged.insert(merged.end(), groups[i + 1].begin(), groups[i + 1].end());
      for (int64_t r : merged) ++depth[static_cast<size_t>(r)];
      next.push_back(std::move(merged));
    }
    if (groups.size() % 2) next.push_back(groups.back());
    groups = std::move(next);
  }
  int64_t c = 0;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t own = (terms - r + n - 1) / n;  // the terms of partial r
    c = std::max(c, own - first + depth[static_cast<size_t>(r)]);
  }
  return c;
}

}  // namespace presk::precision
