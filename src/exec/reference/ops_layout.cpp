// The layout ops (reshape, transpose, slice, concat, broadcast, causal_mask) and embed: values
// move, exactly; no arithmetic. Each is defined by where output element o comes from: a source
// (operand k, flat index i), or, for causal_mask above the diagonal, −∞.
#include <string>

#include "exec/reference/arith_ball.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/ops.h"
#include "support/diagnostics.h"

namespace presk::reference {
namespace {

struct Source {
  int operand = 0;    // -1: the constant −∞, -2: the constant +0 (causal_mask)
  int64_t index = 0;  // flat index in that operand
};

Shape unflatten(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

int64_t flatten(const Shape& index, const Shape& strides) {
  int64_t flat = 0;
  for (size_t i = 0; i < index.size(); ++i) flat += index[i] * strides[i];
  return flat;
}

// Builds the output of `type` element by element from `source(o)`.
template <class A, class SourceOf>
Value<A> gather(const A& a, const ir::Type& type, Operands<A> in, const SourceOf& source) {
  if (type.kind != ir::ElemKind::Real) {
    Value<A> out = Value<A>::make_integer(type.kind, type.shape);
    for (int64_t o = 0; o < out.size(); ++o) {
      Source s = source(o);
      out.integers[o] = in[s.operand]->integers[s.index];
    }
    return out;
  }
  Value<A> out = Value<A>::make_real(a, type.shape);
  parallel_chunks(out.size(), 2048, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      Source s = source(o);
      if (s.operand == -1) a.set_neg_inf(out.real(o));
      else if (s.operand == -2) a.set_zero(out.real(o));
      else a.set(out.real(o), in[s.operand]->real(s.index));
    }
  });
  return out;
}

// transpose: result axis i is operand axis perm[i].
template <class A>
Value<A> transpose(const A& a, const ir::Let& let, Operands<A> in) {
  const Shape strides = row_major_strides(in[0]->shape), out_strides = row_major_strides(let.type.shape);
  const Shape& shape = let.type.shape;
  const std::vector<int64_t>& perm = let.attrs.axes;
  return gather(a, let.type, in, [&](int64_t o) {  // no Shape an element: index i = (o / stride) % extent
    int64_t flat = 0;
    for (size_t i = 0; i < shape.size(); ++i) flat += (o / out_strides[i]) % shape[i] * strides[perm[i]];
    return Source{0, flat};
  });
}

// slice: along each attrs.axes[k], the half-open range [starts[k], stops[k]).
template <class A>
Value<A> slice(const A& a, const ir::Let& let, Operands<A> in) {
  Shape strides = row_major_strides(in[0]->shape);
  Shape offset(strides.size(), 0);
  for (size_t k = 0; k < let.attrs.axes.size(); ++k) {
    int64_t axis = let.attrs.axes[k];
    if (axis < 0) axis += static_cast<int64_t>(strides.size());
    offset[axis] = let.attrs.starts[k];
  }
  return gather(a, let.type, in, [&](int64_t o) {
    Shape index = unflatten(o, let.type.shape);
    for (size_t i = 0; i < index.size(); ++i) index[i] += offset[i];
    return Source{0, flatten(index, strides)};
  });
}

// concat: the operands one after another along the axis.
template <class A>
Value<A> concat(const A& a, const ir::Let& let, Operands<A> in) {
  int64_t axis = single_axis(let, let.type.rank());
  return gather(a, let.type, in, [&](int64_t o) {
    Shape index = unflatten(o, let.type.shape);
    int operand = 0;
    while (index[axis] >= in[operand]->shape[axis]) index[axis] -= in[operand++]->shape[axis];
    return Source{operand, flatten(index, row_major_strides(in[operand]->shape))};
  });
}

// causal_mask: over the last two axes [i, j], x where j ≤ i, −∞ where j > i (+0 with
// literal="0").
template <class A>
Value<A> causal_mask(const A& a, const ir::Let& let, Operands<A> in) {
  const Shape& shape = let.type.shape;
  int64_t rows = shape[shape.size() - 2], columns = shape.back();
  const int fill = let.attrs.literal.empty() ? -1 : -2;
  return gather(a, let.type, in, [&](int64_t o) {
    int64_t j = o % columns, i = (o / columns) % rows;
    return j > i ? Source{fill, 0} : Source{0, o};
  });
}

// causal_mask_at(x, at): over the last two axes [i, j], x where j ≤ at + i, −∞ where j > at + i.
template <class A>
Value<A> causal_mask_at(const A& a, const ir::Let& let, Operands<A> in) {
  const Shape& shape = let.type.shape;
  const int64_t rows = shape[shape.size() - 2], columns = shape.back(), at = in[1]->integers.at(0);
  return gather(a, let.type, in, [&](int64_t o) {
    int64_t j = o % columns, i = (o / columns) % rows;
    return j - i > at ? Source{-1, 0} : Source{0, o};
  });
}

// cache_write(cache, rows, at) along attrs.axes[0]: the cache, positions at … at+n−1 of that
// axis taken from the rows. A position outside the cache is E1501.
template <class A>
Value<A> cache_write(const A& a, const ir::Let& let, Operands<A> in) {
  const int64_t axis = single_axis(let, let.type.rank()), at = in[2]->integers.at(0);
  const int64_t extent = in[0]->shape[axis], n = in[1]->shape[axis];
  if (at < 0 || at > extent - n) {
    user_error("E1501", let.span).hint("a decode step's position lies in [0, T − rows]: generate at most T tokens")
        << "cache_write at position " << at << " of " << n << " row(s) does not fit the cache's " << extent
        << " positions";
  }
  const Shape rows_strides = row_major_strides(in[1]->shape);
  return gather(a, let.type, in, [&](int64_t o) {
    Shape index = unflatten(o, let.type.shape);
    if (index[axis] < at || index[axis] >= at + n) return Source{0, o};
    index[axis] -= at;
    return Source{1, flatten(index, rows_strides)};
  });
}

// embed(table : R[N, …], index : Z[…]) → rows of the table: out[p, q] = table[index[p], q].
template <class A>
Value<A> embed(const A& a, const ir::Let& let, Operands<A> in) {
  const Value<A>& table = *in[0];
  const Value<A>& index = *in[1];
  int64_t rows = table.shape.at(0), row_size = table.size() / rows;
  for (int64_t p = 0; p < index.size(); ++p) {
    int64_t row = index.integers[p];
    if (row < 0 || row >= rows) {
      user_error("E0505", let.span).hint("token values must lie in [0, rows of the table)")
          << "embed index " << row << " at position " << p << " is outside the table's " << rows
          << " rows";
    }
  }
  if (table.is_in_place()) {  // only the rows gathered are converted (ops_in_place.cpp)
    Value<A> out = Value<A>::make_real(a, let.type.shape);
    parallel_chunks(index.size(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) convert_in_place(a, table, index.integers[p] * row_size, row_size, out.real(p * row_size));
    });
    return out;
  }
  return gather(a, let.type, in, [&](int64_t o) {
    return Source{0, index.integers[o / row_size] * row_size + o % row_size};
  });
}

}  // namespace

template <class A>
Value<A> eval_layout(const A& arith, const ir::Let& let, Operands<A> in) {
  switch (let.op) {
    case ir::Op::reshape:  // the same elements in row-major order
      return gather(arith, let.type, in, [](int64_t o) { return Source{0, o}; });
    case ir::Op::broadcast: {
      BroadcastMap at(let.type.shape, in[0]->shape);
      return gather(arith, let.type, in, [&](int64_t o) { return Source{0, at(o)}; });
    }
    case ir::Op::transpose: return transpose(arith, let, in);
    case ir::Op::slice: return slice(arith, let, in);
    case ir::Op::concat: return concat(arith, let, in);
    case ir::Op::causal_mask: return causal_mask(arith, let, in);
    case ir::Op::causal_mask_at: return causal_mask_at(arith, let, in);
    case ir::Op::cache_write: return cache_write(arith, let, in);
    case ir::Op::embed: return embed(arith, let, in);
    default: internal_assert(false && "not a layout op");
  }
  return {};
}

template Value<MpfrArith> eval_layout(const MpfrArith&, const ir::Let&, Operands<MpfrArith>);
template Value<BallArith> eval_layout(const BallArith&, const ir::Let&, Operands<BallArith>);

}  // namespace presk::reference
