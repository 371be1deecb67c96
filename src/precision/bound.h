// The first-order bound (`presk check --precision`, docs/precision.md "check"): propagates a
// (magnitude ceiling, error ceiling) pair through every op of an entry, the functions it calls
// and every layer of its folds, under a realization. Magnitudes come from the envelope, errors
// from the realization's roundings; the result is a ceiling on max |executed − exact| over the
// entry's output, conditional on the envelope (its samples, weights and date).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/native/realization.h"
#include "ir/ir.h"
#include "precision/envelope.h"

namespace presk::precision {

// How an error already in a sum's terms is carried through the sum (docs/precision.md):
//   k         k · max|w| · δx + k · max|x| · δw             (worst case, every term at its max)
//   normwise  Σ|wᵢ| · δx + Σ|xᵢ| · δw                       (the operand factors)
//   cond      (δx/max|x| + δw/max|w|) · Σ|xᵢwᵢ|             (componentwise relative errors)
//   rss       (δx/max|x| + δw/max|w|) · √Σ(xᵢwᵢ)²           (independent errors)
// The sum's own rounding is γ_c · Σ|xᵢwᵢ| under every model.
enum class BoundModel : uint8_t { k, normwise, cond, rss };
const char* bound_model_name(BoundModel model);
std::optional<BoundModel> bound_model_from_name(std::string_view name);
inline constexpr BoundModel kAllBoundModels[] = {BoundModel::k, BoundModel::normwise,
                                                 BoundModel::cond, BoundModel::rss};

// What the envelope does not hold about a value the bound starts from: an entry argument
// (its largest magnitude over the envelope's samples and its rounding into each type).
struct ValueEnvelope {
  double max_abs = 0;
  RoundingEnvelope rounding;
};

struct BoundInputs {
  const ir::Program* program = nullptr;
  const Envelope* envelope = nullptr;
  const exec::native::Realization* realization = nullptr;
  // One per argument of the entry, in order (Z and B arguments: ignored).
  std::vector<ValueEnvelope> arguments;
  // Full parameter path → max |value at rest − w|, computed from the parameter's values
  // (a quantized one: max |f32(q·s) − w|, required). A typed path not here: the envelope's
  // rounding of the parameter into its type.
  std::map<std::string, double> parameter_errors;
};

// One source of error and what it contributes to the output's bound: a site's own roundings
// ("LayerNorm.apply/%4", every call and layer of it together), a parameter's representation
// at rest ("param blocks.ff.up.w"), an entry argument's rounding ("argument x").
struct Contribution {
  std::string source;
  double error = 0;
};

struct EntryBound {
  BoundModel model = BoundModel::cond;
  std::vector<double> results;  // the absolute bound on each result of the entry
  double absolute = 0;          // the largest of them
  double relative = 0;          // absolute / the envelope's output_max_abs (absolute if that is 0)
  // The sources of the largest result's bound, largest first; they add up to `absolute`.
  std::vector<Contribution> contributions;
};

// The bound on `inputs.envelope->entry` of `inputs.program` under `inputs.realization`.
// E0932: a site the entry computes is not in the envelope; E0933: an op with no error rule
// (the reverse-mode folds); E0934: an argument or parameter the bound needs is missing.
EntryBound bound_entry(const BoundInputs& inputs, BoundModel model);

// c(order, k): the most roundings any one term of a k-term sum goes through under `order`
// (docs/semantics.md): sequential and blocked k − 1, or k for an fma contraction (its first
// product is rounded); interleaved n: max over partials r of (its own roundings + the tree
// additions on its way to the root), ⌈k/n⌉ − 1 + ⌈log₂ n⌉ (fma: ⌈k/n⌉ + ⌈log₂ n⌉) at most.
int64_t rounding_depth(const exec::native::Order& order, int64_t terms, bool fused);
// Higham's γ_c = c·u / (1 − c·u); +∞ when c·u ≥ 1.
double gamma(int64_t c, double unit_roundoff);

}  // namespace presk::precision
