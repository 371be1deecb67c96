// contract: an einsum of two operands as batched matrix products C[b] = A[b] · B[b] in the
// site's compute type, by the f64 or f32 family's kernel. Letters in A, B and the output are
// batch axes, in A and the output M axes, in B and the output N axes, in A and B only the
// contracted K axes, summed in row-major order of the K letters as A lists them. A is read in
// place when its layout is [batch, M, K] or [batch, K, M] (reverse mode's Xᵀ · dY), B (a
// parameter at rest, integer weights dequantized in the kernel's load) when it is [batch, K,
// N], or [batch, N, K] stored in the site's own type (reverse mode's dY · Wᵀ, q · kᵀ); otherwise
// each is first loaded and permuted. Where the realization has integer sums and A holds a
// quantize's codes, a product by integer weights or by another quantize's codes (an attention's
// keys, its values' codes) is computed as the chip does (ops_chip.h).
#include <algorithm>

#include "exec/native/contract_driver.h"
#include "exec/native/convert.h"
#include "exec/native/ops.h"
#include "exec/native/ops_chip.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

struct Spec {
  std::string a, b, out;
  std::string batch, m, n, k;
};

Spec parse_spec(const std::string& text) {
  Spec s;
  const size_t comma = text.find(','), arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    user_error("E0623") << "contract spec `" << text << "` is not of the form `ab,bc->ac`";
  }
  s.a = text.substr(0, comma);
  s.b = text.substr(comma + 1, arrow - comma - 1);
  s.out = text.substr(arrow + 2);
  auto has = [](const std::string& letters, char c) { return letters.find(c) != std::string::npos; };
  for (char c : s.out) {
    if (has(s.a, c) && has(s.b, c)) s.batch += c;
    else if (has(s.a, c)) s.m += c;
    else if (has(s.b, c)) s.n += c;
  }
  for (char c : s.a) {
    if (has(s.b, c) && !has(s.out, c)) s.k += c;
    if (!has(s.b, c) && !has(s.out, c)) user_error("E0623") << "contract `" << text << "`: `" << c << "` is summed over one operand only";
  }
  for (char c : s.b) {
    if (!has(s.a, c) && !has(s.out, c)) user_error("E0623") << "contract `" << text << "`: `" << c << "` is summed over one operand only";
  }
  return s;
}

int64_t extent_of(char c, const std::string& letters, const std::vector<int64_t>& shape) {
  return shape[letters.find(c)];
}

size_t product(const std::string& letters, const std::string& in, const std::vector<int64_t>& shape) {
  size_t p = 1;
  for (char c : letters) p *= static_cast<size_t>(extent_of(c, in, shape));
  return p;
}

// x (axes named by `from`) rearranged into the axis order `to` (a permutation of `from`).
template <typename C>
Buffer<C> permute(const C* x, const std::string& from, const std::vector<int64_t>& shape, const std::string& to) {
  const std::vector<size_t> strides = strides_of(shape);
  std::vector<int64_t> to_shape;
  std::vector<size_t> to_strides;
  for (char c : to) {
    to_shape.push_back(extent_of(c, from, shape));
    to_strides.push_back(strides[from.find(c)]);
  }
  Buffer<C> out(element_count(shape));
  copy_strided(x, to_shape, to_strides, 0, out.data());
  return out;
}

// B in place when its storage can enter a site of this type by the kernel's load, and its
// axes are already [batch, K, N] (integer weights: no batch, one K and one N axis).
bool b_in_place(const Value& b, const Spec& s, RealType site, BSource& source, size_t k_extent) {
  if (s.b == s.batch + s.n + s.k && s.b != s.batch + s.k + s.n) {  // [batch, N, K]: in its site's type or narrower
    // (a bf16 weight in Hugging Face's [out, in] read by an f64 or f32 product: widened as the
    // panel loads it, never as a whole)
    const bool narrower = site == RealType::f64 || (site == RealType::f32 && b.type == RealType::bf16);
    if (b.kind != Value::Kind::real || (b.type != site && !narrower)) return false;
    source.kind = b.type == RealType::f64 ? BSource::Kind::f64 : b.type == RealType::f32 ? BSource::Kind::f32 : BSource::Kind::bf16;
    source.data = b.type == RealType::f64   ? static_cast<const void*>(b.storage->f64.data())
                  : b.type == RealType::f32 ? static_cast<const void*>(b.storage->f32.data())
                                            : static_cast<const void*>(b.storage->bf16.data());
    source.first = b.offset;
    source.ldb = 1;
    source.ldn = k_extent;
    return true;
  }
  if (s.b != s.batch + s.k + s.n) return false;
  if (b.kind == Value::Kind::real) {
    if (site == RealType::bf16 && b.type != RealType::bf16) return false;
    const Storage& st = *b.storage;
    source.kind = b.type == RealType::f64 ? BSource::Kind::f64 : b.type == RealType::f32 ? BSource::Kind::f32 : BSource::Kind::bf16;
    source.data = b.type == RealType::f64 ? static_cast<const void*>(st.f64.data())
                  : b.type == RealType::f32 ? static_cast<const void*>(st.f32.data()) : static_cast<const void*>(st.bf16.data());
    source.first = b.offset;
    return true;
  }
  if (b.kind != Value::Kind::quantized || site == RealType::bf16 || !s.batch.empty() || s.k.size() != 1 || s.n.size() != 1) return false;
  const QuantizedWeights& q = *b.storage->quant;
  const int64_t rank = static_cast<int64_t>(q.shape.size());
  if (q.over != rank - 2 && q.over != rank - 1) return false;
  source.kind = q.bits == 8 ? BSource::Kind::i8 : BSource::Kind::i4;
  source.data = q.q.data();
  source.first = b.offset;
  source.scale_per_column = q.over == rank - 2;
  source.scales = q.scales.data() + q.scale_index(b.offset);
  source.group = static_cast<size_t>(q.group);
  if (q.group != 0) {
    const size_t columns = static_cast<size_t>(q.shape[rank - 1]);
    source.scale_ld = source.scale_per_column ? columns : columns / source.group;
  }
  return true;
}

