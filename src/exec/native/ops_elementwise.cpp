// Sources, elementwise ops, reductions, normalizations and the loss. Each real op loads its
// operands into the site's compute type (value.h), computes there, and stores into the site's
// type; sums follow the realization's order (ordered_sum).
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "exec/native/contract_driver.h"
#include "exec/native/ops.h"
#include "support/diagnostics.h"

namespace presk::exec::native {

tbb::task_arena& arena_for(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<tbb::task_arena>> arenas;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<tbb::task_arena>& arena = arenas[threads];
  if (!arena) arena = std::make_unique<tbb::task_arena>(threads);
  return *arena;
}

void parallel_chunks(size_t n, int threads, const std::function<void(size_t, size_t)>& f) {
  constexpr size_t kChunk = 8192;
  if (threads <= 1 || n <= kChunk) return f(0, n);
  arena_for(threads).execute([&] {
    tbb::parallel_for(size_t{0}, (n + kChunk - 1) / kChunk, [&](size_t c) { f(c * kChunk, std::min(n, (c + 1) * kChunk)); });
  });
}

template <typename C>
C combine_partials(std::vector<C> p) {
  if (p.empty()) return C(0);
  while (p.size() > 1) {
    std::vector<C> next((p.size() + 1) / 2);
    for (size_t r = 0; r + 1 < p.size(); r += 2) next[r / 2] = p[r] + p[r + 1];
    if (p.size() % 2) next.back() = p.back();
    p = std::move(next);
  }
  return p[0];
}

template <typename C>
C ordered_sum(const C* base, const std::vector<size_t>& offsets, const Order& order) {
  if (offsets.empty()) return C(0);
  if (order.kind != OrderKind::interleaved || order.partials <= 1) {
    C s = base[offsets[0]];
    for (size_t m = 1; m < offsets.size(); ++m) s = s + base[offsets[m]];
    return s;
  }
  const size_t n = static_cast<size_t>(order.partials);
  std::vector<C> partials(std::min(n, offsets.size()));
  for (size_t m = 0; m < offsets.size(); ++m) {
    partials[m % n] = m < n ? base[offsets[m]] : partials[m % n] + base[offsets[m]];
  }
  return combine_partials(std::move(partials));
}

void apply_unary(UnaryFn fn, std::vector<double>& x, const OpContext& ctx) {
  parallel_chunks(x.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f64(fn, x.data() + begin, x.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

void apply_unary(UnaryFn fn, std::vector<float>& x, const OpContext& ctx) {
  parallel_chunks(x.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f32(fn, x.data() + begin, x.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

template double ordered_sum<double>(const double*, const std::vector<size_t>&, const Order&);
template float ordered_sum<float>(const float*, const std::vector<size_t>&, const Order&);
template double combine_partials<double>(std::vector<double>);
template float combine_partials<float>(std::vector<float>);

namespace {

// max/min as IEEE maxNum/minNum (and MPFR): a NaN operand yields the other one; +0 above −0.
template <typename C>
C max_of(C a, C b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a > b) return a;
  if (b > a) return b;
  return std::signbit(a) ? b : a;
}
template <typename C>
C min_of(C a, C b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a < b) return a;
  if (b < a) return b;
  return std::signbit(a) ? a : b;
}

// For each element of `to`, the index of the element of `from` it reads (numpy broadcasting).
std::vector<size_t> broadcast_indices(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  const size_t n = element_count(to), rank = to.size(), offset = rank - from.size();
  const std::vector<size_t> from_strides = strides_of(from);
  std::vector<size_t> stride(rank, 0);
  for (size_t a = 0; a < from.size(); ++a) stride[offset + a] = from[a] == 1 ? 0 : from_strides[a];
  std::vector<size_t> out(n);
  std::vector<int64_t> index(rank, 0);
  size_t position = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = position;
    for (size_t a = rank; a-- > 0;) {
      position += stride[a];
      if (++index[a] < to[a]) break;
      position -= stride[a] * static_cast<size_t>(to[a]);
      index[a] = 0;
    }
  }
  return out;
}

// The common broadcasts without an index list: `from` is `to` with leading axes dropped or
// set to 1 (a row repeated: element i reads i mod |from|), or `to` with trailing axes set to 1
// (each element repeated: element i reads i / (|to| / |from|)).
std::optional<std::pair<size_t, size_t>> simple_broadcast(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  const size_t offset = to.size() - from.size();
  size_t first = 0;
  while (first < from.size() && from[first] == 1) ++first;
  bool suffix = true, prefix = true;
  for (size_t a = first; a < from.size(); ++a) suffix &= from[a] == to[offset + a];
  size_t last = from.size();
  while (last > 0 && from[last - 1] == 1) --last;
  for (size_t a = 0; a < last; ++a) prefix &= from[a] == to[offset + a];
  for (size_t a = 0; a < offset; ++a) prefix &= to[a] == 1;
  const size_t count = element_count(from);
  if (suffix) return std::pair<size_t, size_t>{count, 1};                       // i mod count
  if (prefix) return std::pair<size_t, size_t>{0, element_count(to) / count};   // i / repeat
  return std::nullopt;
}

template <typename E>
std::vector<E> broadcast_to(std::vector<E> values, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return values;
  if (auto simple = simple_broadcast(from, to)) {
    std::vector<E> out(element_count(to));
    if (simple->first) {
      for (size_t base = 0; base < out.size(); base += simple->first) {
        std::copy(values.begin(), values.begin() + static_cast<long>(simple->first), out.begin() + static_cast<long>(base));
      }
    } else {
      for (size_t j = 0; j < values.size(); ++j) {
        std::fill_n(out.begin() + static_cast<long>(j * simple->second), simple->second, values[j]);
      }
    }
    return out;
  }
  std::vector<size_t> indices = broadcast_indices(from, to);
  std::vector<E> out(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) out[i] = values[indices[i]];
  return out;
}

template <typename C>
std::vector<C> operand_as(const Value& v, const std::vector<int64_t>& shape, RealType site) {
  return broadcast_to(load_as<C>(v, site), v.shape, shape);
}

std::optional<UnaryFn> kernel_fn(ir::Op op) {
  switch (op) {
    case ir::Op::exp: return UnaryFn::exp;
    case ir::Op::log: return UnaryFn::log;
    case ir::Op::sqrt: return UnaryFn::sqrt;
    case ir::Op::rsqrt: return UnaryFn::rsqrt;
    case ir::Op::tanh: return UnaryFn::tanh;
    case ir::Op::gelu_tanh: return UnaryFn::gelu_tanh;
    case ir::Op::gelu_erf: return UnaryFn::gelu_erf;
    default: return std::nullopt;
  }
}

// x[i] = f(x[i], y[i]) with the op chosen once, outside the loop.
template <typename C, typename F>
void zip(std::vector<C>& x, const std::vector<C>& y, F f) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = f(x[i], y[i]);
}

template <typename C>
void binary(ir::Op op, std::vector<C>& x, const std::vector<C>& y) {
  switch (op) {
    case ir::Op::add: return zip(x, y, [](C a, C b) { return a + b; });
    case ir::Op::sub: return zip(x, y, [](C a, C b) { return a - b; });
    case ir::Op::mul: return zip(x, y, [](C a, C b) { return a * b; });
    case ir::Op::div: return zip(x, y, [](C a, C b) { return a / b; });
    case ir::Op::max: return zip(x, y, [](C a, C b) { return max_of(a, b); });
    case ir::Op::min: return zip(x, y, [](C a, C b) { return min_of(a, b); });
    default: internal_assert(false && "not a binary op");
  }
}

template <typename C>
C unary(ir::Op op, C x) {
  switch (op) {
    case ir::Op::neg: return -x;
    case ir::Op::abs: return std::fabs(x);
    case ir::Op::relu: return max_of(x, C(0));  // relu(NaN) = 0, as max(NaN, 0)
    case ir::Op::dropout:  // the identity outside training
    case ir::Op::convert: return x;  // the conversion happened in the load
    default: user_error("E0623") << "the native executor does not run `" << ir::op_name(op) << "` yet";
  }
}

template <typename C>
Value elementwise_real(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const std::vector<int64_t>& shape = let.type.shape;
  if (let.op == ir::Op::where) {
    std::vector<uint8_t> cond = broadcast_to(load_booleans(*operands[0]), operands[0]->shape, shape);
    std::vector<C> a = operand_as<C>(*operands[1], shape, ctx.site);
    std::vector<C> b = operand_as<C>(*operands[2], shape, ctx.site);
    for (size_t i = 0; i < a.size(); ++i) a[i] = cond[i] ? a[i] : b[i];
    return store_as<C>(std::move(a), shape, ctx.site);
  }
  std::vector<C> x = operand_as<C>(*operands[0], shape, ctx.site);
  if (operands.size() == 2) {
    binary(let.op, x, operand_as<C>(*operands[1], shape, ctx.site));
  } else if (auto fn = kernel_fn(let.op)) {
    apply_unary(*fn, x, ctx);
  } else {
    for (C& v : x) v = unary(let.op, v);
  }
  return store_as<C>(std::move(x), shape, ctx.site);
}

int64_t integer_op(ir::Op op, int64_t a, int64_t b) {
  switch (op) {
    case ir::Op::add: return a + b;
    case ir::Op::sub: return a - b;
    case ir::Op::mul: return a * b;
    case ir::Op::max: return std::max(a, b);
    case ir::Op::min: return std::min(a, b);
    case ir::Op::neg: return -a;
    case ir::Op::abs: return a < 0 ? -a : a;
    default: user_error("E0623") << "the native executor has no integer `" << ir::op_name(op) << "`";
  }
}

Value elementwise_integer(const ir::Let& let, const std::vector<const Value*>& operands) {
  const std::vector<int64_t>& shape = let.type.shape;
  std::vector<int64_t> x = broadcast_to(load_integers(*operands.back()), operands.back()->shape, shape);
  if (let.op == ir::Op::where) {
    std::vector<uint8_t> cond = broadcast_to(load_booleans(*operands[0]), operands[0]->shape, shape);
    std::vector<int64_t> a = broadcast_to(load_integers(*operands[1]), operands[1]->shape, shape);
    for (size_t i = 0; i < x.size(); ++i) x[i] = cond[i] ? a[i] : x[i];
  } else if (operands.size() == 2) {
    std::vector<int64_t> a = broadcast_to(load_integers(*operands[0]), operands[0]->shape, shape);
    for (size_t i = 0; i < x.size(); ++i) x[i] = integer_op(let.op, a[i], x[i]);
  } else {
    for (int64_t& v : x) v = integer_op(let.op, v, 0);
  }
  return make_integers(std::move(x), shape);
}

// Comparisons compare the stored values exactly (both widened to f64).
Value comparison(const ir::Let& let, const std::vector<const Value*>& operands) {
  const std::vector<int64_t>& shape = let.type.shape;
  std::vector<double> a = broadcast_to(load_f64(*operands[0]), operands[0]->shape, shape);
  std::vector<double> b = broadcast_to(load_f64(*operands[1]), operands[1]->shape, shape);
  std::vector<uint8_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    switch (let.op) {
      case ir::Op::lt: out[i] = a[i] < b[i]; break;
      case ir::Op::le: out[i] = a[i] <= b[i]; break;
      case ir::Op::gt: out[i] = a[i] > b[i]; break;
      case ir::Op::ge: out[i] = a[i] >= b[i]; break;
      case ir::Op::eq: out[i] = a[i] == b[i]; break;
      default: out[i] = a[i] != b[i]; break;
    }
  }
  return make_booleans(std::move(out), shape);
}

}  // namespace

Value run_literal(const ir::Let& let, const OpContext& ctx) {
  const std::string& text = let.attrs.literal;
  const size_t n = element_count(let.type.shape);
  if (let.type.kind == ir::ElemKind::Int) return make_integers(std::vector<int64_t>(n, std::stoll(text)), let.type.shape);
  if (let.type.kind == ir::ElemKind::Bool) return make_booleans(std::vector<uint8_t>(n, text == "true" || text == "1"), let.type.shape);
  // The decimal rounded once to f64 or f32 (strtod/strtof are correctly rounded); bf16: the
  // f64 value rounded once to bf16.
  if (ctx.site == RealType::f64) return store_f64(std::vector<double>(n, std::strtod(text.c_str(), nullptr)), let.type.shape);
  const float value = ctx.site == RealType::f32 ? std::strtof(text.c_str(), nullptr)
                                                : from_bf16(to_bf16(std::strtod(text.c_str(), nullptr)));
  return store_f32(std::vector<float>(n, value), let.type.shape, ctx.site);
}

Value run_iota(const ir::Let& let) {
  const std::vector<int64_t>& shape = let.type.shape;
  const size_t axis = static_cast<size_t>(let.attrs.axes.at(0));
  const std::vector<size_t> strides = strides_of(shape);
  std::vector<int64_t> out(element_count(shape));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>((i / strides[axis]) % static_cast<size_t>(shape[axis]));
  return make_integers(std::move(out), shape);
}

Value run_elementwise(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  switch (let.op) {
    case ir::Op::lt: case ir::Op::le: case ir::Op::gt: case ir::Op::ge: case ir::Op::eq: case ir::Op::ne:
      return comparison(let, operands);
    default: break;
  }
  if (let.type.kind == ir::ElemKind::Int) return elementwise_integer(let, operands);
  if (let.type.kind == ir::ElemKind::Bool) {
    user_error("E0623") << "the native executor has no boolean `" << ir::op_name(let.op) << "`";
  }
  if (ctx.site == RealType::f64) return elementwise_real<double>(let, operands, ctx);
  return elementwise_real<float>(let, operands, ctx);
}

}  // namespace presk::exec::native
