// Adjoint rules of the layout ops: the cotangent moves back to where each value came from;
// positions a value never reached get 0.
#include "ad/rules.h"

namespace presk::ad::rules {

// reshape is a bijection of positions: ḡ reshaped back
void reshape(RuleContext& c) {
  if (c.wants(0)) c.contribute(0, c.build.reshape(c.cotangent, c.operand_type(0).shape));
}

// y axis i = x axis p[i]: x̄ = ḡ transposed by p⁻¹
void transpose(RuleContext& c) {
  if (!c.wants(0)) return;
  ir::Attrs inverse;
  inverse.axes.resize(c.let.attrs.axes.size());
  for (size_t i = 0; i < c.let.attrs.axes.size(); ++i) {
    inverse.axes[static_cast<size_t>(c.let.attrs.axes[i])] = static_cast<int64_t>(i);
  }
  c.contribute(0, c.build.emit(Op::transpose, {c.cotangent}, inverse));
}

// y = x[start:stop] along each sliced axis: x̄ = ḡ padded with zeros (0 outside the range)
void slice(RuleContext& c) {
  if (!c.wants(0)) return;
  ValueRef padded = c.cotangent;
  const Type& input = c.operand_type(0);
  for (size_t k = 0; k < c.let.attrs.axes.size(); ++k) {
    int64_t axis = c.let.attrs.axes[k];
    int64_t extent = input.shape[static_cast<size_t>(axis)];
    std::vector<ValueRef> parts;
    Type piece = c.build.type_of(padded);
    piece.shape[static_cast<size_t>(axis)] = c.let.attrs.starts[k];
    if (c.let.attrs.starts[k] > 0) parts.push_back(c.build.zeros(piece));
    parts.push_back(padded);
    piece.shape[static_cast<size_t>(axis)] = extent - c.let.attrs.stops[k];
    if (extent > c.let.attrs.stops[k]) parts.push_back(c.build.zeros(piece));
    ir::Attrs along;
    along.axes = {axis};
    if (parts.size() > 1) padded = c.build.emit(Op::concat, parts, along);
  }
  c.contribute(0, padded);
}

// concat along an axis: operand i's cotangent is ḡ's slice at its offset
void concat(RuleContext& c) {
  int64_t axis = c.let.attrs.axes[0];
  int64_t offset = 0;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    int64_t extent = c.operand_type(i).shape[static_cast<size_t>(axis)];
    if (c.wants(i)) c.contribute(i, c.build.slice(c.cotangent, axis, offset, offset + extent));
    offset += extent;
  }
}

// broadcast copies x along stretched axes: x̄ = ḡ summed over them
void broadcast(RuleContext& c) {
  if (c.wants(0)) c.contribute_broadcast(0, c.cotangent);
}

// y[i, j] = x[i, j] where j ≤ i (else a constant): x̄ = ḡ where j ≤ i, else 0, which is
// causal_mask(ḡ) literal="0"
void causal_mask(RuleContext& c) {
  if (!c.wants(0)) return;
  ir::Attrs zeros;
  zeros.literal = "0";
  c.contribute(0, c.build.emit(Op::causal_mask, {c.cotangent}, zeros));
}

}  // namespace presk::ad::rules
