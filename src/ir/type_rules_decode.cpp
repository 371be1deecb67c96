// The typing rules of the decode ops (ops.def, "Decode"): cache_write and causal_mask_at.
// scan's rule is a control rule (type_rules.cpp, beside fold_vjp's).
#include "ir/type_rules_detail.h"

namespace presk::ir::detail {

namespace {

bool is_z_scalar(const Type& type) {
  return type.kind == ElemKind::Int && type.shape.empty() && !type.is_tuple();
}

}  // namespace

// cache_write(cache, rows, at : Z) along attrs.axes = {axis}: rows has the cache's kind and
// shape except along the axis (at most the cache's extent); the result is the cache's type.
InferredType cache_write_rule(const std::vector<Type>& operands, const Attrs& attrs) {
  const Type &cache = operands[0], &rows = operands[1];
  if (cache.kind != ElemKind::Real) return fail("cache_write writes into R, found " + describe(cache));
  if (auto problem = check_axis(attrs, cache.rank(), "cache_write")) return fail(*problem);
  const auto axis = static_cast<size_t>(attrs.axes[0]);
  if (rows.kind != ElemKind::Real || rows.rank() != cache.rank()) {
    return fail("cache_write's rows must be R of the cache's rank " + std::to_string(cache.rank()) + ", found " +
                describe(rows));
  }
  for (size_t a = 0; a < cache.shape.size(); ++a) {
    if (a == axis ? rows.shape[a] > cache.shape[a] : rows.shape[a] != cache.shape[a]) {
      return fail("cache_write's rows " + describe(rows) + " do not fit the cache " + describe(cache) + " along axis " +
                  std::to_string(axis));
    }
  }
  if (!is_z_scalar(operands[2])) return fail("cache_write's position is a Z scalar, found " + describe(operands[2]));
  return give(ElemKind::Real, cache.shape);
}

// causal_mask_at(x, at : Z): x of rank ≥ 2, its type.
InferredType causal_mask_at_rule(const std::vector<Type>& operands) {
  if (operands[0].kind != ElemKind::Real || operands[0].rank() < 2) {
    return fail("causal_mask_at needs R with at least two axes, found " + describe(operands[0]));
  }
  if (!is_z_scalar(operands[1])) return fail("causal_mask_at's position is a Z scalar, found " + describe(operands[1]));
  return give(ElemKind::Real, operands[0].shape);
}

}  // namespace presk::ir::detail
