// An attention's weighted sum of int8 value rows (attention.h): the exact meaning on rationals,
// and the chip's integer form.
#include "numerics/attention.h"

#include <algorithm>
#include <cmath>

#include "numerics/scheme/kernels.h"
#include "numerics/scheme/rational.h"
#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

// The keys that share one scale of the weights: a tile of `block` keys (the row: all of them).
size_t tile_of(const Scheme& scheme, size_t keys) {
  const int64_t tile = block_length(scheme.block, static_cast<int64_t>(keys), 0);
  internal_assert(tile > 0);
  return static_cast<size_t>(tile);
}

}  // namespace

std::vector<double> attend_values_exact(const std::vector<double>& weights, const std::vector<KeptRow>& rows,
                                        const Taken& taken) {
  internal_assert(weights.size() == rows.size() && !rows.empty());
  const size_t keys = rows.size(), width = rows[0].codes.size();
  std::vector<mpq_class> t(keys);  // each weight times its value row's scale
  for (size_t j = 0; j < keys; ++j) t[j] = mpq_class(weights[j]) * mpq_class(rows[j].scale);
  std::vector<mpq_class> taken_t(keys);
  if (taken.float_format) {
    for (size_t j = 0; j < keys; ++j) taken_t[j] = mpq_class(round_rational(t[j], *taken.float_format));
  } else {
    const size_t tile = tile_of(*taken.scheme, keys);
    for (size_t start = 0; start < keys; start += tile) {
      const QuantizedBlock block = quantize_rationals(std::vector<mpq_class>(t.begin() + static_cast<long>(start),
                                                                             t.begin() + static_cast<long>(start + tile)),
                                                      *taken.scheme);
      for (size_t j = 0; j < tile; ++j) taken_t[start + j] = mpq_class(block.values[j]);
    }
  }
  std::vector<double> out(width);
  for (size_t d = 0; d < width; ++d) {
    mpq_class sum = 0;
    for (size_t j = 0; j < keys; ++j) sum += taken_t[j] * rows[j].codes[d];
    out[d] = nearest_binary64(sum);
  }
  return out;
}

namespace {

// A row of n values quantized in `scheme` a block of `block` at a time, as the chip holds it.
struct RowCodes {
  std::vector<std::vector<uint8_t>> words;
  std::vector<double> scales;
  size_t block = 0;

  CodesRow row() const {
    CodesRow r;
    for (size_t w = 0; w < words.size(); ++w) r.words[w] = words[w].data();
    r.scales = scales.data();
    r.block = block;
    return r;
  }
};

template <typename T>
RowCodes row_codes(const T* x, size_t n, size_t block, const Scheme& scheme) {
  RowCodes out{std::vector<std::vector<uint8_t>>(static_cast<size_t>(word_count(scheme.words)), std::vector<uint8_t>(n)), {}, block};
  for (size_t start = 0; start < n; start += block) {
    const NativeBlock q = quantize_block_native(x + start, block, scheme);
    for (size_t w = 0; w < out.words.size(); ++w) std::copy(q.words[w].begin(), q.words[w].end(), out.words[w].begin() + static_cast<long>(start));
    out.scales.push_back(q.scale);
  }
  return out;
}

}  // namespace

std::vector<double> attend_values_native(const std::vector<float>& weights, const std::vector<KeptRow>& rows,
                                         const Scheme& scheme) {
  internal_assert(weights.size() == rows.size() && !rows.empty() && scheme.words == Words::one);
  const size_t keys = rows.size(), width = rows[0].codes.size();
  std::vector<double> t(keys);
  for (size_t j = 0; j < keys; ++j) t[j] = static_cast<double>(weights[j]) * rows[j].scale;  // exact: 24 + 11 bits
  const RowCodes taken = row_codes(t.data(), keys, tile_of(scheme, keys), scheme);
  std::vector<double> out(width);
  std::vector<int8_t> column(keys);
  for (size_t d = 0; d < width; ++d) {
    for (size_t j = 0; j < keys; ++j) column[j] = static_cast<int8_t>(rows[j].codes[d]);
    out[d] = attention_dot(taken.row(), {column.data(), nullptr, keys}, keys, scheme, 32, Overflow::wrap, true, nullptr);
  }
  return out;
}

namespace {

// The values a row of n stands for when taken as `taken` says, exactly.
std::vector<mpq_class> taken_row(const double* x, size_t n, const Taken& taken) {
  std::vector<mpq_class> out(n);
  if (taken.float_format) {
    for (size_t i = 0; i < n; ++i) out[i] = mpq_class(round_rational(mpq_class(x[i]), *taken.float_format));
    return out;
  }
  const size_t block = tile_of(*taken.scheme, n);
  for (size_t start = 0; start < n; start += block) {
    std::vector<mpq_class> part(block);
    for (size_t i = 0; i < block; ++i) part[i] = mpq_class(x[start + i]);
    const QuantizedBlock q = quantize_rationals(std::move(part), *taken.scheme);
    for (size_t i = 0; i < block; ++i) out[start + i] = mpq_class(q.values[i]);
  }
  return out;
}

}  // namespace

std::vector<double> attend_scores_exact(const std::vector<double>& query, const std::vector<std::vector<double>>& keys,
                                        const Taken& queries, const Taken& keys_taken) {
  const std::vector<mpq_class> q = taken_row(query.data(), query.size(), queries);
  std::vector<double> scores;
  for (const std::vector<double>& key : keys) {
    internal_assert(key.size() == query.size());
    const std::vector<mpq_class> k = taken_row(key.data(), key.size(), keys_taken);
    mpq_class sum = 0;
    for (size_t d = 0; d < q.size(); ++d) sum += q[d] * k[d];
    scores.push_back(nearest_binary64(sum));
  }
  return scores;
}

std::vector<double> attend_scores_native(const std::vector<float>& query, const std::vector<std::vector<float>>& keys,
                                         const Scheme& queries, const Scheme& keys_scheme) {
  internal_assert(keys_scheme.words == Words::one && keys_scheme.scale.kind != Scale::Kind::unsigned_pow2);
  const size_t n = query.size();
  const RowCodes q = row_codes(query.data(), n, tile_of(queries, n), queries);
  std::vector<double> scores;
  for (const std::vector<float>& key : keys) {
    internal_assert(key.size() == n);
    const RowCodes k = row_codes(key.data(), n, tile_of(keys_scheme, n), keys_scheme);
    const ScaledColumn column{reinterpret_cast<const int8_t*>(k.words[0].data()), k.scales.data(), k.block};
    scores.push_back(attention_dot(q.row(), column, n, queries, 32, Overflow::wrap, true, nullptr));
  }
  return scores;
}

}  // namespace presk::numerics
