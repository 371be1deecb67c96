// The values the reference interpreter computes: a tensor of exact numbers of one arithmetic
// (MPFR points or Arb balls), or of integers (Z) or booleans (B, stored as 0/1), with a
// row-major shape. A value owns its storage, allocated once; it is moved, never copied.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "support/param_view.h"
#include "support/tensor.h"

namespace presk::reference {

using Shape = std::vector<int64_t>;

int64_t element_count(const Shape& shape);
Shape row_major_strides(const Shape& shape);  // in elements; the last axis has stride 1

template <class A>
struct Value {
  ir::ElemKind kind = ir::ElemKind::Real;
  Shape shape;
  typename A::Buffer reals;      // kind == Real: element_count(shape) numbers
  std::vector<int64_t> integers;  // kind == Int or Bool
  std::vector<Value> elements = {};  // a tuple-typed let's values (ir.h); empty otherwise
  // A parameter's slice read where it is stored (ir::read_in_place; kind Real, no `reals`):
  // elements [in_place_offset, in_place_offset + size()) of in_place, converted to exact
  // numbers a tile or a row at a time by its readers (ops_in_place.cpp).
  ParamView in_place;
  uint64_t in_place_offset = 0;

  int64_t size() const { return element_count(shape); }
  bool is_real() const { return kind == ir::ElemKind::Real; }
  bool is_in_place() const { return static_cast<bool>(in_place); }
  typename A::Number* real(int64_t i) { return reals.data() + i; }
  const typename A::Number* real(int64_t i) const { return reals.data() + i; }

  static Value make_real(const A& arith, Shape shape) {
    Value value;
    value.kind = ir::ElemKind::Real;
    value.reals = arith.allocate(element_count(shape));
    value.shape = std::move(shape);
    return value;
  }
  static Value make_integer(ir::ElemKind kind, Shape shape) {
    Value value;
    value.kind = kind;
    value.integers.assign(static_cast<size_t>(element_count(shape)), 0);
    value.shape = std::move(shape);
    return value;
  }
};

// A tensor on the host side of the interpreter: an input or a parameter slice before it
// becomes exact numbers. Reals are binary64 (every f64/f32/bf16 number is one exactly).
struct HostTensor {
  ir::Type type;
  std::vector<double> reals;      // type.kind == Real
  std::vector<int64_t> integers;  // type.kind == Int or Bool
};

// The exact value of a host tensor (binary64 numbers are exact at bits ≥ 53).
template <class A>
Value<A> to_value(const A& arith, const HostTensor& host) {
  if (host.type.kind != ir::ElemKind::Real) {
    Value<A> value = Value<A>::make_integer(host.type.kind, host.type.shape);
    value.integers = host.integers;
    return value;
  }
  Value<A> value = Value<A>::make_real(arith, host.type.shape);
  for (int64_t i = 0; i < value.size(); ++i) arith.set_double(value.real(i), host.reals[i]);
  return value;
}

// Host tensors as support tensors: R as F64, Z as I64, B as bool (what the native executor
// takes as inputs).
std::vector<Tensor> to_tensors(const std::vector<HostTensor>& hosts);

}  // namespace presk::reference
