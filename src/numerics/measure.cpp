// A contract's gap product by product (measure.h): the exact reference runs the program with a
// probe (a reshape to its own type) on each quantized product's activation, and an observer
// takes the split at each evaluation of the product.
#include "numerics/measure.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "exec/native/kernels.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/observer.h"
#include "numerics/accumulator.h"
#include "numerics/scheme/kernels.h"
#include "numerics/scheme/meaning.h"
#include "support/diagnostics.h"

namespace presk::numerics {
namespace {

using Key = std::pair<std::string, uint32_t>;  // (function, let)

// A value to observe right before the let that reads it: a product's activation, a cache's rows.
struct ProbeRequest {
  uint32_t function = 0, let = 0;
  int operand = 0;
  bool cache = false;
  size_t index = 0;  // into the products or the caches
};

struct Probed {
  ir::Program program;
  std::map<Key, std::pair<bool, size_t>> probe_of;  // → (a cache's, its index)
  std::map<Key, size_t> product_of, matrix_of;      // → the product's index
};

// `program` with a reshape to its own type of each requested operand right before its reader.
Probed add_probes(const ir::Program& program, const std::vector<ProbeRequest>& requests) {
  Probed probed{program, {}, {}, {}};
  for (uint32_t fi = 0; fi < program.functions.size(); ++fi) {
    std::map<uint32_t, const ProbeRequest*> here;
    for (const ProbeRequest& r : requests) {
      if (r.function == fi) here[r.let] = &r;
    }
    if (here.empty()) continue;
    const ir::Function& f = program.functions[fi];
    ir::Function& g = probed.program.functions[fi];
    std::vector<uint32_t> moved(f.lets.size());
    auto remap = [&](ir::ValueRef v) { return v.kind == ir::ValueRef::Kind::Let ? ir::ValueRef::let(moved[v.index]) : v; };
    g.lets.clear();
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      ir::Let let = f.lets[i];
      for (ir::ValueRef& v : let.operands) v = remap(v);
      if (auto it = here.find(i); it != here.end()) {
        const ProbeRequest& r = *it->second;
        const size_t a = static_cast<size_t>(r.operand);
        ir::Let probe{ir::Op::reshape, f.type_of(f.lets[i].operands[a]), {let.operands[a]}, {}, let.span};
        probed.probe_of[{g.name, static_cast<uint32_t>(g.lets.size())}] = {r.cache, r.index};
        let.operands[a] = ir::ValueRef::let(static_cast<uint32_t>(g.lets.size()));
        g.lets.push_back(probe);
        if (!r.cache) {
          probed.product_of[{g.name, static_cast<uint32_t>(g.lets.size())}] = r.index;
          probed.matrix_of[{g.name, let.operands[1 - a].index}] = r.index;
        }
      }
      moved[i] = static_cast<uint32_t>(g.lets.size());
      g.lets.push_back(let);
    }
    for (ir::ValueRef& v : g.results) v = remap(v);
  }
  return probed;
}

// The caches a contract keeps otherwise than as computed, with their probes' requests.
std::vector<CacheGap> kept_caches(const ir::Program& program, const Contract& contract, std::vector<ProbeRequest>& requests) {
  std::vector<CacheGap> caches;
  for (uint32_t fi = 0; fi < program.functions.size(); ++fi) {
    const ir::Function& f = program.functions[fi];
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (f.lets[i].op != ir::Op::cache_write || contract.keep_of(f.site_name(i)).kind == Keep::Kind::as_computed) continue;
      requests.push_back({fi, i, 1, true, caches.size()});
      caches.push_back({f.site_name(i), keep_name(contract.keep_of(f.site_name(i))), 0, 0, 0});
    }
  }
  return caches;
}

// A product's matrix as it is laid out: W[C, Q] (rows of A by W), or W[Q, C] (`transposed`: by Wᵀ,
// as a Hugging Face [out, in] weight), C the k contracted values and Q the n outputs.
struct MatrixLayout {
  int64_t k = 0, n = 0;
  bool transposed = false;
  size_t at(int64_t t, int64_t j) const { return static_cast<size_t>(transposed ? j * k + t : t * n + j); }
};

