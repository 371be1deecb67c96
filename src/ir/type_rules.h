// The typing rules of the IR: the result type each op gives for its operand types and
// attributes. One function serves the verifier (which checks a let's type against it) and
// the lowering (which computes a let's type with it), so the two can never disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::ir {

// What an op's rule reads beyond its operands and attributes.
struct TypeRuleContext {
  // The let's own type, for ops whose result is given rather than computed: reshape and
  // broadcast (the target), iota (the shape), literal and convert (the element kind).
  // Without it those ops have no rule.
  const Type* declared = nullptr;
  const Function* callee = nullptr;  // call, fold: the resolved callee
  const Param* param = nullptr;      // param: the resolved parameter
};

// A rule's answer: the result type (shape and kind; axis names are left empty), or why
// the operands and attributes admit none.
struct InferredType {
  std::optional<Type> type;
  std::string error;  // what is wrong, phrased for a diagnostic; empty when `type` is set

  explicit operator bool() const { return type.has_value(); }
};

// The result type of `op` applied to operands of types `operands` with `attrs`. The
// operand count must match op_info(op).arity (or be ≥ 1 where the arity is variable);
// a mismatch is reported as an error, never asserted.
InferredType infer_result_type(Op op, const std::vector<Type>& operands, const Attrs& attrs,
                               const TypeRuleContext& context = {});

// numpy broadcasting of two shapes (right-aligned; a size-1 axis stretches), or nullopt
// when an axis differs and neither side is 1.
std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);

// The attribute fields an op reads (ops.def); the verifier requires the others to be empty.
enum class AttrField : uint8_t {
  Axes = 1,
  Starts = 2,
  Stops = 4,
  Literal = 8,
  Spec = 16,
  Callee = 32,
  Path = 64,
  Rate = 128
};
uint8_t attr_fields_read(Op op);
// The names of the fields set in `attrs` that `op` does not read ("rate, spec"), or "".
std::string unread_attr_fields(Op op, const Attrs& attrs);

// Whether `text` is a decimal literal as the IR stores it: [-]digits[.digits][e[+-]digits].
bool is_decimal_literal(const std::string& text);
// A real literal: a decimal, or the exact quotient of two, "N/D" (D unsigned, not zero).
bool is_real_literal(const std::string& text);
// A Z literal: [-]digits within int64's range.
bool is_integer_literal(const std::string& text);

}  // namespace presk::ir
