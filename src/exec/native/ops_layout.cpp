// Layout ops and embed: values move, no arithmetic. The moved elements keep their storage
// type; a real result then enters its site's type (widened exactly or rounded once).
// causal_mask writes −∞ where j > i.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exec/native/ops.h"
#include "exec/native/ops_chip.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

// A transpose of a whole quantize's result names its codes in their own order (Storage::codes_axes),
// so that a contraction reads them as the quantize laid them out (ops_chip.h: an attention's keys).
Value transpose(const ir::Let& let, const Value& v) {
  const std::vector<size_t> in = strides_of(v.shape);
  std::vector<size_t> strides;
  for (int64_t axis : let.attrs.axes) strides.push_back(in[static_cast<size_t>(axis)]);
  Value out = gather_strided(v, let.type.shape, strides, 0);
  const Storage& from = *v.storage;
  if (v.kind == Value::Kind::real && from.codes && from.codes_axes.empty() && v.offset == 0 && v.shape == from.codes->shape) {
    auto& storage = const_cast<Storage&>(*out.storage);  // made by the gather, held nowhere else yet
    storage.codes = from.codes;
    storage.codes_axes = let.attrs.axes;
  }
  return out;
}

// A slice that is one contiguous run of v's elements (extent 1 before some axis, whole axes
// after it) shares v's storage; any other is gathered.
Value slice(const ir::Let& let, const Value& v) {
  const std::vector<size_t> strides = strides_of(v.shape);
  size_t base = 0;
  for (size_t i = 0; i < let.attrs.axes.size(); ++i) {
    base += static_cast<size_t>(let.attrs.starts[i]) * strides[static_cast<size_t>(let.attrs.axes[i])];
  }
  const std::vector<int64_t>& shape = let.type.shape;
  size_t a = 0;
  while (a < shape.size() && shape[a] == 1) ++a;
  bool contiguous = v.kind != Value::Kind::quantized;
  for (size_t b = a + 1; b < shape.size(); ++b) contiguous = contiguous && shape[b] == v.shape[b];
  if (contiguous) return Value{v.kind, v.type, shape, v.storage, v.offset + base};
  return gather_strided(v, shape, strides, base);
}

Value broadcast(const ir::Let& let, const Value& v) {
  const std::vector<int64_t>& to = let.type.shape;
  const std::vector<size_t> in = strides_of(v.shape);
  std::vector<size_t> strides(to.size(), 0);
  const size_t offset = to.size() - v.shape.size();
  for (size_t a = 0; a < v.shape.size(); ++a) strides[offset + a] = v.shape[a] == 1 ? 0 : in[a];
  return gather_strided(v, to, strides, 0);
}

// Concatenation along `axis`: operands converted to the result's type first (a common type),
// then for each index of the axes before `axis` each part's contiguous run in turn.
Value concat(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const size_t axis = static_cast<size_t>(let.attrs.axes.at(0));
  const std::vector<int64_t>& shape = let.type.shape;
  size_t outer = 1;
  for (size_t a = 0; a < axis; ++a) outer *= static_cast<size_t>(shape[a]);
  std::vector<Value> parts;
  for (const Value* v : operands) parts.push_back(v->kind == Value::Kind::real || v->kind == Value::Kind::quantized ? convert_real(*v, ctx.site) : *v);
  auto storage = std::make_shared<Storage>();
  const Value out{parts[0].kind, parts[0].type, shape, storage, 0};
  auto join = [&](auto member) {
    auto& to = (*storage).*member;
    to.resize(element_count(shape));
    size_t at = 0;
    for (size_t o = 0; o < outer; ++o) {
      for (const Value& v : parts) {
        const size_t row = v.count() / std::max<size_t>(outer, 1);
        const auto& from = (*v.storage).*member;
        std::copy_n(from.begin() + static_cast<long>(v.offset + o * row), row, to.begin() + static_cast<long>(at));
        at += row;
      }
    }
  };
  if (out.kind == Value::Kind::integer) join(&Storage::ints);
  else if (out.kind == Value::Kind::boolean) join(&Storage::bools);
  else if (out.type == RealType::f64) join(&Storage::f64);
  else if (out.type == RealType::f32) join(&Storage::f32);
  else join(&Storage::bf16);
  return out;
}

template <typename C>
Value causal_mask(const ir::Let& let, const Value& v, const OpContext& ctx) {
  Buffer<C> x = load_as<C>(v, ctx.site);
  const size_t rank = v.shape.size();
  const size_t rows = static_cast<size_t>(v.shape[rank - 2]), cols = static_cast<size_t>(v.shape[rank - 1]);
  const C fill = let.attrs.literal.empty() ? -std::numeric_limits<C>::infinity() : C(0);  // literal="0": +0
  for (size_t matrix = 0; matrix < x.size(); matrix += rows * cols) {
    for (size_t i = 0; i < rows; ++i) std::fill(x.data() + matrix + i * cols + std::min(i + 1, cols), x.data() + matrix + (i + 1) * cols, fill);
  }
  return store_as<C>(std::move(x), let.type.shape, ctx.site);
}

Value into_site(const Value& v, const OpContext& ctx) {
  return v.kind == Value::Kind::real || v.kind == Value::Kind::quantized ? convert_real(v, ctx.site) : v;
}

}  // namespace

Value run_layout(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const Value& v = *operands.at(0);
  switch (let.op) {
    case ir::Op::reshape: return into_site(reshaped(v, let.type.shape), ctx);
    case ir::Op::transpose: return into_site(transpose(let, v), ctx);
    case ir::Op::slice: return into_site(slice(let, v), ctx);
    case ir::Op::broadcast: return into_site(broadcast(let, v), ctx);
    case ir::Op::concat: return concat(let, operands, ctx);
    case ir::Op::causal_mask:
      if (ctx.site == RealType::f64) return causal_mask<double>(let, v, ctx);
      return causal_mask<float>(let, v, ctx);
    case ir::Op::causal_mask_at: return run_causal_mask_at(let, operands, ctx);
    case ir::Op::cache_write: return run_cache_write(let, operands, ctx, false);
    default: break;
  }
  user_error("E0623") << "the native executor has no layout op `" << ir::op_name(let.op) << "`";
}

Value run_embed(const ir::Let& let, const Value& table, const Value& index, const OpContext& ctx) {
  const std::vector<int64_t> rows = load_integers(index);
  const size_t row_size = table.count() / static_cast<size_t>(std::max<int64_t>(table.shape[0], 1));
  std::vector<size_t> picks(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= table.shape[0]) {
      user_error("E0624") << "embed index " << rows[i] << " at position " << i << " is outside the table's "
                          << table.shape[0] << " rows";
    }
    picks[i] = static_cast<size_t>(rows[i]);
  }
  return into_site(gather_rows(table, picks, row_size, let.type.shape), ctx);
}

}  // namespace presk::exec::native