// Whether the spec is "<P><C>,<C><Q>-><P><Q>" or "<P><C>,<Q><C>-><P><Q>" with the activation first:
// rows of A by W[C, Q] (false) or by W[Q, C] (true); none otherwise.
std::optional<bool> row_product(const std::string& spec, int activation) {
  const size_t comma = spec.find(','), arrow = spec.find("->");
  if (activation != 0 || comma == std::string::npos || arrow == std::string::npos) return std::nullopt;
  const std::string a = spec.substr(0, comma), w = spec.substr(comma + 1, arrow - comma - 1), r = spec.substr(arrow + 2);
  for (size_t c = 1; c <= std::min(a.size(), w.size()); ++c) {
    const std::string contracted = a.substr(a.size() - c), rows = a.substr(0, a.size() - c);
    if (r.find_first_of(contracted) != std::string::npos) continue;
    if (w.compare(0, c, contracted) == 0 && r == rows + w.substr(c)) return false;
    if (w.compare(w.size() - c, c, contracted) == 0 && r == rows + w.substr(0, w.size() - c)) return true;
  }
  return std::nullopt;
}

// gap ← the larger of gap and |difference| (rounded up); a NaN difference (a value not finite on
// one side) is +∞, as every measured gap of presk has it.
void widen(double& gap, mpfr_srcptr difference) {
  if (mpfr_nan_p(difference)) {
    gap = std::numeric_limits<double>::infinity();
    return;
  }
  gap = std::max(gap, std::fabs(mpfr_get_d(difference, MPFR_RNDU)));
}

class GapObserver : public reference::Observer {
 public:
  GapObserver(const Probed& probed, const ir::Program& program, const Contract& contract,
              const std::vector<QuantizedProduct>& products, std::vector<CacheGap> caches,
              const exec::native::Realization& realization, long bits)
      : probed_(probed), program_(program), contract_(contract), products_(products), realization_(realization),
        gaps_(products.size()), caches_(std::move(caches)), activations_(products.size()), matrices_(products.size()),
        paths_(products.size()) {
    for (size_t p = 0; p < products.size(); ++p) {
      gaps_[p].site = products[p].product.site;
      gaps_[p].scheme = scheme_text(products[p].scheme);
      gaps_[p].block = products[p].block;
    }
    mpfr_inits2(bits, sum_, term_, other_, static_cast<mpfr_ptr>(nullptr));
  }
  ~GapObserver() override { mpfr_clears(sum_, term_, other_, static_cast<mpfr_ptr>(nullptr)); }

  void on_value(const reference::SiteContext& site, const reference::ValueView& value) override {
    const Key key{site.function.name, site.let_index};
    if (auto it = probed_.probe_of.find(key); it != probed_.probe_of.end()) {
      if (it->second.first) {
        keep_rows(caches_[it->second.second], value);
      } else {
        activations_[it->second.second] = quantize_row_blocks(value, products_[it->second.second]);
      }
    } else if (auto m = probed_.matrix_of.find(key); m != probed_.matrix_of.end()) {
      std::vector<double>& w = matrices_[m->second];
      w.resize(static_cast<size_t>(value.count));
      for (int64_t i = 0; i < value.count; ++i) w[static_cast<size_t>(i)] = mpfr_get_d(&value.mpfr[i], MPFR_RNDN);  // exact
      paths_[m->second] = ir::join_path(site.module_path, site.function.lets[site.let_index].attrs.path);
    } else if (auto p = probed_.product_of.find(key); p != probed_.product_of.end()) {
      evaluate(p->second, value);
    }
  }

  ContractGaps gaps() const { return {gaps_, caches_}; }

 private:
  // Each row (the last axis) of the rows a cache_write writes, kept as the contract says.
  void keep_rows(CacheGap& gap, const reference::ValueView& value) {
    const int64_t width = value.type.shape.empty() ? 1 : value.type.shape.back();
    const Keep keep = contract_.keep_of(gap.site);
    for (int64_t start = 0; start + width <= value.count; start += width) {
      const KeptRow row = keep_row_exact(value.mpfr + start, static_cast<size_t>(width), keep);
      for (int64_t i = 0; i < width; ++i) {
        mpfr_sub_d(term_, &value.mpfr[start + i], row.values[static_cast<size_t>(i)], MPFR_RNDN);
        widen(gap.representation, term_);
        gap.magnitude = std::max(gap.magnitude, std::fabs(mpfr_get_d(&value.mpfr[start + i], MPFR_RNDU)));
      }
      ++gap.rows;
    }
  }

  std::vector<QuantizedBlock> quantize_row_blocks(const reference::ValueView& value, const QuantizedProduct& q) const {
    std::vector<QuantizedBlock> blocks;
    for (int64_t start = 0; start < value.count; start += q.block) {
      blocks.push_back(quantize_block_exact(value.mpfr + start, static_cast<size_t>(q.block), q.scheme));
    }
    return blocks;
  }

