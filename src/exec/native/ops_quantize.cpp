// The IR's `quantize` (ops.def; docs/chip.md, "The quantize op"): each block of attrs.starts[0]
// values along the last axis replaced by the values its quantized form stands for. At an f32 or
// bf16 site the block is quantized by the native kernel (numerics/scheme/kernels.h, the exact
// meaning's bits) and each value it stands for (exact in binary64) rounded once into the site's
// type; at an f64 site by the exact meaning on the binary64 values. Each block from its own
// values alone: the same bits at any thread count. With spec "keep/<mode>", each row kept as a
// cache keeps it. Where the realization has integer sums, the codes are kept beside the values
// (ops_chip.h) for the contractions that read them.
#include <mpfr.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "numerics/scheme/attention_spec.h"
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

// Room for the codes of a quantize's result of `count` elements in blocks of `block`, where the
// realization's integer sums read them; null otherwise.
std::shared_ptr<ActivationCodes> codes_room(const ir::Let& let, const numerics::Scheme& scheme, size_t block, size_t count,
                                            bool units, const OpContext& ctx) {
  if (ctx.realization.integer_sums.bits <= 0) return nullptr;
  auto codes = std::make_shared<ActivationCodes>();
  codes->scheme = scheme;
  codes->block = block;
  codes->words.assign(static_cast<size_t>(numerics::word_count(scheme.words)), std::vector<uint8_t>(count));
  codes->scales.resize(count / block);
  codes->shape = let.type.shape;
  codes->units = units;
  return codes;
}

// The result's values, with the codes beside them where there are any.
template <typename C>
Value with_codes(Buffer<C>&& x, std::shared_ptr<ActivationCodes> codes, const ir::Let& let, const OpContext& ctx) {
  Value out = store_as<C>(std::move(x), let.type.shape, ctx.site, ctx.options.threads);
  // The storage was made here and nothing else holds it yet.
  if (codes) std::const_pointer_cast<Storage>(out.storage)->codes = std::move(codes);
  return out;
}

template <typename C>
Value quantize(const ir::Let& let, const Value& operand, const OpContext& ctx) {
  const numerics::Scheme scheme = numerics::scheme_of_spec(let.attrs.spec, let.attrs.starts);
  const size_t block = static_cast<size_t>(scheme.block.count);
  Buffer<C> x = load_as<C>(operand, ctx.site);
  internal_assert(block > 0 && x.size() % block == 0);
  const std::shared_ptr<ActivationCodes> codes = codes_room(let, scheme, block, x.size(), false, ctx);
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
  return with_codes<C>(std::move(x), codes, let, ctx);
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

// A tile of an attention's weights at an f64 site by the meaning: t = p·s exactly (MPFR), then
// the weights' form on t (a scheme's codes into `codes` at block b, where not null).
std::vector<double> weights_exact(const double* p, const double* scales, const size_t* row_of, size_t tile,
                                  const numerics::WeightsForm& form, ActivationCodes* codes, size_t b) {
  std::vector<__mpfr_struct> t(tile);
  for (size_t i = 0; i < tile; ++i) {
    mpfr_init2(&t[i], 128);
    mpfr_set_d(&t[i], p[i], MPFR_RNDN);
    mpfr_mul_d(&t[i], &t[i], scales[row_of[i]], MPFR_RNDN);  // exact: 53 + 53 bits
  }
  std::vector<double> out;
  if (form.weights.float_format) {
    out = numerics::keep_row_exact(t.data(), tile, {numerics::Keep::Kind::float_format, *form.weights.float_format}).values;
  } else {
    numerics::QuantizedBlock q = numerics::quantize_block_exact(t.data(), tile, *form.weights.scheme);
    if (codes) record_codes(*codes, b, q.scale, q.words);
    out = std::move(q.values);
  }
  for (__mpfr_struct& m : t) mpfr_clear(&m);
  return out;
}

// A value row's codes in units of its scale (spec "codes/…"): each row quantized by the native
// kernel at an f32 or bf16 site (the meaning's codes), by the meaning at an f64 site; its words'
// value q₁ (+ q₂/128 …) is exact in binary32 (at most 22 significant bits). The codes kept
// beside the values are in units (ActivationCodes::units).
template <typename C>
Value codes(const ir::Let& let, const numerics::Scheme& scheme, const Value& operand, const OpContext& ctx) {
  const size_t row = static_cast<size_t>(scheme.block.count);
  Buffer<C> x = load_as<C>(operand, ctx.site);
  internal_assert(row > 0 && x.size() % row == 0);
  const std::shared_ptr<ActivationCodes> kept = codes_room(let, scheme, row, x.size(), true, ctx);
  parallel_chunks(x.size() / row, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      C* values = x.data() + r * row;
      double scale = 0;
      std::vector<std::vector<int32_t>> words(static_cast<size_t>(numerics::word_count(scheme.words)), std::vector<int32_t>(row));
      if constexpr (std::is_same_v<C, float>) {
        const numerics::NativeBlock q = numerics::quantize_block_native(values, row, scheme);
        scale = q.scale;
        for (size_t w = 0; w < words.size(); ++w) {
          for (size_t i = 0; i < row; ++i) words[w][i] = q.code(w, i, scheme.scale.kind == numerics::Scale::Kind::unsigned_pow2);
        }
      } else {
        numerics::QuantizedBlock q = numerics::quantize_block_exact(values, row, scheme);
        scale = q.scale;
        words = std::move(q.words);
      }
      if (kept) record_codes(*kept, r, scale, words);
      for (size_t i = 0; i < row; ++i) {
        values[i] = scale == 0            ? C(0)
                    : std::isfinite(scale) ? static_cast<C>(numerics::codes_value(words, i, scheme.words))
                                           : std::numeric_limits<C>::quiet_NaN();
      }
    }
  });
  return with_codes<C>(std::move(x), kept, let, ctx);
}