size_t interleaved_partials(const OpContext& ctx) {
  const Order& order = ctx.realization.order;
  return order.kind == OrderKind::interleaved ? static_cast<size_t>(order.partials) : 1;
}

template <typename C>
void contract_one(const ContractionShape& shape, const C* a, const BSource& b, C* c, const OpContext& ctx) {
  if constexpr (std::is_same_v<C, double>) {
    contract_f64(shape, a, b, c, ctx.options.threads, ctx.options.force_scalar);
  } else {
    contract_f32(shape, a, b, c, ctx.options.threads, ctx.options.force_scalar);
  }
}

// C[M, N] of one batch under the realization's order (interleaved: n strided chains, then the
// tree). A is [M, K] row-major, or [K, M] (`a_transposed`: read in place, column by column).
// `lower_only`: only C(i, j) with j <= i is wanted (ContractionShape).
// `bias`: the epilogue (ContractionShape::bias) where the kernels add it, else nullptr.
template <typename C>
void contract_ordered(size_t m, size_t n, size_t k, const C* a, bool a_transposed, const BSource& b, C* c,
                      bool lower_only, const C* bias, const OpContext& ctx) {
  const size_t partials = interleaved_partials(ctx);
  const size_t lda = a_transposed ? 1 : k, a_col = a_transposed ? m : 1;
  if (partials <= 1) {
    ContractionShape shape{m, n, 0, 1, k, lda, a_col, lower_only};
    shape.bias = bias, shape.bias_first = ctx.bias_first;
    return contract_one<C>(shape, a, b, c, ctx);
  }
  std::vector<Buffer<C>> p(std::min(partials, std::max<size_t>(k, 1)), Buffer<C>(m * n));
  for (size_t r = 0; r < p.size(); ++r) {
    contract_one<C>({m, n, r, partials, (k - r + partials - 1) / partials, lda, a_col}, a, b, p[r].data(), ctx);
  }
  std::vector<C> lane(p.size());
  for (size_t i = 0; i < m * n; ++i) {
    for (size_t r = 0; r < p.size(); ++r) lane[r] = p[r][i];
    c[i] = combine_partials(lane);
  }
}

// A bf16 site's epilogue, the add's own bits: each C element as the add reads it (rounded to
// bf16, widened), plus the bias in the add's order, rounded to bf16 — a row at a time, in one
// pass over C.
Value bf16_with_bias(Buffer<float>& c, const ContractionShape& epilogue, size_t len, std::vector<int64_t> shape,
                     int threads) {
  auto storage = std::make_shared<Storage>();
  storage->bf16.resize(c.size());
  const size_t rows = len ? c.size() / len : 0, per_task = std::max<size_t>(1, 16384 / std::max<size_t>(len, 1));
  const size_t tasks = threads > 1 ? (rows + per_task - 1) / per_task : 1;
  for_each_task(tasks, threads, [&](size_t task) {
    const size_t first = tasks == 1 ? 0 : task * per_task, last = tasks == 1 ? rows : std::min(rows, first + per_task);
    for (size_t r = first; r < last; ++r) {
      float* row = c.data() + r * len;
      round_through_bf16(row, row, len);
      add_bias<float>(epilogue, row, 1, len, len, 0);
      round_to_bf16(row, storage->bf16.data() + r * len, len);
    }
  });
  return Value{Value::Kind::real, RealType::bf16, std::move(shape), std::move(storage), 0};
}