  // The weights' integer form under the realization, when it is one the chip's sums can use.
  std::optional<exec::native::QuantizedWeights> integer_weights(size_t p, const MatrixLayout& layout) {
    const exec::native::QuantSpec* spec = realization_.param_quant(paths_[p]);
    const ir::Param* param = program_.find_param(paths_[p]);
    if (!spec || !param) {
      gaps_[p].why_not = "a matrix not stored as integers (" + paths_[p] + "; --realize with `quant`)";
      return std::nullopt;
    }
    const int64_t rank = param->type.rank();
    const int64_t over = (spec->over < 0 ? spec->over + rank : spec->over) - param->stack_depth;
    if (over != (layout.transposed ? 1 : 0)) {
      gaps_[p].why_not = "a matrix whose integer scales do not run along the contracted axis (" + paths_[p] + ")";
      return std::nullopt;
    }
    const std::vector<int64_t> shape = layout.transposed ? std::vector<int64_t>{layout.n, layout.k} : std::vector<int64_t>{layout.k, layout.n};
    return exec::native::quantize(matrices_[p], shape, spec->bits, over, spec->scheme == exec::native::QuantScheme::pow2,
                                  spec->group);
  }

  void evaluate(size_t p, const reference::ValueView& y) {
    const QuantizedProduct& q = products_[p];
    ProductGap& gap = gaps_[p];
    const ir::Let& let = program_.functions[q.product.function].lets[q.product.let];
    const std::optional<bool> transposed = row_product(let.attrs.spec, q.product.activation);
    if (!transposed) {
      gap.why_not = "its spec `" + let.attrs.spec + "` is not rows of the activation by the matrix";
      return;
    }
    const int64_t k = q.product.row, outer = y.count == 0 ? 0 : static_cast<int64_t>(activations_[p].size()) * q.block / k;
    const int64_t n = outer == 0 ? 0 : y.count / outer;
    const MatrixLayout layout{k, n, *transposed};
    std::optional<exec::native::QuantizedWeights> weights = integer_weights(p, layout);
    const int64_t group = weights && weights->group > 0 ? weights->group : k;
    const int64_t run = std::min(q.block, group);
    if (weights && (q.block % run != 0 || group % run != 0)) {
      gap.why_not = "the activation's blocks and the weights' groups do not nest";
      weights.reset();
    }
    std::vector<double> w_q = matrices_[p];
    if (weights) {
      for (size_t i = 0; i < w_q.size(); ++i) w_q[i] = static_cast<double>(weights->q_at(i)) * weights->scales[weights->scale_index(i)];
      for (int w = 0; w < word_count(q.scheme.words); ++w) {
        gap.bits_needed = std::max(gap.bits_needed, holds_accumulator(operands_of(*weights, q.scheme, w, run), contract_.accumulator_bits).bits_needed);
      }
    }
    if (weights) ++gap.integer_evaluations;
    gap.integer = gap.integer_evaluations > 0;
    ++gap.evaluations;
    const ChipOperands chip = weights ? chip_operands(p, layout, *weights) : ChipOperands{};
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        const __mpfr_struct* exact = &y.mpfr[o * n + j];
        gap.magnitude = std::max(gap.magnitude, std::fabs(mpfr_get_d(exact, MPFR_RNDU)));
        represented(p, o, j, layout, w_q);  // sum_ ← exact on the quantized operands
        mpfr_sub(term_, sum_, exact, MPFR_RNDN);
        widen(gap.representation, term_);
        if (!weights) continue;
        mpfr_sub_d(term_, sum_, chip_output(p, o, j, k, chip), MPFR_RNDN);
        widen(gap.arithmetic, term_);
      }
    }
  }

  // sum_ ← Σ_k A_q[o, k]·W_q[k, j], at the reference's precision.
  void represented(size_t p, int64_t o, int64_t j, const MatrixLayout& layout, const std::vector<double>& w_q) {
    const int64_t k = layout.k;
    const int64_t block = products_[p].block;
    mpfr_set_zero(sum_, 1);
    for (int64_t i = 0; i < k; ++i) {
      const QuantizedBlock& b = activations_[p][static_cast<size_t>((o * k + i) / block)];
      mpfr_set_d(term_, b.values[static_cast<size_t>((o * k + i) % block)], MPFR_RNDN);
      mpfr_set_d(other_, w_q[layout.at(i, j)], MPFR_RNDN);
      mpfr_fma(sum_, term_, other_, sum_, MPFR_RNDN);
    }
  }

  // The operands as the chip holds them (kernels.h, chip_dot): the activation's words as bytes
  // and its blocks' scales; the weights' codes by column [n][k] and their scales per group.
  struct ChipOperands {
    std::vector<std::vector<uint8_t>> words;
    std::vector<double> scales;
    std::vector<int8_t> columns;
    std::vector<float> column_scales;
    size_t group = 0;
  };

  ChipOperands chip_operands(size_t p, const MatrixLayout& layout, const exec::native::QuantizedWeights& weights) const {
    const int64_t k = layout.k, n = layout.n;
    const QuantizedProduct& q = products_[p];
    const std::vector<QuantizedBlock>& blocks = activations_[p];
    ChipOperands c;
    c.words.assign(static_cast<size_t>(word_count(q.scheme.words)), std::vector<uint8_t>(blocks.size() * static_cast<size_t>(q.block)));
    for (size_t b = 0; b < blocks.size(); ++b) {
      c.scales.push_back(blocks[b].scale);
      for (size_t w = 0; w < c.words.size(); ++w) {
        for (size_t i = 0; i < blocks[b].words[w].size(); ++i) c.words[w][b * static_cast<size_t>(q.block) + i] = static_cast<uint8_t>(blocks[b].words[w][i]);
      }
    }
    c.group = static_cast<size_t>(weights.group > 0 ? weights.group : k);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t t = 0; t < k; ++t) {
        const size_t index = layout.at(t, j);
        c.columns.push_back(static_cast<int8_t>(weights.q_at(index)));
        if (static_cast<size_t>(t) % c.group == 0) c.column_scales.push_back(weights.scales[weights.scale_index(index)]);
      }
    }
    return c;
  }

  // The chip's output (kernels.h, chip_dot): per run and word, the codes' sum in the contract's
  // accumulator, times the word's step and the two scales, added in binary64.
  double chip_output(size_t p, int64_t o, int64_t j, int64_t k, const ChipOperands& c) {
    const size_t row = static_cast<size_t>(o * k), groups = static_cast<size_t>(k) / c.group;
    CodesRow a;
    for (size_t w = 0; w < c.words.size(); ++w) a.words[w] = c.words[w].data() + row;
    a.scales = c.scales.data() + row / static_cast<size_t>(products_[p].block);
    a.block = static_cast<size_t>(products_[p].block);
    const CodesColumn w{c.columns.data() + static_cast<size_t>(j * k), c.column_scales.data() + static_cast<size_t>(j) * groups, c.group};
    bool overflowed = false;
    const double y = chip_dot(a, w, static_cast<size_t>(k), products_[p].scheme, contract_.accumulator_bits, contract_.overflow,
                              true, &overflowed);
    ++gaps_[p].outputs;
    if (overflowed) ++gaps_[p].overflowed;
    return y;
  }

  const Probed& probed_;
  const ir::Program& program_;
  const Contract& contract_;
  const std::vector<QuantizedProduct>& products_;
  const exec::native::Realization& realization_;
  std::vector<ProductGap> gaps_;
  std::vector<CacheGap> caches_;
  std::vector<std::vector<QuantizedBlock>> activations_;  // per product: its latest activation's blocks
  std::vector<std::vector<double>> matrices_;             // per product: its latest matrix
  std::vector<std::string> paths_;                        // and that matrix's full path
  mpfr_t sum_, term_, other_;
};

}  // namespace

