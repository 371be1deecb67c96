// The IR's `quantize` (ops.def; docs/chip.md, "The quantize op"): each block of attrs.starts[0]
// values along the last axis replaced by the values its quantized form stands for. At an f32 or
// bf16 site the block is quantized by the native kernel (numerics/scheme/kernels.h, the exact
// meaning's bits) and each value it stands for (exact in binary64) rounded once into the site's
// type; at an f64 site by the exact meaning on the binary64 values. Each block from its own
// values alone: the same bits at any thread count. With spec "keep/<mode>", each row kept as a
// cache keeps it. Where the realization has integer sums, the codes are kept beside the values
// (ops_chip.h) for the contractions that read them.
#include <memory>
#include <optional>
#include <vector>

#include "numerics/scheme/contract.h"
#include "numerics/scheme/kernels.h"
#include "numerics/scheme/meaning.h"
#include "exec/native/ops.h"
#include "exec/native/ops_chip.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

// Where the realization's integer sums read them (ops_chip.h): the block's codes and scale into
// `codes` at block b (its words as bytes: the first unsigned under an unsigned scale, the rest int8).
template <typename Words>
void record_codes(ActivationCodes& codes, size_t b, double scale, const Words& words) {
  codes.scales[b] = scale;
  for (size_t w = 0; w < words.size(); ++w) {
    for (size_t i = 0; i < words[w].size(); ++i) codes.words[w][b * codes.block + i] = static_cast<uint8_t>(words[w][i]);
  }
}

template <typename C>
Value quantize(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  const numerics::Scheme scheme = numerics::scheme_of_spec(let.attrs.spec, let.attrs.starts);
  const size_t block = static_cast<size_t>(scheme.block.count);
  Buffer<C> x = load_as<C>(operand, ctx.site);
  internal_assert(block > 0 && x.size() % block == 0);
  std::shared_ptr<ActivationCodes> codes;
  if (ctx.realization.integer_sums.bits > 0) {
    codes = std::make_shared<ActivationCodes>(ActivationCodes{scheme, block, {}, std::vector<double>(x.size() / block)});
    codes->words.assign(static_cast<size_t>(numerics::word_count(scheme.words)), std::vector<uint8_t>(x.size()));
  }
  parallel_chunks(x.size() / block, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t b = begin; b < end; ++b) {
      C* values = x.data() + b * block;
      if constexpr (std::is_same_v<C, float>) {
        const numerics::NativeBlock q = numerics::quantize_block_native(values, block, scheme);
        for (size_t i = 0; i < block; ++i) values[i] = static_cast<float>(q.values[i]);
        if (codes) record_codes(*codes, b, q.scale, q.words);
      } else {
        const numerics::QuantizedBlock q = numerics::quantize_block_exact(values, block, scheme);
        for (size_t i = 0; i < block; ++i) values[i] = q.values[i];
        if (codes) record_codes(*codes, b, q.scale, q.words);
      }
    }
  });
  Value out = store_as<C>(std::move(x), let.type.shape, ctx.site, ctx.options.threads);
  // The storage was made here and nothing else holds it yet.
  if (codes) std::const_pointer_cast<Storage>(out.storage)->codes = std::move(codes);
  return out;
}

// Each row (the last axis) kept as a cache keeps it: int8 rows at an f32 or bf16 site by the
// native kernel (numerics/scheme/kernels.h), a float keep by rounding each value, at an f64 site
// by the exact meaning on the binary64 values; what the row reads back rounded once into the site's type.
template <typename C>
Value keep(const ir::Let& let, const numerics::Keep& mode, const Value& operand, const OpContext& ctx) {
  const size_t row = let.type.shape.empty() ? 1 : static_cast<size_t>(let.type.shape.back());
  Buffer<C> x = load_as<C>(operand, ctx.site);
  internal_assert(row > 0 && x.size() % row == 0);
  const bool integer = mode.kind == numerics::Keep::Kind::int8_rows || mode.kind == numerics::Keep::Kind::int8_rows_rotated;
  parallel_chunks(x.size() / row, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      C* values = x.data() + r * row;
      if constexpr (std::is_same_v<C, float>) {
        if (integer) {
          const numerics::NativeKeptRow kept =
              numerics::keep_row_native(values, row, mode.kind == numerics::Keep::Kind::int8_rows_rotated);
          for (size_t i = 0; i < row; ++i) values[i] = static_cast<float>(kept.values[i]);
          continue;
        }
      }
      const numerics::KeptRow kept = numerics::keep_row_exact(std::vector<double>(values, values + row).data(), row, mode);
      for (size_t i = 0; i < row; ++i) values[i] = static_cast<C>(kept.values[i]);
    }
  });
  return store_as<C>(std::move(x), let.type.shape, ctx.site, ctx.options.threads);
}

}  // namespace

Value run_quantize(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  if (const std::optional<numerics::Keep> mode = numerics::keep_of_spec(let.attrs.spec)) {
    if (ctx.site == RealType::f64) return keep<double>(let, *mode, operand, ctx);
    return keep<float>(let, *mode, operand, ctx);
  }
  if (ctx.site == RealType::f64) return quantize<double>(let, operand, ctx);
  return quantize<float>(let, operand, ctx);
}

}  // namespace presk::exec::native
