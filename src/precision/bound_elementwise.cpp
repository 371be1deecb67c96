// The bound's rules for elementwise ops, transcendentals, layout and source ops
// (docs/precision.md "check" derives each): first order, one (magnitude, error) pair per value,
// the magnitude read from the envelope, the error built from the operands' and the let's own.
#include <algorithm>
#include <cmath>
#include <limits>

#include "precision/bound_rules.h"
#include "support/diagnostics.h"

namespace presk::precision::bound_detail {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The operand whose error ceiling is the larger: a 1-Lipschitz selection (max, min, where,
// concat) is within the larger of its operands' errors.
const Ceiling* larger_error(const std::vector<const Ceiling*>& candidates) {
  const Ceiling* best = nullptr;
  for (const Ceiling* c : candidates) {
    if (c->real && (best == nullptr || c->error.total() > best->error.total())) best = c;
  }
  return best;
}

// d/dx gelu_tanh(x) = ½(1 + tanh s) + ½x(1 − tanh² s)·√(2/π)(1 + 3·0.044715 x²),
// s = √(2/π)(x + 0.044715 x³).
double gelu_tanh_slope(double x) {
  const double c = std::sqrt(2 / M_PI), a = 0.044715;
  const double t = std::tanh(c * (x + a * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * a * x * x);
}

// d/dx gelu_erf(x) = Φ(x) + x·φ(x).
double gelu_erf_slope(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
}

}  // namespace

Ceiling result_of(const RuleContext& context, ErrorParts error) {
  // A value the envelope saw overflow its site's type: the stored value is ±∞ (or NaN) and
  // its error is unbounded, whatever the rule's first-order ceiling said.
  if (context.envelope != nullptr && std::isinf(rounding_into(&context.envelope->rounding, context.site, 0, false))) {
    error.add(context.source, std::numeric_limits<double>::infinity());
  }
  Ceiling out;
  out.magnitude = context.magnitude();
  out.error = std::move(error);
  out.type = context.site;
  out.rounding = context.envelope != nullptr ? &context.envelope->rounding : nullptr;
  out.computed = true;
  return out;
}

Ceiling exact_ceiling() {
  Ceiling c;
  c.real = false;
  return c;
}

double rounding_into(const RoundingEnvelope* rounding, RealType type, double magnitude, bool computed) {
  if (rounding != nullptr) {
    double measured = type == RealType::f64   ? rounding->f64
                      : type == RealType::f32 ? rounding->f32
                                              : rounding->bf16;
    if (std::isinf(measured)) return measured;  // the values overflow the type
    // The measured rounding is of the exact values: sound for values known exactly (entry
    // arguments, parameters at rest), not for computed ones, which may round by u·|v̂| where
    // the exact value is representable.
    if (!computed && std::isfinite(measured)) return measured;
  }
  return exec::native::real_unit_roundoff(type) * magnitude;
}

double relative(double error, double magnitude) {
  if (magnitude > 0) return error / magnitude;
  return error > 0 ? kInfinity : 0;
}

double RuleContext::compute_unit() const {
  return exec::native::real_unit_roundoff(site == RealType::f64 ? RealType::f64 : RealType::f32);
}

double RuleContext::store_rounding() const {
  return rounding_into(envelope != nullptr ? &envelope->rounding : nullptr, site, magnitude(), true);
}

// Ulps of the result (docs/semantics.md, "Transcendentals": the bound each function's test
// asserts). sqrt is correctly rounded (½ ulp); the rest as measured there, rounded up.
double transcendental_ulps(ir::Op op, RealType compute) {
  const bool f64 = compute == RealType::f64;
  switch (op) {
    case ir::Op::exp:
      return 1;
    case ir::Op::log:
      return 1;
    case ir::Op::tanh:
      return 3;
    case ir::Op::gelu_tanh:
      return f64 ? 2048 : 256;  // f64: the far negative tail, ≈ 2.5·|2u| ulps
    case ir::Op::gelu_erf:
      return f64 ? 64 : 1;
    case ir::Op::erf:
      return f64 ? 8 : 1;
    case ir::Op::sin:
    case ir::Op::cos:
    case ir::Op::atan:
      return 1;  // glibc's binary64 sin/cos/atan (f32: of the widened input, rounded once)
    case ir::Op::rsqrt:
      return 1.5;
    case ir::Op::sqrt:
      return 0.5;
    default:
      internal_assert(false && "not a transcendental");
  }
  return 0;
}

// sup |f′| over [−X, X] on a grid of step h, plus h·sup|f″| (|f″| ≤ 1 for both forms: at most
// 2φ(0) ≈ 0.80 for gelu_erf and 0.85 for gelu_tanh) for what lies between grid points. Beyond
// |x| = 12 both slopes are within 10⁻³⁰ of 0 or 1, values the grid already reaches.
double gelu_slope_bound(ir::Op op, double bound) {
  const double reach = std::min(std::isfinite(bound) ? bound : 12.0, 12.0);
  constexpr int kSteps = 4096;
  const double h = 2 * reach / kSteps;
  double sup = 0;
  for (int i = 0; i <= kSteps; ++i) {
    double x = -reach + h * i;
    sup =
        std::max(sup, std::fabs(op == ir::Op::gelu_tanh ? gelu_tanh_slope(x) : gelu_erf_slope(x)));
  }
  return sup + h;
}

Ceiling elementwise_rule(const RuleContext& context, const std::vector<Ceiling>& operands) {
  const ir::Op op = context.let.op;
  if (context.let.type.kind != ir::ElemKind::Real) return exact_ceiling();  // comparisons
  ErrorParts error;
  switch (op) {
    case ir::Op::add:
    case ir::Op::sub:  // δ(a ± b) = δa ± δb, then one rounding
      error.add(operands[0].error);
      error.add(operands[1].error);
      error.add(context.source, context.store_rounding());
      return result_of(context, std::move(error));
    case ir::Op::mul: {  // δ(ab) = b·δa + a·δb, then one rounding
      // k, normwise and absolute errors: max|b|·δa. cond, rss: a relative error δa ≤ ρ·|a|
      // gives |b·δa| ≤ ρ·|ab|, so ρ·max|ab| (never above max|b|·δa: max|ab| ≤ max|a|·max|b|).
      const double y = context.magnitude();
      for (int i = 0; i < 2; ++i) {
        const double other = operands[1 - i].magnitude;
        const double relative_factor =
            context.componentwise() ? relative(y, operands[i].magnitude) : other;
        context.carry(error, operands[i].error, relative_factor, other);
      }
      error.add(context.source, context.store_rounding());
      return result_of(context, std::move(error));
    }
    case ir::Op::div: {  // δ(a/b)/(a/b) = δa/a − δb/b, in relative terms at each maximum
      const double y = context.magnitude();
      error.add(operands[0].error, relative(y, operands[0].magnitude));
      error.add(operands[1].error, relative(y, operands[1].magnitude));
      error.add(context.source, context.store_rounding());
      return result_of(context, std::move(error));
    }
    case ir::Op::max:
    case ir::Op::min:
      return result_of(context, larger_error({&operands[0], &operands[1]})->error);
    case ir::Op::where:
      return result_of(context, larger_error({&operands[1], &operands[2]})->error);
    case ir::Op::neg:
    case ir::Op::abs:
    case ir::Op::relu:
    case ir::Op::dropout:  // the identity outside training
      return result_of(context, operands[0].error);
    case ir::Op::convert:  // Z → R rounds once into the site's type; B → R is exact
      if (operands[0].real) return result_of(context, operands[0].error);
      if (context.function.type_of(context.let.operands[0]).kind == ir::ElemKind::Bool) {
        return result_of(context, error);
      }
      error.add(context.source, context.store_rounding());
      return result_of(context, std::move(error));
    case ir::Op::exp:
    case ir::Op::log:
    case ir::Op::sqrt:
    case ir::Op::rsqrt:
    case ir::Op::tanh:
    case ir::Op::gelu_tanh:
    case ir::Op::gelu_erf:
    case ir::Op::erf:
    case ir::Op::sin:
    case ir::Op::cos:
    case ir::Op::atan:
      return transcendental_rule(context, operands[0]);
    default:
      break;
  }
  user_error("E0933", context.let.span).hint("presk check bounds forward entries")
      << "presk check has no error rule for `" << ir::op_name(op) << "` (site "
      << context.function.site_name(context.index) << ")";
  return {};
}

// y = f(x): |δy| ≤ sup|f′|·δx + (the function's ulps)·2u·|y|, since one ulp of y is at most
// 2u·|y|. exp′ = exp ≤ max|y|; log, sqrt and rsqrt in relative terms at the maximum
// (δ log x = δx/x, δ√x/√x = ½ δx/x); tanh′, sin′, cos′, atan′ ≤ 1; erf′ ≤ 2/√π; gelu′ bounded over [−max|x|, max|x|].
// A bf16 site computes in f32 and rounds the f32 result once more.
Ceiling transcendental_rule(const RuleContext& context, const Ceiling& x) {
  const ir::Op op = context.let.op;
  const double y = context.magnitude();
  double slope = 0;
  switch (op) {
    case ir::Op::exp:
      slope = y;
      break;
    case ir::Op::log:
      slope = relative(1, x.magnitude);
      break;
    case ir::Op::sqrt:
    case ir::Op::rsqrt:
      slope = 0.5 * relative(y, x.magnitude);
      break;
    case ir::Op::tanh:
    case ir::Op::sin:
    case ir::Op::cos:
    case ir::Op::atan:  // atan′(x) = 1/(1 + x²) ≤ 1
      slope = 1;
      break;
    case ir::Op::erf:  // erf′(x) = 2/√π·e^(−x²) ≤ 2/√π
      slope = 1.1283791670955126;
      break;
    default:
      slope = gelu_slope_bound(op, x.magnitude);
      break;
  }
  ErrorParts error;
  error.add(x.error, slope);
  const RealType compute = context.site == RealType::f64 ? RealType::f64 : RealType::f32;
  error.add(context.source, 2 * transcendental_ulps(op, compute) * context.compute_unit() * y);
  error.add(context.source, context.bf16_store_rounding());
  return result_of(context, std::move(error));
}

// Values move without arithmetic: the error of the operand they come from (concat: the larger;
// embed: the table's). causal_mask's −∞ are exact. A magnitude that is not finite (the mask's
// −∞) is replaced by the operand's: the finite values are the operand's.
Ceiling layout_rule(const RuleContext& context, const std::vector<Ceiling>& operands) {
  if (context.let.type.kind != ir::ElemKind::Real) return exact_ceiling();
  std::vector<const Ceiling*> candidates;
  for (const Ceiling& operand : operands) candidates.push_back(&operand);
  const Ceiling* source = context.let.op == ir::Op::embed ? &operands[0] : larger_error(candidates);
  Ceiling out = result_of(context, source->error);
  if (!std::isfinite(out.magnitude)) {
    out.magnitude = 0;
    for (const Ceiling& operand : operands)
      out.magnitude = std::max(out.magnitude, operand.magnitude);
  }
  return out;
}

// literal: the decimal rounded once into the site's type (the envelope measured exactly that
// rounding, the literal being exact); iota is Z.
Ceiling source_rule(const RuleContext& context) {
  if (context.let.type.kind != ir::ElemKind::Real) return exact_ceiling();
  ErrorParts error;
  error.add(context.source, context.store_rounding());
  return result_of(context, std::move(error));
}

double ErrorParts::total() const {
  double sum = 0;
  for (double part : parts_) sum += part;
  return sum;
}

void ErrorParts::add(int source, double amount) {
  if (amount == 0) return;
  internal_assert(source >= 0);
  if (parts_.size() <= static_cast<size_t>(source))
    parts_.resize(static_cast<size_t>(source) + 1, 0);
  parts_[static_cast<size_t>(source)] += amount;
}

void ErrorParts::add(const ErrorParts& other, double factor) {
  if (parts_.size() < other.parts_.size()) parts_.resize(other.parts_.size(), 0);
  for (size_t i = 0; i < other.parts_.size(); ++i) {
    if (other.parts_[i] != 0) parts_[i] += other.parts_[i] * factor;  // 0·∞ stays 0
  }
}

void ErrorParts::add(const ErrorParts& other, double relative_factor, double absolute_factor,
                     const std::vector<char>& absolute) {
  if (parts_.size() < other.parts_.size()) parts_.resize(other.parts_.size(), 0);
  for (size_t i = 0; i < other.parts_.size(); ++i) {
    if (other.parts_[i] == 0) continue;
    const bool is_absolute = i < absolute.size() && absolute[i] != 0;
    parts_[i] += other.parts_[i] * (is_absolute ? absolute_factor : relative_factor);
  }
}

void RuleContext::carry(ErrorParts& into, const ErrorParts& from, double relative_factor,
                        double absolute_factor) const {
  static const std::vector<char> kNone;
  into.add(from, relative_factor, absolute_factor,
           absolute_sources != nullptr ? *absolute_sources : kNone);
}

ErrorParts ErrorParts::scaled(double factor) const {
  ErrorParts out;
  out.add(*this, factor);
  return out;
}

}  // namespace presk::precision::bound_detail
