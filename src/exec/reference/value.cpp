// Shape arithmetic shared by the op families: counts, strides, broadcasting, axis attributes.
#include "exec/reference/ops.h"
#include "exec/reference/value.h"

#include <algorithm>

#include "support/diagnostics.h"

namespace presk::reference {

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

Shape row_major_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

BroadcastMap::BroadcastMap(const Shape& out, const Shape& operand)
    : out_(out), strides_(out.size(), 0) {
  internal_assert(operand.size() <= out.size());
  Shape operand_strides = row_major_strides(operand);
  size_t shift = out.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i) {
    internal_assert(operand[i] == out[i + shift] || operand[i] == 1);
    strides_[i + shift] = operand[i] == 1 ? 0 : operand_strides[i];
  }
  if (strides_ == row_major_strides(out)) kind_ = Kind::Same;  // (axes of extent 1 aside)
  if (std::all_of(strides_.begin(), strides_.end(), [](int64_t s) { return s == 0; })) kind_ = Kind::One;
}

int64_t BroadcastMap::general(int64_t flat) const {
  int64_t offset = 0;
  for (size_t i = out_.size(); i-- > 0;) {
    int64_t index = flat % out_[i];
    flat /= out_[i];
    offset += index * strides_[i];
  }
  return offset;
}

int64_t single_axis(const ir::Let& let, int64_t rank) {
  internal_assert(let.attrs.axes.size() == 1);
  int64_t axis = let.attrs.axes[0];
  if (axis < 0) axis += rank;
  internal_assert(axis >= 0 && axis < rank);
  return axis;
}

std::vector<Tensor> to_tensors(const std::vector<HostTensor>& hosts) {
  std::vector<Tensor> tensors;
  for (const HostTensor& host : hosts) {
    if (host.type.kind == ir::ElemKind::Real) {
      Tensor tensor(ElementType::f64, host.type.shape);
      for (size_t i = 0; i < host.reals.size(); ++i) tensor.set(i, host.reals[i]);
      tensors.push_back(std::move(tensor));
      continue;
    }
    Tensor tensor(host.type.kind == ir::ElemKind::Int ? ElementType::i64 : ElementType::boolean, host.type.shape);
    for (size_t i = 0; i < host.integers.size(); ++i) tensor.set_integer(i, host.integers[i]);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

}  // namespace presk::reference
