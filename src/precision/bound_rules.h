// The bound's op rules (bound.h), shared by the driver (bound.cpp) and the rule files
// (bound_elementwise.cpp: elementwise, transcendental, layout and source ops; bound_sums.cpp:
// sums, contractions, normalizations and the loss). docs/precision.md "check" derives each.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/native/numeric.h"
#include "exec/native/realization.h"
#include "ir/ir.h"
#include "precision/bound.h"
#include "precision/envelope.h"

namespace presk::precision::bound_detail {

using exec::native::RealType;

// An error ceiling kept as its parts, one per source (bound.h, Contribution): every rule is
// linear in its operands' errors (first order), so the parts of the output's ceiling say how
// much of it each source's roundings cause. The ceiling is their sum.
// A source's errors are of one of two kinds, and keep it through every rule: *relative* — a
// rounding, |fl(v) − v| ≤ u·|v|, proportional to each element's magnitude (the assumption cond
// and rss make of every error after the first rounding) — or *absolute* — integer weights'
// representation error, up to half a scale whatever the weight's own magnitude.
class ErrorParts {
 public:
  double total() const;
  void add(int source, double amount);                   // amount ≥ 0 (+∞ allowed)
  void add(const ErrorParts& other, double factor = 1);  // += factor · other (factor ≥ 0)
  // += other, each part times `relative_factor`, or `absolute_factor` where absolute[source].
  void add(const ErrorParts& other, double relative_factor, double absolute_factor,
           const std::vector<char>& absolute);
  ErrorParts scaled(double factor) const;
  const std::vector<double>& parts() const { return parts_; }

 private:
  std::vector<double> parts_;  // by source id
};

// What the bound knows of a value: a ceiling on max|v| (exact values, from the envelope), a
// ceiling on max|executed − exact|, the type it is stored in, and where its exact values'
// roundings into each type were measured (null: u·max|v| is used).
struct Ceiling {
  bool real = true;  // Z and B values are exact and carry no error
  double magnitude = 0;
  ErrorParts error;
  RealType type = RealType::f64;
  const RoundingEnvelope* rounding = nullptr;
  bool computed = false;  // a computed value (its rounding is charged u·max|v|), not an input
  std::vector<Ceiling> elements =
      {};  // a tuple's elements (a call of a function with several results)
};

// Everything a rule needs about the let it bounds.
struct RuleContext {
  const ir::Let& let;
  const ir::Function& function;
  uint32_t index = 0;  // the let's index in `function`
  BoundModel model;
  const exec::native::Order& order;
  RealType site = RealType::f32;           // the let's site type (also its compute type's owner)
  const SiteEnvelope* envelope = nullptr;  // the let's envelope (null only for non-real lets)
  int source = -1;                         // the let's source id, for its own roundings
  const std::vector<char>* absolute_sources = nullptr;  // by source id: an absolute kind

  // Whether the model takes errors as proportional to magnitudes, element by element.
  bool componentwise() const { return model == BoundModel::cond || model == BoundModel::rss; }
  // into += from, a relative source's part times `relative_factor`, an absolute one's times
  // `absolute_factor`.
  void carry(ErrorParts& into, const ErrorParts& from, double relative_factor,
             double absolute_factor) const;

  double magnitude() const { return envelope != nullptr ? envelope->max_abs : 0; }
  // The unit roundoff the let computes in: f32 for a bf16 site (docs/semantics.md).
  double compute_unit() const;
  // The rounding of the let's stored value into its site type: u·max|v| (+∞ where the
  // envelope records an overflow of the type).
  double store_rounding() const;
  // A bf16 site's final rounding of its f32 result to bf16, 0 for other sites.
  double bf16_store_rounding() const { return site == RealType::bf16 ? store_rounding() : 0; }
};

// A ceiling on max|fl_T(v) − v|: +∞ where the envelope records that the values overflow T; the
// envelope's measured rounding for values known exactly (computed = false: entry arguments,
// parameters at rest); u_T·magnitude otherwise (computed values, or no envelope).
double rounding_into(const RoundingEnvelope* rounding, RealType type, double magnitude, bool computed);
// Relative error ceiling δ/M at the value's maximum (0 when both are 0, +∞ when only M is).
double relative(double error, double magnitude);

// The rules. Operands arrive already converted into the site's type (the edge roundings added).
Ceiling elementwise_rule(const RuleContext& context, const std::vector<Ceiling>& operands);
Ceiling transcendental_rule(const RuleContext& context, const Ceiling& x);
Ceiling layout_rule(const RuleContext& context, const std::vector<Ceiling>& operands);
Ceiling source_rule(const RuleContext& context);                       // literal, iota
Ceiling reduction_rule(const RuleContext& context, const Ceiling& x);  // sum, mean, reduce_max
Ceiling contraction_rule(const RuleContext& context, const Ceiling& x, const Ceiling& w);
Ceiling normalization_rule(const RuleContext& context, const Ceiling& x);  // softmax, log_softmax
Ceiling cross_entropy_rule(const RuleContext& context, const Ceiling& logits);

// The transcendentals' error in ulps of their result, as docs/semantics.md asserts them.
double transcendental_ulps(ir::Op op, RealType compute);
// sup |f′(x)| over |x| ≤ bound for gelu_tanh and gelu_erf.
double gelu_slope_bound(ir::Op op, double bound);

// A ceiling with no error: Z and B values.
Ceiling exact_ceiling();
// The result of a let with the given error: its magnitude and rounding from its envelope,
// stored in its site's type.
Ceiling result_of(const RuleContext& context, ErrorParts error);

}  // namespace presk::precision::bound_detail