// C[batch, M, N] by the kernels: A and B read in place where their layouts allow (file comment),
// else loaded and permuted; `bias`, where not null, added by the kernels (ContractionShape).
template <typename C>
void contract_by_kernels(const Spec& s, const Value& av, const Value& bv, bool lower_only, const C* bias,
                         Buffer<C>& c, const OpContext& ctx) {
  const size_t batches = product(s.batch, s.a, av.shape), m = product(s.m, s.a, av.shape);
  const size_t n = product(s.n, s.b, bv.shape), k = product(s.k, s.a, av.shape);
  const Loaded<C> a_loaded = view_as<C>(av, ctx.site);
  const std::string a_order = s.batch + s.m + s.k, b_order = s.batch + s.k + s.n;
  const bool a_transposed = s.a != a_order && s.a == s.batch + s.k + s.m;
  const bool a_in_place = s.a == a_order || a_transposed;
  const Buffer<C> a_permuted = a_in_place ? Buffer<C>{} : permute(a_loaded.data, s.a, av.shape, a_order);
  const C* a = a_in_place ? a_loaded.data : a_permuted.data();
  BSource source;
  source.ldb = n;
  Loaded<C> b_loaded;
  Buffer<C> b_permuted;
  if (!b_in_place(bv, s, ctx.site, source, k)) {
    b_loaded = view_as<C>(bv, ctx.site);
    if (s.b != b_order) b_permuted = permute(b_loaded.data, s.b, bv.shape, b_order);
    source.kind = std::is_same_v<C, double> ? BSource::Kind::f64 : BSource::Kind::f32;
    source.data = s.b == b_order ? b_loaded.data : b_permuted.data();
    source.first = 0;
  }
  for (size_t batch = 0; batch < batches; ++batch) {
    BSource b = source;
    b.first += batch * k * n;
    contract_ordered<C>(m, n, k, a + batch * m * k, a_transposed, b, c.data() + batch * m * n, lower_only, bias, ctx);
  }
}

// The chip's product (ops_chip.h) where A is [batch, M, K] holding a quantize's codes and B
// integer weights or codes: its outputs rounded once into the compute type; false where it does
// not apply.
template <typename C>
bool contract_by_chip(const Spec& s, const Value& av, const Value& bv, Buffer<C>& c, const OpContext& ctx) {
  if (ctx.realization.integer_sums.bits <= 0 || s.a != s.batch + s.m + s.k) return false;
  const std::optional<std::vector<double>> chip = chip_product({s.a, s.b, s.batch, s.m, s.n, s.k}, av, bv, ctx);
  if (!chip) return false;
  internal_assert(chip->size() == c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    if constexpr (std::is_same_v<C, double>) {
      c[i] = (*chip)[i];
    } else {
      c[i] = chip_output_in((*chip)[i], ctx.site);
    }
  }
  return true;
}

template <typename C>
Value contract(const ir::Let& let, const Value& av, const Value& bv, const OpContext& ctx) {
  const Spec s = parse_spec(let.attrs.spec);
  const size_t batches = product(s.batch, s.a, av.shape), m = product(s.m, s.a, av.shape);
  const size_t n = product(s.n, s.b, bv.shape);
  Buffer<C> c(batches * m * n);
  // C's last two axes are M and N: a causal mask after it makes j > i unwanted.
  const bool in_order = s.out == s.batch + s.m + s.n;
  const bool lower_only = ctx.masked_above_diagonal && in_order && s.m.size() == 1 && s.n.size() == 1;
  // The epilogue's bias, added by the kernels where C's columns are its index, else below.
  const Loaded<C> bias = ctx.bias ? view_as<C>(*ctx.bias, ctx.site) : Loaded<C>{};
  bool bias_in_kernel = ctx.bias && in_order && s.n.size() == 1 && interleaved_partials(ctx) <= 1 && !lower_only &&
                        ctx.site != RealType::bf16;
  if (contract_by_chip<C>(s, av, bv, c, ctx)) {
    bias_in_kernel = false;
  } else {
    contract_by_kernels<C>(s, av, bv, lower_only, bias_in_kernel ? bias.data : nullptr, c, ctx);
  }
  if (!in_order) {
    std::vector<int64_t> bmn_shape;
    for (char ch : s.batch + s.m) bmn_shape.push_back(extent_of(ch, s.a, av.shape));
    for (char ch : s.n) bmn_shape.push_back(extent_of(ch, s.b, bv.shape));
    c = permute(c.data(), s.batch + s.m + s.n, bmn_shape, s.out);
  }
  if (ctx.bias && !bias_in_kernel) {  // the epilogue after the combination or the permutation
    ContractionShape epilogue;
    epilogue.bias = bias.data, epilogue.bias_first = ctx.bias_first;
    const size_t len = static_cast<size_t>(let.type.shape.back());
    if constexpr (std::is_same_v<C, float>) {
      if (ctx.site == RealType::bf16) return bf16_with_bias(c, epilogue, len, let.type.shape, ctx.options.threads);
    }
    add_bias<C>(epilogue, c.data(), len ? c.size() / len : 0, len, len, 0);
  }
  return store_as<C>(std::move(c), let.type.shape, ctx.site, ctx.options.threads);
}

}  // namespace

Value run_contract(const ir::Let& let, const Value& a, const Value& b, const OpContext& ctx) {
  if (ctx.site == RealType::f64) return contract<double>(let, a, b, ctx);
  return contract<float>(let, a, b, ctx);
}

}  // namespace presk::exec::native