// A tile of an attention's weights t (exact binary64 products) in the weights' form: the native
// kernel's codes for a scheme (the meaning's: t has at most 48 significant bits, whose residuals
// stay exact), recorded into `codes` at block b where not null; one rounding for a float format.
std::vector<double> weights_taken(const std::vector<double>& t, const numerics::WeightsForm& form, ActivationCodes* codes,
                                  size_t b) {
  if (form.weights.float_format) {
    std::vector<double> out(t.size());
    for (size_t i = 0; i < t.size(); ++i) out[i] = numerics::round_to_float_format(t[i], *form.weights.float_format);
    return out;
  }
  numerics::NativeBlock q = numerics::quantize_block_native(t.data(), t.size(), *form.weights.scheme);
  if (codes) record_codes(*codes, b, q.scale, q.words);
  return std::move(q.values);
}

// An attention's weights each taken times its value row's scale (spec "weights|…"): at an f32 or
// bf16 site the values' row scales by the native kernel and t = p·s in binary64 (exact: 24 + 24
// bits), each tile in the weights' form (weights_taken); at an f64 site by the meaning on exact
// products. What each t̂ stands for rounded once into the site's type; in a scheme, the tiles'
// codes kept beside the values for the weighted sum (ops_chip.h).
template <typename C>
Value weights(const ir::Let& let, const numerics::WeightsForm& form, const Value& p, const Value& v, const OpContext& ctx) {
  const size_t tile = static_cast<size_t>(let.attrs.starts.at(0)), row = static_cast<size_t>(v.shape.back());
  Buffer<C> w = load_as<C>(p, ctx.site);
  const Buffer<C> values = load_as<C>(v, ctx.site);
  internal_assert(tile > 0 && w.size() % tile == 0 && row > 0 && values.size() % row == 0);
  const std::shared_ptr<ActivationCodes> codes =
      form.weights.scheme ? codes_room(let, *form.weights.scheme, tile, w.size(), false, ctx) : nullptr;
  std::vector<double> scales(values.size() / row);
  parallel_chunks(scales.size(), ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      if constexpr (std::is_same_v<C, float>) {
        scales[r] = numerics::quantize_block_native(values.data() + r * row, row, form.values).scale;
      } else {
        scales[r] = numerics::quantize_block_exact(values.data() + r * row, row, form.values).scale;
      }
    }
  });
  const std::vector<size_t> row_of = numerics::value_row_of_weights(form, p.shape, v.shape);
  parallel_chunks(w.size() / tile, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t b = begin; b < end; ++b) {
      C* weight = w.data() + b * tile;
      std::vector<double> taken;
      if constexpr (std::is_same_v<C, float>) {
        std::vector<double> t(tile);
        for (size_t i = 0; i < tile; ++i) t[i] = static_cast<double>(weight[i]) * scales[row_of[b * tile + i]];
        taken = weights_taken(t, form, codes.get(), b);
      } else {
        taken = weights_exact(weight, scales.data(), row_of.data() + b * tile, tile, form, codes.get(), b);
      }
      for (size_t i = 0; i < tile; ++i) weight[i] = static_cast<C>(taken[i]);
    }
  });
  return with_codes<C>(std::move(w), codes, let, ctx);
}

}  // namespace

Value run_quantize(const ir::Let& let, const Value& operand, const Value* values, const OpContext& ctx) {
  if (values) {
    const std::optional<numerics::WeightsForm> form = numerics::weights_of_spec(let.attrs.spec, let.attrs.starts);
    internal_assert(form.has_value());  // the IR's type rule: a two-operand quantize is spec "weights|…"
    if (ctx.site == RealType::f64) return weights<double>(let, *form, operand, *values, ctx);
    return weights<float>(let, *form, operand, *values, ctx);
  }
  if (const std::optional<numerics::Scheme> scheme = numerics::codes_of_spec(let.attrs.spec, let.attrs.starts)) {
    if (ctx.site == RealType::f64) return codes<double>(let, *scheme, operand, ctx);
    return codes<float>(let, *scheme, operand, ctx);
  }
  if (const std::optional<numerics::Keep> mode = numerics::keep_of_spec(let.attrs.spec)) {
    if (ctx.site == RealType::f64) return keep<double>(let, *mode, operand, ctx);
    return keep<float>(let, *mode, operand, ctx);
  }
  if (ctx.site == RealType::f64) return quantize<double>(let, operand, ctx);
  return quantize<float>(let, operand, ctx);
}

}  // namespace presk::exec::native
