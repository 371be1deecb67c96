// The op families of the reference interpreter, each written once over an arithmetic policy
// (arith_mpfr.h, arith_ball.h) and instantiated for both. These functions are the definition
// of presk's primitives (STYLE.md §5): scalar, one case per op, terms added in index order.
// Every result has the let's type; operands have been checked by the verifier.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <functional>
#include <span>
#include <vector>

#include "exec/reference/observer.h"
#include "exec/reference/value.h"
#include "ir/ir.h"
#include "support/dropout_mask.h"

namespace presk::reference {

template <class A>
using Operands = std::span<const Value<A>* const>;

// Sources and elementwise ops (ops_elementwise.cpp).
template <class A> Value<A> eval_literal(const A& arith, const ir::Let& let);
template <class A> Value<A> eval_iota(const A& arith, const ir::Let& let);
template <class A> Value<A> eval_elementwise(const A& arith, const ir::Let& let, Operands<A> in);
// dropout in a training run: x / (1 − rate) where `mask` keeps the element, +0 where it drops it.
template <class A>
Value<A> eval_dropout(const A& arith, const ir::Let& let, const Value<A>& x, const random::DropoutMask& mask);

// sum, mean, reduce_max (ops_reduce.cpp); `terms`, when given, receives per output element
// the statistics of its terms (observer.h).
template <class A>
Value<A> eval_reduction(const A& arith, const ir::Let& let, const Value<A>& x,
                        std::vector<TermStatistics>* terms);
// softmax, log_softmax, cross_entropy (ops_normalize.cpp).
template <class A> Value<A> eval_normalization(const A& arith, const ir::Let& let, const Value<A>& x);
// quantize (ops_quantize.cpp): each block by its scheme's exact meaning.
// `values`: quantize(p, v)'s v (spec "weights|…"), else null.
template <class A>
Value<A> eval_quantize(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>* values);
template <class A>
Value<A> eval_cross_entropy(const A& arith, const ir::Let& let, const Value<A>& logits,
                            const Value<A>& targets);
// contract (ops_contract.cpp).
template <class A>
Value<A> eval_contract(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>& w,
                       std::vector<TermStatistics>* terms);
// A contraction with an operand read in place (value.h; ops_in_place.cpp): the operand a tile at a
// time, each tile's output elements by eval_contract, so every element has the bits it has when
// the operand is converted whole.
template <class A>
Value<A> contract_in_place(const A& arith, const ir::Let& let, const Value<A>& x, const Value<A>& w,
                           std::vector<TermStatistics>* terms);
// The most elements of an operand read in place that a contraction converts at once:
// ir::kInPlaceTileElements, or fewer where a test sets it (to run many tiles on a small model).
int64_t in_place_tile_elements();
void set_in_place_tile_elements(int64_t elements);  // clamped to [1, ir::kInPlaceTileElements]
// Elements [first, first + count) of a value read in place, as exact numbers, into out[0, count).
template <class A>
void convert_in_place(const A& arith, const Value<A>& source, int64_t first, int64_t count,
                      typename A::Number* out);
// reshape, transpose, slice, concat, broadcast, causal_mask, embed (ops_layout.cpp).
template <class A> Value<A> eval_layout(const A& arith, const ir::Let& let, Operands<A> in);

// fold_trace and fold_vjp (ops_adjoint.cpp, docs/ad.md): `run_layer(l, arguments)` runs the
// callee in layer l's context; the result is the let's tuple.
template <class A>
using LayerRunner =
    std::function<std::vector<Value<A>>(int64_t layer, const std::vector<const Value<A>*>& arguments)>;
template <class A>
Value<A> eval_stacked_fold(const A& arith, const ir::Let& let, int64_t layers,
                           const std::vector<const Value<A>*>& operands, const LayerRunner<A>& run_layer);

// Maps a flat index of `out` to the flat index of an operand broadcast to it (numpy rules:
// shapes right-aligned, a size-1 or missing axis repeats).
class BroadcastMap {
 public:
  BroadcastMap(const Shape& out, const Shape& operand);
  int64_t operator()(int64_t flat) const {
    if (kind_ == Kind::Same) return flat;
    return kind_ == Kind::One ? 0 : general(flat);
  }

 private:
  enum class Kind : uint8_t { Same, One, General };  // the operand's shape is out's; one element
  int64_t general(int64_t flat) const;
  Shape out_;
  std::vector<int64_t> strides_;  // per axis of `out`: the operand's stride, 0 where it repeats
  Kind kind_ = Kind::General;
};

// Runs body(begin, end) over [0, count) in chunks of about `grain`, on the threads of the
// current arena. Callers write each index's result from that index alone, so the bits do not
// depend on the number of threads or on how the range is split.
template <class Body>
void parallel_chunks(int64_t count, int64_t grain, const Body& body) {
  if (count <= grain) {
    if (count > 0) body(int64_t{0}, count);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, grain),
                    [&](const tbb::blocked_range<int64_t>& range) { body(range.begin(), range.end()); });
}

// The axis attribute of a one-axis op, as a non-negative axis of a rank-`rank` value.
int64_t single_axis(const ir::Let& let, int64_t rank);

}  // namespace presk::reference
