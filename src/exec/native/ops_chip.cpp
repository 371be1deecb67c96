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

}  // namespace

std::optional<std::vector<double>> chip_product(const std::string& a_letters, const std::string& b_letters,
                                                const std::string& k, const std::string& batch, const Value& a,
                                                const Value& b, const OpContext& ctx) {
  const IntegerSums& sums = ctx.realization.integer_sums;
  if (sums.bits <= 0 || a.kind != Value::Kind::real || !a.storage || !a.storage->codes) return std::nullopt;
  if (!batch.empty() || k.size() != 1 || a_letters.empty() || a_letters.back() != k[0]) return std::nullopt;
  const ActivationCodes& codes = *a.storage->codes;
  const size_t row = static_cast<size_t>(a.shape.back()), block = codes.block;
  if (row == 0 || row % block != 0 || a.offset % block != 0) return std::nullopt;
  const std::optional<WeightColumns> w = weight_columns(b, b_letters.find(k[0]));
  if (!w || w->k != row || (block % w->group != 0 && w->group % block != 0)) return std::nullopt;
  const size_t m = a.count() / row, n = w->n;
  const numerics::Overflow overflow = sums.saturate ? numerics::Overflow::saturate : numerics::Overflow::wrap;
  const bool simd = !ctx.options.force_scalar;
  std::vector<double> out(m * n);
  parallel_chunks(m, ctx.options.threads, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const size_t first = a.offset + i * row;
      numerics::CodesRow r;
      for (size_t word = 0; word < codes.words.size(); ++word) r.words[word] = codes.words[word].data() + first;
      r.scales = codes.scales.data() + first / block;
      r.block = block;
      for (size_t j = 0; j < n; ++j) {
        const numerics::CodesColumn c{w->codes.data() + j * row, w->scales.data() + j * (row / w->group), w->group};
        out[i * n + j] = numerics::chip_dot(r, c, row, codes.scheme, sums.bits, overflow, simd, nullptr);
      }
    }
  });
  return out;
}

float chip_output_in(double y, RealType site) {
  if (site == RealType::bf16) return static_cast<float>(numerics::round_to_float_format(y, numerics::FloatFormat::bf16));
  return static_cast<float>(y);
}

}  // namespace presk::exec::native
