// Sources, elementwise ops, reductions, normalizations and the loss. Each real op loads its
// operands into the site's compute type (value.h), computes there, and stores into the site's
// type; sums follow the realization's order (ordered_sum).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "exec/native/contract_driver.h"
#include "exec/native/convert.h"
#include "exec/native/ops.h"
#include "ir/integer_overflow.h"
#include "support/diagnostics.h"
#include "support/exact_real.h"

namespace presk::exec::native {

void parallel_chunks(size_t n, int threads, const std::function<void(size_t, size_t)>& f) {
  constexpr size_t kChunk = 8192;
  if (threads <= 1 || n <= kChunk) return f(0, n);
  for_each_task((n + kChunk - 1) / kChunk, threads, [&](size_t c) { f(c * kChunk, std::min(n, (c + 1) * kChunk)); });
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

void apply_unary(UnaryFn fn, Buffer<double>& x, const OpContext& ctx) {
  parallel_chunks(x.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f64(fn, x.data() + begin, x.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

void apply_unary(UnaryFn fn, Buffer<float>& x, const OpContext& ctx) {
  parallel_chunks(x.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f32(fn, x.data() + begin, x.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

void apply_unary(UnaryFn fn, const double* from, Buffer<double>& to, const OpContext& ctx) {
  parallel_chunks(to.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f64(fn, from + begin, to.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

void apply_unary(UnaryFn fn, const float* from, Buffer<float>& to, const OpContext& ctx) {
  parallel_chunks(to.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    unary_f32(fn, from + begin, to.data() + begin, end - begin, ctx.options.force_scalar);
  });
}

template double ordered_sum<double>(const double*, const std::vector<size_t>&, const Order&);
template float ordered_sum<float>(const float*, const std::vector<size_t>&, const Order&);
template double combine_partials<double>(std::vector<double>);
template float combine_partials<float>(std::vector<float>);

// The four arithmetic ops over runs, compiled for AVX-512, AVX2 and the baseline (GCC's
// target_clones picks one when the program loads): IEEE add, sub, mul and div round alike on
// each, and -ffp-contract=off keeps them unfused, so every clone gives the same bits.
// out[i] = a[i] op b[i] for i < n, or a[i] op b[0] when `one` (out may alias a).
template <typename C>
[[gnu::always_inline]] inline void arith_body(Arith op, C* out, const C* a, const C* b, bool one, size_t n) {
  const C y = b[0];
  switch (op) {
    case Arith::add: if (one) { for (size_t i = 0; i < n; ++i) out[i] = a[i] + y; } else { for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i]; } break;
    case Arith::sub: if (one) { for (size_t i = 0; i < n; ++i) out[i] = a[i] - y; } else { for (size_t i = 0; i < n; ++i) out[i] = a[i] - b[i]; } break;
    case Arith::mul: if (one) { for (size_t i = 0; i < n; ++i) out[i] = a[i] * y; } else { for (size_t i = 0; i < n; ++i) out[i] = a[i] * b[i]; } break;
    case Arith::div: if (one) { for (size_t i = 0; i < n; ++i) out[i] = a[i] / y; } else { for (size_t i = 0; i < n; ++i) out[i] = a[i] / b[i]; } break;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void arith_run(Arith op, float* out, const float* a, const float* b, bool one, size_t n) { arith_body(op, out, a, b, one, n); }
__attribute__((target_clones("avx512f", "avx2", "default")))
void arith_run(Arith op, double* out, const double* a, const double* b, bool one, size_t n) { arith_body(op, out, a, b, one, n); }

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

template <typename Vector>
Vector broadcast_to(Vector values, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return values;
  if (auto simple = simple_broadcast(from, to)) {
    Vector out(element_count(to));
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
  Vector out(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) out[i] = values[indices[i]];
  return out;
}

// How an operand of shape `from` is read for each element i of a result of shape `to`:
// element i (same), i mod period (rows), i / period (repeat), or indices[i] (general).
struct Broadcast {
  enum class Kind : uint8_t { same, rows, repeat, general };
  Kind kind = Kind::same;
  size_t period = 0;
  std::vector<size_t> indices;
};

Broadcast plan_broadcast(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  Broadcast plan;
  const size_t n = element_count(to);
  if (n == 0 || element_count(from) == n) return plan;  // only extents of 1 differ: the identity
  if (auto simple = simple_broadcast(from, to)) {
    plan.kind = simple->first ? Broadcast::Kind::rows : Broadcast::Kind::repeat;
    plan.period = simple->first ? simple->first : simple->second;
    return plan;
  }
  plan.kind = Broadcast::Kind::general;
  plan.indices = broadcast_indices(from, to);
  return plan;
}

// out[i] = f(a[i], b read by `plan`) for i < n; out may alias a.
template <typename C, typename F>
void zip_into(C* out, const C* a, size_t n, const C* b, const Broadcast& plan, F f) {
  switch (plan.kind) {
    case Broadcast::Kind::same:
      for (size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
      break;
    case Broadcast::Kind::rows:
      if (plan.period == 1) {  // a scalar: one value for every element, a loop that vectorizes
        const C y = b[0];
        for (size_t i = 0; i < n; ++i) out[i] = f(a[i], y);
        break;
      }
      for (size_t base = 0; base < n; base += plan.period) {
        for (size_t j = 0; j < plan.period; ++j) out[base + j] = f(a[base + j], b[j]);
      }
      break;
    case Broadcast::Kind::repeat:
      for (size_t j = 0, base = 0; base < n; ++j, base += plan.period) {
        const C y = b[j];
        for (size_t r = 0; r < plan.period; ++r) out[base + r] = f(a[base + r], y);
      }
      break;
    case Broadcast::Kind::general:
      for (size_t i = 0; i < n; ++i) out[i] = f(a[i], b[plan.indices[i]]);
      break;
  }
}

// out[i] = b read by `plan`, for i < n.
template <typename C>
void broadcast_into(C* out, size_t n, const C* b, const Broadcast& plan) {
  zip_into(out, out, n, b, plan, [](C, C y) { return y; });
}

// Operand `v` in the site's compute type, read in place where it can be, with its plan onto `to`.
template <typename C>
struct Operand {
  Loaded<C> loaded;
  Broadcast plan;
};

template <typename C>
Operand<C> operand_of(const Value& v, const std::vector<int64_t>& to, RealType site) {
  return Operand<C>{view_as<C>(v, site), plan_broadcast(v.shape, to)};
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
    case ir::Op::gelu_tanh_grad: return UnaryFn::gelu_tanh_grad;
    case ir::Op::gelu_erf_grad: return UnaryFn::gelu_erf_grad;
    case ir::Op::erf: return UnaryFn::erf;
    case ir::Op::erf_grad: return UnaryFn::erf_grad;
    default: return std::nullopt;
  }
}

std::optional<Arith> arith_of(ir::Op op) {
  switch (op) {
    case ir::Op::add: return Arith::add;
    case ir::Op::sub: return Arith::sub;
    case ir::Op::mul: return Arith::mul;
    case ir::Op::div: return Arith::div;
    default: return std::nullopt;
  }
}

// out[i] = a[i] op b[…] with the op chosen once, outside the loop; out may alias a.
template <typename C>
void binary(ir::Op op, C* out, const C* a, size_t n, const Operand<C>& b) {
  const C* y = b.loaded.data;
  const std::optional<Arith> arith = arith_of(op);
  if (arith && n > 0 && b.plan.kind != Broadcast::Kind::general) {
    const size_t period = b.plan.period;
    switch (b.plan.kind) {
      case Broadcast::Kind::same: return arith_run(*arith, out, a, y, false, n);
      case Broadcast::Kind::rows:
        if (period == 1) return arith_run(*arith, out, a, y, true, n);  // a scalar
        for (size_t base = 0; base < n; base += period) arith_run(*arith, out + base, a + base, y, false, period);
        return;
      case Broadcast::Kind::repeat:
        for (size_t j = 0, base = 0; base < n; ++j, base += period) arith_run(*arith, out + base, a + base, y + j, true, period);
        return;
      case Broadcast::Kind::general: break;
    }
  }
  switch (op) {
    case ir::Op::add: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return p + q; });
    case ir::Op::sub: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return p - q; });
    case ir::Op::mul: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return p * q; });
    case ir::Op::div: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return p / q; });
    case ir::Op::max: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return max_of(p, q); });
    case ir::Op::min: return zip_into(out, a, n, y, b.plan, [](C p, C q) { return min_of(p, q); });
    default: internal_assert(false && "not a binary op");
  }
}

// binary() over chunks on up to `threads` workers; a chunk starts at a multiple of the plan's
// period, so each reads its operand by the same plan from a shifted start.
template <typename C>
void binary_chunked(ir::Op op, C* out, const C* a, size_t n, const Operand<C>& b, int threads) {
  constexpr size_t kChunk = 16384;
  const Broadcast::Kind kind = b.plan.kind;
  const size_t period = kind == Broadcast::Kind::same ? 1 : b.plan.period;
  if (threads <= 1 || n < 2 * kChunk || kind == Broadcast::Kind::general || period == 0) return binary(op, out, a, n, b);
  const size_t chunk = std::max<size_t>(1, kChunk / period) * period;
  for_each_task((n + chunk - 1) / chunk, threads, [&](size_t task) {
    const size_t begin = task * chunk, count = std::min(chunk, n - begin);
    Operand<C> part;
    part.plan = b.plan;
    part.loaded.data = b.loaded.data + (kind == Broadcast::Kind::same ? begin : kind == Broadcast::Kind::repeat ? begin / period : 0);
    binary(op, out + begin, a + begin, count, part);
  });
}

// x rounded to the nearest integer, ties to even (independent of the FPU's rounding mode).
template <typename C>
C nearest_integer(C x) {
  const C below = std::floor(x), fraction = x - below;  // exact
  if (fraction != C(0.5)) return fraction < C(0.5) ? below : below + 1;
  return std::fmod(below, C(2)) == 0 ? below : below + 1;
}

// x rounded to the nearest number of a format of `precision` significant bits, smallest quantum
// 2^`quantum_min` and largest finite number below 2^`exponent_max` (binary16: 11, −24, 16;
// bfloat16: 8, −133, 128), ties to even, ±∞ beyond: one rounding of the binary64 value.
inline double to_format(double x, int precision, int quantum_min, int exponent_max) {
  if (!std::isfinite(x) || x == 0) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // x = m·2^exponent, ½ ≤ |m| < 1
  const int quantum = std::max(exponent - precision, quantum_min);
  const double y = std::ldexp(nearest_integer(std::ldexp(x, -quantum)), quantum);
  int y_exponent = 0;
  std::frexp(y, &y_exponent);
  return y_exponent > exponent_max ? std::copysign(HUGE_VAL, x) : y;
}

template <typename C>
C unary(ir::Op op, C x) {
  switch (op) {
    case ir::Op::sin: return static_cast<C>(std::sin(static_cast<double>(x)));
    case ir::Op::cos: return static_cast<C>(std::cos(static_cast<double>(x)));
    case ir::Op::atan: return static_cast<C>(std::atan(static_cast<double>(x)));
    case ir::Op::round: return nearest_integer(x);
    case ir::Op::floor: return std::floor(x);
    case ir::Op::ceil: return std::ceil(x);
    case ir::Op::round_f16: return static_cast<C>(to_format(static_cast<double>(x), 11, -24, 16));
    case ir::Op::round_bf16: return static_cast<C>(to_format(static_cast<double>(x), 8, -133, 128));
    case ir::Op::neg: return -x;
    case ir::Op::abs: return std::fabs(x);
    case ir::Op::relu: return max_of(x, C(0));  // relu(NaN) = 0, as max(NaN, 0)
    case ir::Op::convert: return x;  // the conversion happened in the load
    default: user_error("E0623") << "the native executor does not run `" << ir::op_name(op) << "` yet";
  }
}

// dropout in a training run: x_i / d where the mask keeps element i, +0 where it drops it;
// d = 1 − rate rounded once to binary64, then (f32 and bf16 sites) once to f32; the quotient
// is one rounding in the compute type. The mask is the reference's (support/dropout_mask.h).
// out[j] = kept[j] ? a[j] / d : +0 for j < n (out may be a): one IEEE division a lane, the
// same bits on every clone.
template <typename C>
[[gnu::always_inline]] inline void masked_quotients(const C* a, const uint8_t* kept, C d, size_t n, C* out) {
  using U = std::conditional_t<std::is_same_v<C, double>, uint64_t, uint32_t>;
  for (size_t j = 0; j < n; ++j) {  // the quotient's bits, or all zero (+0): branch-free, so vectorized
    out[j] = std::bit_cast<C>(std::bit_cast<U>(a[j] / d) & (U{0} - static_cast<U>(kept[j])));
  }
}
__attribute__((target_clones("avx512f", "avx2", "default")))
void masked_quotients_f32(const float* a, const uint8_t* kept, float d, size_t n, float* out) { masked_quotients(a, kept, d, n, out); }
__attribute__((target_clones("avx512f", "avx2", "default")))
void masked_quotients_f64(const double* a, const uint8_t* kept, double d, size_t n, double* out) { masked_quotients(a, kept, d, n, out); }

// x (a, or x itself) with the dropout mask applied; outside training x = a.
template <typename C>
void apply_dropout(const ir::Let& let, const C* a, Buffer<C>& x, const OpContext& ctx) {
  if (!ctx.options.training) {  // the identity outside training
    if (a != x.data()) std::copy(a, a + x.size(), x.begin());
    return;
  }
  const random::DropoutMask mask(*ctx.options.training, let.attrs.path, ctx.module_path, ctx.layers, let.attrs.rate);
  const C divisor = static_cast<C>(1.0 - let.attrs.rate);
  uint8_t kept[4096];
  for (size_t i0 = 0; i0 < x.size(); i0 += sizeof kept) {
    const size_t n = std::min(sizeof kept, x.size() - i0);
    mask.keep_run(i0, n, kept);
    if constexpr (std::is_same_v<C, double>) masked_quotients_f64(a + i0, kept, divisor, n, x.data() + i0);
    else masked_quotients_f32(a + i0, kept, divisor, n, x.data() + i0);
  }
}

// where(cond, a, b): a[i] where cond[i], else b[i].
template <typename C>
Value where_real(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const std::vector<int64_t>& shape = let.type.shape;
  const std::vector<uint8_t> cond = broadcast_to(load_booleans(*operands[0]), operands[0]->shape, shape);
  const Operand<C> a = operand_of<C>(*operands[1], shape, ctx.site);
  const Operand<C> b = operand_of<C>(*operands[2], shape, ctx.site);
  if (a.plan.kind == Broadcast::Kind::same && b.plan.kind == Broadcast::Kind::rows && b.plan.period == 1) {
    Buffer<C> x(cond.size());  // where(cond, a, scalar): one pass (the adjoint of causal_mask)
    C* __restrict out = x.data();
    const C* __restrict kept_value = a.loaded.data;
    const uint8_t* __restrict kept = cond.data();
    const C other = b.loaded.data[0];
    for (size_t i = 0; i < x.size(); ++i) out[i] = kept[i] ? kept_value[i] : other;
    return store_as<C>(std::move(x), shape, ctx.site, ctx.options.threads);
  }
  Buffer<C> x(cond.size()), y(cond.size());
  broadcast_into(x.data(), x.size(), a.loaded.data, a.plan);
  broadcast_into(y.data(), y.size(), b.loaded.data, b.plan);
  C* __restrict out = x.data();
  const C* __restrict other = y.data();
  const uint8_t* __restrict kept = cond.data();
  for (size_t i = 0; i < x.size(); ++i) out[i] = kept[i] ? out[i] : other[i];  // a blend, not a branch
  return store_as<C>(std::move(x), shape, ctx.site, ctx.options.threads);
}

// Operand 0's storage, to be written over, where it dies here (OpContext), nothing else holds
// it, and it is exactly a C value of the result's shape; else an empty buffer.
template <typename C>
Buffer<C> reusable_storage(const Value& v, const std::vector<int64_t>& shape, const OpContext& ctx) {
  constexpr RealType type = std::is_same_v<C, double> ? RealType::f64 : RealType::f32;
  if (!ctx.first_operand_dies || v.kind != Value::Kind::real || v.type != type || ctx.site != type ||
      v.offset != 0 || v.shape != shape || v.storage.use_count() != 1) {
    return {};
  }
  Storage& storage = const_cast<Storage&>(*v.storage);  // made mutable by make_shared; its one holder lets go
  Buffer<C>* held = nullptr;
  if constexpr (std::is_same_v<C, double>) held = &storage.f64;
  else held = &storage.f32;
  return held->size() == element_count(shape) ? std::move(*held) : Buffer<C>{};
}

// A bf16 site's op, tile by tile: each tile of operand 0 (and of an unbroadcast operand 1)
// widened into an L1-sized buffer, computed in f32, rounded into the bf16 result. Each element
// gets the bits of widening, computing and rounding whole arrays (load_f32, the op, store_f32),
// with one pass over memory instead of three or four. Operand 0 must not be broadcast and
// operand 1 not by an index list; dropout and where keep the whole-array path (std::nullopt).
std::optional<Value> elementwise_bf16_tiles(const ir::Let& let, const std::vector<const Value*>& operands,
                                            const OpContext& ctx) {
  constexpr size_t kTile = 2048;
  const size_t n = element_count(let.type.shape);
  if (ctx.site != RealType::bf16 || let.op == ir::Op::where || let.op == ir::Op::dropout || operands.empty() ||
      operands.size() > 2 || operands[0]->count() != n || n == 0) {
    return std::nullopt;
  }
  const bool two = operands.size() == 2;
  const Broadcast plan = two ? plan_broadcast(operands[1]->shape, let.type.shape) : Broadcast{};
  if (plan.kind == Broadcast::Kind::general) return std::nullopt;
  const size_t period = plan.kind == Broadcast::Kind::same ? 1 : plan.period;
  Loaded<float> small;  // a broadcast operand 1, widened once
  if (two && plan.kind != Broadcast::Kind::same) small = view_as<float>(*operands[1], ctx.site);
  // Tile t: [begin, begin + count), reading operand 1 by `part` (a period longer than a tile
  // is cut into tiles that each lie within one period).
  const size_t per_block = period > kTile ? (period + kTile - 1) / kTile : 1;
  const size_t tile = period > kTile ? kTile : kTile / period * period;
  const size_t tiles = period > kTile ? n / period * per_block : (n + tile - 1) / tile;
  auto storage = std::make_shared<Storage>();
  storage->bf16.resize(n);
  auto run_tile = [&](size_t t, float* x, float* y) {
    size_t begin = t * tile, count = std::min(tile, n - begin);
    Operand<float> part;
    part.plan = plan;
    if (period > kTile) {  // within block t / per_block, one period long
      const size_t block = t / per_block, within = t % per_block * kTile;
      begin = block * period + within, count = std::min(kTile, period - within);
      part.plan.kind = plan.kind == Broadcast::Kind::rows ? Broadcast::Kind::same : Broadcast::Kind::rows;
      part.plan.period = 1;
      part.loaded.data = small.data + (plan.kind == Broadcast::Kind::rows ? within : block);
    } else if (two && plan.kind != Broadcast::Kind::same) {
      part.loaded.data = small.data + (plan.kind == Broadcast::Kind::repeat ? begin / period : 0);
    } else if (two) {
      load_f32_range(*operands[1], ctx.site, begin, count, y);
      part.loaded.data = y;
    }
    load_f32_range(*operands[0], ctx.site, begin, count, x);
    if (two) {
      binary(let.op, x, x, count, part);
    } else if (auto fn = kernel_fn(let.op)) {
      unary_f32(*fn, x, x, count, ctx.options.force_scalar);
    } else {
      for (size_t i = 0; i < count; ++i) x[i] = unary(let.op, x[i]);
    }
    round_to_bf16(x, storage->bf16.data() + begin, count);
  };
  constexpr size_t kTilesPerTask = 8;
  const size_t tasks = ctx.options.threads > 1 ? (tiles + kTilesPerTask - 1) / kTilesPerTask : 1;
  for_each_task(tasks, ctx.options.threads, [&](size_t task) {
    alignas(64) float x[kTile], y[kTile];
    const size_t first = tasks == 1 ? 0 : task * kTilesPerTask, last = tasks == 1 ? tiles : std::min(tiles, first + kTilesPerTask);
    for (size_t t = first; t < last; ++t) run_tile(t, x, y);
  });
  return Value{Value::Kind::real, RealType::bf16, let.type.shape, std::move(storage), 0};
}

template <typename C>
Value elementwise_real(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const std::vector<int64_t>& shape = let.type.shape;
  if (let.op == ir::Op::where) return where_real<C>(let, operands, ctx);
  Buffer<C> reused = let.op == ir::Op::dropout ? Buffer<C>{} : reusable_storage<C>(*operands[0], shape, ctx);
  if (!reused.empty()) {  // x op= y in place (every kernel allows out == a)
    C* x = reused.data();
    if (operands.size() == 2) {
      binary_chunked(let.op, x, x, reused.size(), operand_of<C>(*operands[1], shape, ctx.site), ctx.options.threads);
    } else if (auto fn = kernel_fn(let.op)) {
      apply_unary(*fn, reused, ctx);
    } else {
      for (size_t i = 0; i < reused.size(); ++i) x[i] = unary(let.op, x[i]);
    }
    return store_as<C>(std::move(reused), shape, ctx.site, ctx.options.threads);
  }
  const Operand<C> first = operand_of<C>(*operands[0], shape, ctx.site);
  Buffer<C> x(element_count(shape));
  const bool in_place = first.plan.kind == Broadcast::Kind::same;  // read operand 0 where it lies
  const C* a = first.loaded.data;
  if (!in_place) {
    broadcast_into(x.data(), x.size(), a, first.plan);
    a = x.data();
  }
  if (let.op == ir::Op::dropout) {
    apply_dropout(let, a, x, ctx);
  } else if (operands.size() == 2) {
    binary_chunked(let.op, x.data(), a, x.size(), operand_of<C>(*operands[1], shape, ctx.site), ctx.options.threads);
  } else if (auto fn = kernel_fn(let.op)) {
    apply_unary(*fn, a, x, ctx);
  } else {
    for (size_t i = 0; i < x.size(); ++i) x[i] = unary(let.op, a[i]);
  }
  return store_as<C>(std::move(x), shape, ctx.site, ctx.options.threads);
}

// Z arithmetic is exact: a result outside int64's range is the user error E0670 (the
// reference raises E0550 for the same lets), never a wrapped value.
int64_t integer_op(const ir::Let& let, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = false;
  switch (let.op) {
    case ir::Op::add: overflow = __builtin_add_overflow(a, b, &r); break;
    case ir::Op::sub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case ir::Op::mul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case ir::Op::max: return std::max(a, b);
    case ir::Op::min: return std::min(a, b);
    case ir::Op::relu: return std::max<int64_t>(a, 0);
    case ir::Op::neg: overflow = __builtin_sub_overflow(int64_t{0}, a, &r); break;
    case ir::Op::abs: overflow = __builtin_sub_overflow(int64_t{0}, a, &r), r = a < 0 ? r : a; break;
    default: user_error("E0623") << "the native executor has no integer `" << ir::op_name(let.op) << "`";
  }
  if (overflow) {
    const bool unary = let.operands.size() == 1;
    const std::string operation = "`" + std::string(ir::op_name(let.op)) + "` of " + std::to_string(a) +
                                  (unary ? "" : " and " + std::to_string(b));
    const ir::IntegerOverflowText text = ir::integer_overflow_text(let, operation);
    user_error("E0670", let.span).hint(text.hint) << text.message;
  }
  return r;
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
    for (size_t i = 0; i < x.size(); ++i) x[i] = integer_op(let, a[i], x[i]);
  } else {
    for (int64_t& v : x) v = integer_op(let, v, 0);
  }
  return make_integers(std::move(x), shape);
}

// out[i] = a[i] op b[i], the op chosen once, outside the loop (restrict pointers: a byte
// store may alias anything, which would otherwise keep the loop scalar).
template <typename E>
std::vector<uint8_t> compare(ir::Op op, const E& a, const E& b) {
  std::vector<uint8_t> out(a.size());
  auto each = [n = out.size(), o = out.data(), x = a.data(), y = b.data()](auto predicate) {
    uint8_t* __restrict to = o;
    const auto* __restrict first = x;
    const auto* __restrict second = y;
    for (size_t i = 0; i < n; ++i) to[i] = predicate(first[i], second[i]);
  };
  switch (op) {
    case ir::Op::lt: each([](auto x, auto y) { return x < y; }); break;
    case ir::Op::le: each([](auto x, auto y) { return x <= y; }); break;
    case ir::Op::gt: each([](auto x, auto y) { return x > y; }); break;
    case ir::Op::ge: each([](auto x, auto y) { return x >= y; }); break;
    case ir::Op::eq: each([](auto x, auto y) { return x == y; }); break;
    default: each([](auto x, auto y) { return x != y; }); break;
  }
  return out;
}

// Comparisons compare the stored values exactly: two integers as integers, anything else both
// widened to f64 (exact for every real type).
Value comparison(const ir::Let& let, const std::vector<const Value*>& operands) {
  const std::vector<int64_t>& shape = let.type.shape;
  const Value &x = *operands[0], &y = *operands[1];
  if (x.kind == Value::Kind::integer && y.kind == Value::Kind::integer) {
    return make_booleans(compare(let.op, broadcast_to(load_integers(x), x.shape, shape), broadcast_to(load_integers(y), y.shape, shape)),
                         shape);
  }
  return make_booleans(compare(let.op, broadcast_to(load_f64(x), x.shape, shape), broadcast_to(load_f64(y), y.shape, shape)),
                       shape);
}

}  // namespace

