// The emitter of the vjp generator (builder.h).
#include "ad/builder.h"

#include "ir/type_rules.h"
#include "support/diagnostics.h"

namespace presk::ad {

ValueRef Builder::emit(Op op, std::vector<ValueRef> operands, ir::Attrs attrs,
                       const Type* declared, const ir::Function* callee) {
  std::vector<Type> types;
  for (ValueRef operand : operands) types.push_back(out_.type_of(operand));
  ir::TypeRuleContext context;
  context.declared = declared;
  context.callee = callee;
  ir::InferredType inferred = ir::infer_result_type(op, types, attrs, context);
  if (!inferred) {
    std::string message = "an adjoint rule emitted an ill-typed " + std::string(ir::op_name(op)) +
                          ": " + inferred.error;
    internal_failure(__FILE__, __LINE__, message.c_str());
  }
  ir::Let let{op, std::move(*inferred.type), std::move(operands), std::move(attrs), {}, {}};
  out_.lets.push_back(std::move(let));
  return ValueRef::let(static_cast<uint32_t>(out_.lets.size() - 1));
}

ValueRef Builder::literal(const std::string& decimal) {
  auto found = literals_.find(decimal);
  if (found != literals_.end()) return found->second;
  ir::Attrs attrs;
  attrs.literal = decimal;
  Type real;
  ValueRef value = emit(Op::literal, {}, attrs, &real);
  literals_.emplace(decimal, value);
  return value;
}

ValueRef Builder::zeros(const Type& type) {
  return broadcast_to(literal("0"), type.shape);
}

ValueRef Builder::to_real(ValueRef value) {
  Type real{ir::ElemKind::Real, type_of(value).shape, {}, {}};
  return emit(Op::convert, {value}, {}, &real);
}

ValueRef Builder::reduce(Op op, ValueRef value, std::vector<int64_t> axes) {
  if (axes.empty()) return value;
  ir::Attrs attrs;
  attrs.axes = std::move(axes);
  return emit(op, {value}, attrs);
}

ValueRef Builder::reshape(ValueRef value, const std::vector<int64_t>& shape) {
  if (type_of(value).shape == shape) return value;
  Type target{type_of(value).kind, shape, {}, {}};
  return emit(Op::reshape, {value}, {}, &target);
}

ValueRef Builder::broadcast_to(ValueRef value, const std::vector<int64_t>& shape) {
  if (type_of(value).shape == shape) return value;
  Type target{type_of(value).kind, shape, {}, {}};
  return emit(Op::broadcast, {value}, {}, &target);
}

ValueRef Builder::sum_to(ValueRef value, const std::vector<int64_t>& target) {
  const std::vector<int64_t> shape = type_of(value).shape;
  if (shape == target) return value;
  size_t added = shape.size() - target.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < added || (target[i - added] == 1 && shape[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  }
  return reshape(reduce(Op::sum, value, axes), target);
}

ValueRef Builder::slice(ValueRef value, int64_t axis, int64_t start, int64_t stop) {
  ir::Attrs attrs;
  attrs.axes = {axis};
  attrs.starts = {start};
  attrs.stops = {stop};
  return emit(Op::slice, {value}, attrs);
}

ValueRef Builder::one_hot(ValueRef index, int64_t classes) {
  std::vector<int64_t> shape = type_of(index).shape;
  std::vector<int64_t> column = shape;
  column.push_back(1);
  shape.push_back(classes);
  ir::Attrs last;
  last.axes = {static_cast<int64_t>(shape.size() - 1)};
  Type iota_type{ir::ElemKind::Int, shape, {}, {}};
  ValueRef classes_index = emit(Op::iota, {}, last, &iota_type);
  return to_real(binary(Op::eq, classes_index, reshape(index, column)));
}

std::vector<ValueRef> Builder::results_of(ValueRef call, size_t count) {
  if (count == 1) return {call};
  std::vector<ValueRef> values;
  for (size_t i = 0; i < count; ++i) {
    ir::Attrs attrs;
    attrs.axes = {static_cast<int64_t>(i)};
    values.push_back(emit(Op::get, {call}, attrs));
  }
  return values;
}

}  // namespace presk::ad
