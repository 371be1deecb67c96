// The reference's ops of reverse mode (src/ad/, docs/ad.md): fold_trace, a fold that also
// keeps each layer's input, and fold_vjp, the callee's vjp over the layers in reverse. No
// arithmetic of their own: values are copied exactly between layers and stacks.
#include <algorithm>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

// Copies `part` into layer `layer` of `stack` (same element count per layer).
template <class A>
void store_layer(const A& arith, Value<A>& stack, int64_t layer, const Value<A>& part) {
  int64_t offset = layer * part.size();
  for (int64_t i = 0; i < part.size(); ++i) arith.set(stack.real(offset + i), part.real(i));
}

// Layer `layer` of `stack`, as a value of `shape`.
template <class A>
Value<A> load_layer(const A& arith, const Value<A>& stack, int64_t layer, const Shape& shape) {
  Value<A> part = Value<A>::make_real(arith, shape);
  int64_t offset = layer * part.size();
  for (int64_t i = 0; i < part.size(); ++i) arith.set(part.real(i), stack.real(offset + i));
  return part;
}

template <class A>
Value<A> tuple_of(std::vector<Value<A>> elements) {
  Value<A> tuple;
  tuple.elements = std::move(elements);
  return tuple;
}

// fold_trace(x): (f_{L−1}(… f_0(x)), [x_0, …, x_{L−1}]) with x_l the input of layer l; with
// a callee x → (x, r…), the carry is the first result and stack k holds [r_k,0, …, r_k,L−1].
template <class A>
Value<A> fold_trace(const A& arith, const ir::Let& let, int64_t layers, const Value<A>& initial,
                    const LayerRunner<A>& run_layer) {
  std::vector<Value<A>> elements;
  elements.push_back(copy_value(arith, initial));
  for (size_t k = 1; k < let.type.elements.size(); ++k) elements.push_back(Value<A>::make_real(arith, let.type.elements[k].shape));
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Value<A>> results = run_layer(l, {&elements[0]});
    if (results.size() == 1) store_layer(arith, elements[1], l, elements[0]);
    for (size_t k = 1; k < results.size(); ++k) store_layer(arith, elements.at(k), l, results[k]);
    elements[0] = std::move(results.at(0));
  }
  return tuple_of(std::move(elements));
}

// fold_vjp(stacks…, ḡ): for l = L−1 … 0, (ḡ, θ̄_l…) = f.vjp(each stack's layer l…, ḡ); the
// final ḡ and each θ̄ stacked by layer.
template <class A>
Value<A> fold_vjp(const A& arith, const ir::Let& let, int64_t layers, const std::vector<const Value<A>*>& stacks,
                  const Value<A>& cotangent, const LayerRunner<A>& run_layer) {
  std::vector<Value<A>> elements;
  elements.push_back(copy_value(arith, cotangent));
  for (size_t k = 1; k < let.type.elements.size(); ++k)
    elements.push_back(Value<A>::make_real(arith, let.type.elements[k].shape));
  for (int64_t l = layers; l-- > 0;) {
    std::vector<Value<A>> rows;
    for (const Value<A>* stack : stacks) rows.push_back(load_layer(arith, *stack, l, Shape(stack->shape.begin() + 1, stack->shape.end())));
    std::vector<const Value<A>*> arguments;
    for (const Value<A>& row : rows) arguments.push_back(&row);
    arguments.push_back(&elements[0]);
    std::vector<Value<A>> results = run_layer(l, arguments);
    internal_assert(results.size() == elements.size());
    for (size_t k = 1; k < results.size(); ++k) store_layer(arith, elements[k], l, results[k]);
    elements[0] = std::move(results[0]);
  }
  return tuple_of(std::move(elements));
}

// scan(x, operands…): for l = 0 … L−1, (x, r_l…) = f(x, each operand's layer l or the whole
// operand…); x, or the tuple (x, each r stacked by layer).
template <class A>
Value<A> scan(const A& arith, const ir::Let& let, int64_t layers, const std::vector<const Value<A>*>& operands,
              const LayerRunner<A>& run_layer) {
  std::vector<Value<A>> elements;
  elements.push_back(copy_value(arith, *operands.at(0)));
  for (size_t k = 1; k < let.type.elements.size(); ++k)
    elements.push_back(Value<A>::make_real(arith, let.type.elements[k].shape));
  const std::vector<int64_t>& stacked = let.attrs.axes;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Value<A>> rows(operands.size());
    std::vector<const Value<A>*> arguments{&elements[0]};
    for (size_t i = 1; i < operands.size(); ++i) {
      const Value<A>& operand = *operands[i];
      if (std::find(stacked.begin(), stacked.end(), static_cast<int64_t>(i)) == stacked.end()) {
        arguments.push_back(&operand);
        continue;
      }
      rows[i] = load_layer(arith, operand, l, Shape(operand.shape.begin() + 1, operand.shape.end()));
      arguments.push_back(&rows[i]);
    }
    std::vector<Value<A>> results = run_layer(l, arguments);
    for (size_t k = 1; k < results.size(); ++k) store_layer(arith, elements.at(k), l, results[k]);
    elements[0] = std::move(results.at(0));
  }
  if (elements.size() == 1) return std::move(elements[0]);
  return tuple_of(std::move(elements));
}

}  // namespace

template <class A>
Value<A> eval_stacked_fold(const A& arith, const ir::Let& let, int64_t layers,
                           const std::vector<const Value<A>*>& operands,
                           const LayerRunner<A>& run_layer) {
  if (let.op == ir::Op::fold_trace) return fold_trace(arith, let, layers, *operands.at(0), run_layer);
  if (let.op == ir::Op::scan) return scan(arith, let, layers, operands, run_layer);
  internal_assert(let.op == ir::Op::fold_vjp);
  return fold_vjp(arith, let, layers, std::vector<const Value<A>*>(operands.begin(), operands.end() - 1), *operands.back(), run_layer);
}

template Value<MpfrArith> eval_stacked_fold(const MpfrArith&, const ir::Let&, int64_t,
                                            const std::vector<const Value<MpfrArith>*>&,
                                            const LayerRunner<MpfrArith>&);
template Value<BallArith> eval_stacked_fold(const BallArith&, const ir::Let&, int64_t,
                                            const std::vector<const Value<BallArith>*>&,
                                            const LayerRunner<BallArith>&);

}  // namespace presk::reference
