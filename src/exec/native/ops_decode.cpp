// The decode ops (docs/language.md, "State"): cache_write, which writes its rows into the
// cache's own storage when the executor hands it the cache to own (no copy of the cache per
// token), and causal_mask_at, the causal mask of rows that start at a position.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include "exec/native/ops.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

std::atomic<uint64_t> copies{0};

int64_t position(const Value& at) { return load_integers(at).at(0); }

// A copy of v's elements in `site`, in storage of its own.
Value own_copy(const Value& v, RealType site) {
  copies.fetch_add(1, std::memory_order_relaxed);
  if (v.kind != Value::Kind::real || v.type != site) return convert_real(v, site);  // converted: fresh storage
  auto storage = std::make_shared<Storage>();
  const size_t n = v.count();
  auto copy = [&](auto member) {
    const auto& from = (*v.storage).*member;
    auto& to = (*storage).*member;
    to.resize(n);
    std::copy_n(from.begin() + static_cast<long>(v.offset), n, to.begin());
  };
  if (site == RealType::f64) copy(&Storage::f64);
  else if (site == RealType::f32) copy(&Storage::f32);
  else copy(&Storage::bf16);
  return Value{Value::Kind::real, site, v.shape, std::move(storage), 0};
}

}  // namespace

uint64_t cache_write_copies() { return copies.load(std::memory_order_relaxed); }

Value run_cache_write(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx, bool own) {
  const Value &cache = *operands.at(0), &rows = *operands.at(1);
  const auto axis = static_cast<size_t>(let.attrs.axes.at(0));
  const int64_t at = position(*operands.at(2)), extent = cache.shape[axis], n = rows.shape[axis];
  if (at < 0 || at > extent - n) {
    user_error("E1501").hint("a decode step's position lies in [0, T − rows]: generate at most T tokens")
        << "cache_write at position " << at << " of " << n << " row(s) does not fit the cache's " << extent
        << " positions";
  }
  const bool in_place = own && cache.kind == Value::Kind::real && cache.type == ctx.site && cache.storage;
  Value out = in_place ? cache : own_copy(cache, ctx.site);
  out.shape = let.type.shape;
  out.writable = true;
  const Value source = convert_real(rows, ctx.site);  // the rows in the cache's type (rounded once)
  size_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= static_cast<size_t>(cache.shape[a]);
  for (size_t a = axis + 1; a < cache.shape.size(); ++a) inner *= static_cast<size_t>(cache.shape[a]);
  const size_t run = static_cast<size_t>(n) * inner;
  // The cache is ours alone here (the executor's ownership rule): written through its storage.
  auto& storage = const_cast<Storage&>(*out.storage);
  storage.codes.reset();  // a quantize's codes (ops_chip.h) no longer stand for the values written
  storage.codes_axes.clear();
  auto write = [&](auto member) {
    const auto& from = (*source.storage).*member;
    auto& to = storage.*member;
    for (size_t o = 0; o < outer; ++o) {
      const size_t target = out.offset + (o * static_cast<size_t>(extent) + static_cast<size_t>(at)) * inner;
      std::copy_n(from.begin() + static_cast<long>(source.offset + o * run), run, to.begin() + static_cast<long>(target));
    }
  };
  if (ctx.site == RealType::f64) write(&Storage::f64);
  else if (ctx.site == RealType::f32) write(&Storage::f32);
  else write(&Storage::bf16);
  return out;
}

namespace {

template <typename C>
Value causal_mask_at(const ir::Let& let, const Value& v, int64_t at, const OpContext& ctx) {
  Buffer<C> x = load_as<C>(v, ctx.site);
  const size_t rank = v.shape.size();
  const auto rows = static_cast<int64_t>(v.shape[rank - 2]), cols = static_cast<int64_t>(v.shape[rank - 1]);
  const C fill = -std::numeric_limits<C>::infinity();
  for (size_t matrix = 0; matrix < x.size(); matrix += static_cast<size_t>(rows * cols)) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t first = std::clamp<int64_t>(at + i + 1, 0, cols);  // j > at + i
      std::fill(x.data() + matrix + i * cols + first, x.data() + matrix + (i + 1) * cols, fill);
    }
  }
  return store_as<C>(std::move(x), let.type.shape, ctx.site);
}

}  // namespace

Value run_causal_mask_at(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx) {
  const int64_t at = position(*operands.at(1));
  if (ctx.site == RealType::f64) return causal_mask_at<double>(let, *operands.at(0), at, ctx);
  return causal_mask_at<float>(let, *operands.at(0), at, ctx);
}

}  // namespace presk::exec::native