Value run_literal(const ir::Let& let, const OpContext& ctx) {
  const std::string& text = let.attrs.literal;
  const size_t n = element_count(let.type.shape);
  if (let.type.kind == ir::ElemKind::Int) {  // within int64: the verifier checked it
    int64_t value = 0;
    internal_assert(std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc());
    return make_integers(std::vector<int64_t>(n, value), let.type.shape);
  }
  if (let.type.kind == ir::ElemKind::Bool) return make_booleans(std::vector<uint8_t>(n, text == "true" || text == "1"), let.type.shape);
  // The literal's exact value (a decimal, or a quotient N/D) rounded once into the site's type.
  const BinaryFormat format = ctx.site == RealType::f64 ? kBinary64 : ctx.site == RealType::f32 ? kBinary32 : kBfloat16;
  const std::optional<double> value = round_literal(text, format);
  if (!value) user_error("E0623") << "the literal `" << text << "` is not a decimal number";
  if (ctx.site == RealType::f64) return store_f64(Buffer<double>(n, *value), let.type.shape);
  return store_f32(Buffer<float>(n, static_cast<float>(*value)), let.type.shape, ctx.site);  // exact: already rounded
}

Value run_iota(const ir::Let& let) {
  const std::vector<int64_t>& shape = let.type.shape;
  const size_t axis = static_cast<size_t>(let.attrs.axes.at(0));
  const std::vector<size_t> strides = strides_of(shape);
  const size_t n = element_count(shape);
  std::vector<int64_t> out;
  out.reserve(n);  // (filled once, not zeroed first)
  // Element i is (i / strides[axis]) mod shape[axis]: runs of strides[axis] equal indices,
  // the indices 0 … shape[axis]−1 repeated.
  const size_t run = strides[axis], extent = static_cast<size_t>(shape[axis]);
  while (out.size() < n) {
    for (size_t index = 0; index < extent; ++index) out.insert(out.end(), run, static_cast<int64_t>(index));
  }
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
  if (std::optional<Value> tiled = elementwise_bf16_tiles(let, operands, ctx)) return std::move(*tiled);
  return elementwise_real<float>(let, operands, ctx);
}

}  // namespace presk::exec::native
