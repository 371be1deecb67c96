// The emitter of src/ad/: appends lets to the `.vjp` function being generated, each typed by
// the IR's own typing rules (ir/type_rules.h), with the small compositions the adjoint rules
// share (zeros, sums back over broadcast axes, one-hot rows).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace presk::ad {

using ir::Op;
using ir::Type;
using ir::ValueRef;

class Builder {
 public:
  explicit Builder(ir::Function& out) : out_(out) {}

  // Appends `op(operands)`; `declared` gives the type of ops whose type is given rather
  // than computed (literal, iota, convert, reshape, broadcast, fold_trace).
  ValueRef emit(Op op, std::vector<ValueRef> operands, ir::Attrs attrs = {},
                const Type* declared = nullptr, const ir::Function* callee = nullptr);
  Type type_of(ValueRef value) const { return out_.type_of(value); }  // a copy: lets move
  ir::Function& function() { return out_; }

  ValueRef literal(const std::string& decimal);  // a scalar R, one let per text
  ValueRef zeros(const Type& type);              // 0 of a real type
  ValueRef unary(Op op, ValueRef a) { return emit(op, {a}); }
  ValueRef binary(Op op, ValueRef a, ValueRef b) { return emit(op, {a, b}); }
  ValueRef to_real(ValueRef value);              // convert B or Z to R (0/1, exact)
  ValueRef reduce(Op op, ValueRef value, std::vector<int64_t> axes);
  ValueRef reshape(ValueRef value, const std::vector<int64_t>& shape);
  ValueRef broadcast_to(ValueRef value, const std::vector<int64_t>& shape);
  // Σ of `value` over the axes numpy broadcasting added or stretched to reach its shape
  // from `target`: the adjoint of a broadcast from `target`.
  ValueRef sum_to(ValueRef value, const std::vector<int64_t>& target);
  ValueRef slice(ValueRef value, int64_t axis, int64_t start, int64_t stop);
  // R[index…, classes]: 1 where the last index equals `index`, else 0.
  ValueRef one_hot(ValueRef index, int64_t classes);
  // The values of a call with `count` results: the call itself, or `get` of each.
  std::vector<ValueRef> results_of(ValueRef call, size_t count);

 private:
  ir::Function& out_;
  std::map<std::string, ValueRef> literals_;
};

}  // namespace presk::ad
