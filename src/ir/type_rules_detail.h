// Helpers shared by the files that implement ir/type_rules.h; not part of its interface.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/type_rules.h"

namespace presk::ir::detail {

InferredType fail(const std::string& message);
InferredType give(ElemKind kind, std::vector<int64_t> shape);
std::string describe(const Type& type);                     // "R[8, 64]"
// The problem with attrs.axes as the single axis of an operand of rank `rank`, if any.
std::optional<std::string> check_axis(const Attrs& attrs, int rank, const char* what);

// contract(a, b) per the einsum spec in attrs.spec.
InferredType contract_rule(const Type& a, const Type& b, const Attrs& attrs);
// reshape, transpose, slice, concat, broadcast, causal_mask.
InferredType layout_rule(Op op, const std::vector<Type>& operands, const Attrs& attrs,
                         const TypeRuleContext& context);
// The decode ops (type_rules_decode.cpp).
InferredType cache_write_rule(const std::vector<Type>& operands, const Attrs& attrs);
InferredType causal_mask_at_rule(const std::vector<Type>& operands);

}  // namespace presk::ir::detail
