// A chip's integer sums in the native executor (ops_chip.h).
#include "exec/native/ops_chip.h"

#include "numerics/scheme/kernels.h"
#include "numerics/scheme/meaning.h"
#include "support/diagnostics.h"

namespace presk::exec::native {
namespace {

// A matrix of integer weights as the chip reads it: each column's K codes contiguous, and its
// scales, one per group of K.
struct WeightColumns {
  size_t k = 0, n = 0, group = 0;
  std::vector<int8_t> codes;  // [n][k]
  std::vector<float> scales;  // [n][k / group]
};

// b's integer weights by column, when b is a matrix whose scales run along its axis `k_axis`.
std::optional<WeightColumns> weight_columns(const Value& b, size_t k_axis) {
  if (b.kind != Value::Kind::quantized || b.shape.size() != 2) return std::nullopt;
  const QuantizedWeights& q = *b.storage->quant;
  const int64_t depth = static_cast<int64_t>(q.shape.size() - b.shape.size());  // stacked layers sliced off
  if (q.over - depth != static_cast<int64_t>(k_axis)) return std::nullopt;
  WeightColumns w;
  w.k = static_cast<size_t>(b.shape[k_axis]);
  w.n = static_cast<size_t>(b.shape[1 - k_axis]);
  w.group = q.group > 0 ? static_cast<size_t>(q.group) : w.k;
  if (w.k == 0 || w.k % w.group != 0) return std::nullopt;
  w.codes.resize(w.n * w.k);
  w.scales.resize(w.n * (w.k / w.group));
  for (size_t j = 0; j < w.n; ++j) {
    for (size_t t = 0; t < w.k; ++t) {
      const size_t index = b.offset + (k_axis == 0 ? t * w.n + j : j * w.k + t);
      w.codes[j * w.k + t] = static_cast<int8_t>(q.q_at(index));
      if (t % w.group == 0) w.scales[j * (w.k / w.group) + t / w.group] = q.scales[q.scale_index(index)];
    }
  }
  return w;
}

// A's row that starts at element `first` of its storage, as the chip reads it.
numerics::CodesRow codes_row(const ActivationCodes& codes, size_t first) {
  numerics::CodesRow r;
  for (size_t word = 0; word < codes.words.size(); ++word) r.words[word] = codes.words[word].data() + first;
  r.scales = codes.scales.data() + first / codes.block;
  r.block = codes.block;
  return r;
}

numerics::Overflow overflow_of(const IntegerSums& sums) {
  return sums.saturate ? numerics::Overflow::saturate : numerics::Overflow::wrap;
}

// A [M, K] by integer weights: each output by chip_dot.
std::optional<std::vector<double>> by_weights(const ChipLetters& letters, const Value& a, const Value& b, const OpContext& ctx) {
  const ActivationCodes& codes = *a.storage->codes;
  const size_t row = static_cast<size_t>(a.shape.back()), block = codes.block;
  const std::optional<WeightColumns> w = weight_columns(b, letters.b.find(letters.k[0]));
  if (!letters.batch.empty() || !w || w->k != row || (block % w->group != 0 && w->group % block != 0)) return std::nullopt;
  const size_t m = a.count() / row, n = w->n;
  const IntegerSums& sums = ctx.realization.integer_sums;
  const bool simd = !ctx.options.force_scalar;
  std::vector<double> out(m * n);
  parallel_chunks(m, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const numerics::CodesRow r = codes_row(codes, a.offset + i * row);
      for (size_t j = 0; j < n; ++j) {
        const numerics::CodesColumn c{w->codes.data() + j * row, w->scales.data() + j * (row / w->group), w->group};
        out[i * n + j] = numerics::chip_dot(r, c, row, codes.scheme, sums.bits, overflow_of(sums), simd, nullptr);
      }
    }
  });
  return out;
}

// Where b's elements lie among its storage's codes: the index of b's first element and each
// axis's stride — b's own row-major strides where the storage holds the codes in their order
// (a quantize's result, a reshape or a contiguous slice of it), the codes' strides through the
// transpose's axes where it is a whole transposed result (Storage::codes_axes).
struct CodesPlace {
  size_t first = 0;
  std::vector<size_t> strides;
};

std::optional<CodesPlace> codes_place(const Value& b) {
  const Storage& storage = *b.storage;
  if (storage.codes_axes.empty()) return CodesPlace{b.offset, strides_of(b.shape)};
  const std::vector<int64_t>& shape = storage.codes->shape;
  if (b.offset != 0 || b.shape.size() != shape.size()) return std::nullopt;
  const std::vector<size_t> own = strides_of(shape);
  CodesPlace place;
  for (size_t i = 0; i < b.shape.size(); ++i) {
    const size_t axis = static_cast<size_t>(storage.codes_axes[i]);
    if (b.shape[i] != shape[axis]) return std::nullopt;
    place.strides.push_back(own[axis]);
  }
  return place;
}