ContractGaps measure_contract(const ir::Program& program, const ir::Function& entry, const Contract& contract,
                              const std::vector<QuantizedProduct>& products, const exec::native::Realization& realization,
                              const reference::ParameterStore& parameters, int64_t count, const SampleInputs& inputs,
                              long bits) {
  std::vector<ProbeRequest> requests;
  for (size_t p = 0; p < products.size(); ++p) {
    requests.push_back({products[p].product.function, products[p].product.let, products[p].product.activation, false, p});
  }
  std::vector<CacheGap> caches = kept_caches(program, contract, requests);
  const Probed probed = add_probes(program, requests);
  GapObserver observer(probed, program, contract, products, std::move(caches), realization, bits);
  reference::RunOptions options;
  options.bits = bits;
  options.observer = &observer;
  const reference::MpfrArith arith(bits);
  const ir::Function* probed_entry = probed.program.find_function(entry.name);
  internal_assert(probed_entry != nullptr);
  for (int64_t s = 0; s < count; ++s) {
    std::vector<reference::Value<reference::MpfrArith>> arguments;
    for (const reference::HostTensor& input : inputs(s)) arguments.push_back(reference::to_value(arith, input));
    reference::run_function(probed.program, *probed_entry, parameters, arguments, options);
  }
  return observer.gaps();
}

}  // namespace presk::numerics
