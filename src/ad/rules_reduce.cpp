// Adjoint rules of the reductions, the contraction, the normalizations, the loss and the
// gather. Reductions keep their axes (size 1), so a cotangent broadcasts straight back.
#include <string>

#include "ad/rules.h"
#include "support/diagnostics.h"

namespace presk::ad::rules {
namespace {

ValueRef mul(RuleContext& c, ValueRef a, ValueRef b) { return c.build.binary(Op::mul, a, b); }

// The count of the reduced elements of a reduction, as a decimal.
std::string reduced_count(const RuleContext& c) {
  int64_t count = 1;
  for (int64_t axis : c.let.attrs.axes) count *= c.operand_type(0).shape[static_cast<size_t>(axis)];
  return std::to_string(count);
}

// The einsum letters of an operand, the output, and the two inputs of a spec.
struct Spec {
  std::string inputs[2];
  std::string output;
};
Spec split(const std::string& spec) {
  size_t comma = spec.find(',');
  size_t arrow = spec.find("->");
  internal_assert(comma != std::string::npos && arrow != std::string::npos);
  return {{spec.substr(0, comma), spec.substr(comma + 1, arrow - comma - 1)}, spec.substr(arrow + 2)};
}

// The adjoint of input i of y = contract(x₀, x₁): contract(ḡ, x_other) onto x_i's letters;
// a letter of x_i found in neither ḡ nor x_other was summed within x_i alone, so the result
// broadcasts along it.
void contract_operand(RuleContext& c, size_t i, const Spec& spec) {
  const std::string& mine = spec.inputs[i];
  const std::string& other = spec.inputs[1 - i];
  std::string reached;
  std::vector<int64_t> reached_shape;
  for (size_t k = 0; k < mine.size(); ++k) {
    bool found = spec.output.find(mine[k]) != std::string::npos || other.find(mine[k]) != std::string::npos;
    reached_shape.push_back(found ? c.operand_type(i).shape[k] : 1);
    if (found) reached += mine[k];
  }
  ir::Attrs attrs;
  attrs.spec = spec.output + "," + other + "->" + reached;
  ValueRef adjoint = c.build.emit(Op::contract, {c.cotangent, c.operands[1 - i]}, attrs);
  adjoint = c.build.reshape(adjoint, reached_shape);
  c.contribute(i, c.build.broadcast_to(adjoint, c.operand_type(i).shape));
}

}  // namespace

// d/dx_i Σ_axes x = 1
void sum(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, c.build.broadcast_to(c.cotangent, c.operand_type(0).shape));
}

// d/dx_i mean_axes x = 1/n (n reduced elements)
void mean(RuleContext& c) {
  if (!c.wants(0)) return;
  ValueRef share = c.build.binary(Op::div, c.cotangent, c.build.literal(reduced_count(c)));
  c.contribute(0, c.build.broadcast_to(share, c.operand_type(0).shape));
}

// d/dx_i max_axes x = [x_i = max]/#{j : x_j = max} (ties share the cotangent evenly)
void reduce_max(RuleContext& c) {
  if (!c.wants(0)) return;
  ValueRef at_max = c.build.to_real(c.build.binary(Op::eq, c.operands[0], c.value));
  ValueRef ties = c.build.reduce(Op::sum, at_max, c.let.attrs.axes);
  c.contribute(0, mul(c, at_max, c.build.binary(Op::div, c.cotangent, ties)));
}

// d/dA (A·B) = ḡ·Bᵀ, d/dB (A·B) = Aᵀ·ḡ: for any spec, contract ḡ with the other operand
void contract(RuleContext& c) {
  Spec spec = split(c.let.attrs.spec);
  for (size_t i = 0; i < 2; ++i) {
    if (c.wants(i)) contract_operand(c, i, spec);
  }
}

// d/dx softmax(x) applied to ḡ: y ⊙ (ḡ − Σ_axis ḡ ⊙ y)
void softmax(RuleContext& c) {
  if (!c.wants(0)) return;
  ValueRef inner = c.build.reduce(Op::sum, mul(c, c.cotangent, c.value), c.let.attrs.axes);
  c.contribute(0, mul(c, c.value, c.build.binary(Op::sub, c.cotangent, inner)));
}

// d/dx log_softmax(x) applied to ḡ: ḡ − softmax(x) ⊙ Σ_axis ḡ
void log_softmax(RuleContext& c) {
  if (!c.wants(0)) return;
  ir::Attrs axis;
  axis.axes = c.let.attrs.axes;
  ValueRef probabilities = c.build.emit(Op::softmax, {c.operands[0]}, axis);
  ValueRef total = c.build.reduce(Op::sum, c.cotangent, c.let.attrs.axes);
  c.contribute(0, c.build.binary(Op::sub, c.cotangent, mul(c, probabilities, total)));
}

// d/dz cross_entropy(z, t) = (softmax(z) − onehot(t))/P over P positions
void cross_entropy(RuleContext& c) {
  if (!c.wants(0)) return;
  const Type& logits = c.operand_type(0);
  ir::Attrs last;
  last.axes = {static_cast<int64_t>(logits.rank() - 1)};
  ValueRef probabilities = c.build.emit(Op::softmax, {c.operands[0]}, last);
  ValueRef hot = c.build.one_hot(c.operands[1], logits.shape.back());
  std::string positions = std::to_string(c.operand_type(1).element_count());
  ValueRef share = c.build.binary(Op::div, c.cotangent, c.build.literal(positions));
  c.contribute(0, mul(c, c.build.binary(Op::sub, probabilities, hot), share));
}

// d/dtable[n] embed(table, idx) = Σ_{p : idx[p] = n} ḡ[p] (a scatter-add, written as the
// contraction of ḡ's rows with the one-hot rows of idx: exact, each sum has one term per p)
void embed(RuleContext& c) {
  if (!c.wants(0)) return;
  const Type& table = c.operand_type(0);
  int64_t positions = c.operand_type(1).element_count();
  int64_t row = table.element_count() / table.shape[0];
  ValueRef hot = c.build.one_hot(c.build.reshape(c.operands[1], {positions}), table.shape[0]);
  ValueRef rows = c.build.reshape(c.cotangent, {positions, row});
  ir::Attrs attrs;
  attrs.spec = "pn,pd->nd";
  ValueRef gathered = c.build.emit(Op::contract, {hot, rows}, attrs);
  c.contribute(0, c.build.reshape(gathered, table.shape));
}

}  // namespace presk::ad::rules