// The offsets of every index of the axes `letters` names (axes of `in`, of `shape`, with
// `strides`), row-major in the letters' order.
std::vector<size_t> offsets_of(const std::string& letters, const std::string& in, const std::vector<int64_t>& shape,
                               const std::vector<size_t>& strides) {
  std::vector<size_t> out{0};
  for (char c : letters) {
    const size_t axis = in.find(c);
    std::vector<size_t> next;
    for (size_t o : out) {
      for (int64_t i = 0; i < shape[axis]; ++i) next.push_back(o + static_cast<size_t>(i) * strides[axis]);
    }
    out = std::move(next);
  }
  return out;
}

// b's int8 codes by column, [batch][N][K] with K contiguous, and their scales per block of K
// ([batch][N][K / block]; none for codes in units, a block of the whole column at scale 1).
struct ScaledColumns {
  size_t k = 0, block = 0;
  bool units = false;
  std::vector<int8_t> codes;
  std::vector<double> scales;

  numerics::ScaledColumn column(size_t c) const {
    return {codes.data() + c * k, units ? nullptr : scales.data() + c * (k / block), block};
  }
};

// b's codes as columns where they are one signed int8 word: in units along any axis, under
// scales along K (the codes' rows) in whole blocks.
std::optional<ScaledColumns> scaled_columns(const Value& b, const ChipLetters& letters) {
  if (b.kind != Value::Kind::real || !b.storage || !b.storage->codes) return std::nullopt;
  const ActivationCodes& codes = *b.storage->codes;
  if (codes.words.size() != 1 || codes.scheme.scale.kind == numerics::Scale::Kind::unsigned_pow2) return std::nullopt;
  const std::optional<CodesPlace> place = codes_place(b);
  if (!place) return std::nullopt;
  const size_t k_axis = letters.b.find(letters.k[0]), step = place->strides[k_axis];
  ScaledColumns c;
  c.k = static_cast<size_t>(b.shape[k_axis]);
  c.units = codes.units;
  c.block = c.units ? c.k : codes.block;
  if (c.k == 0 || (!c.units && (step != 1 || c.k % c.block != 0))) return std::nullopt;
  for (size_t batch : offsets_of(letters.batch, letters.b, b.shape, place->strides)) {
    for (size_t column : offsets_of(letters.n, letters.b, b.shape, place->strides)) {
      const size_t first = place->first + batch + column;
      if (!c.units && first % c.block != 0) return std::nullopt;
      for (size_t t = 0; t < c.k; ++t) c.codes.push_back(static_cast<int8_t>(codes.words[0][first + t * step]));
      if (c.units) continue;
      const auto scales = codes.scales.begin() + static_cast<long>(first / c.block);
      c.scales.insert(c.scales.end(), scales, scales + static_cast<long>(c.k / c.block));
    }
  }
  return c;
}

// A [batch, M, K] by another quantized activation's codes: each output by attention_dot.
std::optional<std::vector<double>> by_codes(const ChipLetters& letters, const Value& a, const Value& b, const OpContext& ctx) {
  const ActivationCodes& codes = *a.storage->codes;
  const size_t row = static_cast<size_t>(a.shape.back()), block = codes.block;
  const std::optional<ScaledColumns> columns = scaled_columns(b, letters);
  if (!columns || columns->k != row || (block % columns->block != 0 && columns->block % block != 0)) return std::nullopt;
  size_t batches = 1;
  for (char c : letters.batch) batches *= static_cast<size_t>(b.shape[letters.b.find(c)]);
  const size_t rows = a.count() / row;
  if (rows == 0) return std::vector<double>{};  // an empty batch or M: no output
  const size_t m = rows / batches, n = columns->codes.size() / (row * batches);
  const IntegerSums& sums = ctx.realization.integer_sums;
  const bool simd = !ctx.options.force_scalar;
  std::vector<double> out(rows * n);
  parallel_chunks(rows, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const numerics::CodesRow r = codes_row(codes, a.offset + i * row);
      for (size_t j = 0; j < n; ++j) {
        const numerics::ScaledColumn c = columns->column((i / m) * n + j);
        out[i * n + j] = numerics::attention_dot(r, c, row, codes.scheme, sums.bits, overflow_of(sums), simd, nullptr);
      }
    }
  });
  return out;
}

}  // namespace

std::optional<std::vector<double>> chip_product(const ChipLetters& letters, const Value& a, const Value& b,
                                                const OpContext& ctx) {
  if (ctx.realization.integer_sums.bits <= 0 || a.kind != Value::Kind::real || !a.storage || !a.storage->codes) return std::nullopt;
  const ActivationCodes& codes = *a.storage->codes;
  if (codes.units || !a.storage->codes_axes.empty() || letters.k.size() != 1 || letters.a != letters.batch + letters.m + letters.k) {
    return std::nullopt;
  }
  const size_t row = static_cast<size_t>(a.shape.back()), block = codes.block;
  if (row == 0 || row % block != 0 || a.offset % block != 0) return std::nullopt;
  return b.kind == Value::Kind::quantized ? by_weights(letters, a, b, ctx) : by_codes(letters, a, b, ctx);
}

float chip_output_in(double y, RealType site) {
  if (site == RealType::bf16) return static_cast<float>(numerics::round_to_float_format(y, numerics::FloatFormat::bf16));
  return static_cast<float>(y);
}

}  // namespace presk::exec::native
