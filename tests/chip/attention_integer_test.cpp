// An attention's products as the chip's integer sums in the native executor (docs/chip.md, "The
// chip's products"): where the contract's forms quantize the queries and keys, or the weights and
// the values, the scores and the weighted sum are computed from the quantizes' codes, and each is
// the exact meaning of the chip's program on the executor's own operands — the exact sum of the
// values the forms stand for, rounded once to binary64 and once into the site's type — bit for
// bit, at 1 and 2 threads and on the scalar path. The float arithmetic on the forms' values,
// which the executor ran before, is not.
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/nonzero_parameters.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "numerics/attention_forms.h"
#include "numerics/bind.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "numerics/scheme/attention_spec.h"
#include "numerics/scheme/meaning.h"
#include "numerics/scheme/rational.h"
#include "support/random.h"

namespace presk::numerics {
namespace attention_integer {

using exec::native::RealType;

constexpr int64_t kT = 7;

Taken scheme_taken(Block block, Scale::Kind scale, Words words) {
  Taken t;
  t.scheme = Scheme{block, {scale, 0}, words};
  return t;
}

// examples/contracts/kv_int8.json (int8 cache rows, keys and values int8 by rows), its queries
// taken in `queries` words by rows and its weights unsigned over every key: both of the
// attention's products on codes.
Contract integer_attention(Words queries) {
  Contract c =
      read_contract_file(std::string(PRESK_SOURCE_DIR) + "/examples/contracts/kv_int8.json");
  c.attention->queries = scheme_taken(Block::of_row(), Scale::Kind::absmax, queries);
  c.attention->weights = scheme_taken(Block::of_row(), Scale::Kind::unsigned_pow2, Words::one);
  return c;
}

ir::Program compile(const std::string& file) {
  lang::FrontendOptions options;
  if (file == "gpt.psk") options.consts = {{"V", 11}, {"D", 8}};
  options.dims = {{"T", kT}};
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file),
                       options);
}

ir::Program chip_of(const ir::Program& program, const Contract& contract) {
  const std::vector<QuantizedProduct> products = bind_contract(contract, program, nullptr);
  return chip_program(program, contract, quantize(program, contract, products), products);
}

// A value's elements, exactly, row-major in its shape; `coded`: a quantize's in a scheme (the
// chip holds its codes), or a transpose of one.
struct Exact {
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool coded = false;
};

Exact observed(const exec::native::Value& value) {
  const exec::native::Buffer<double> x = exec::native::load_f64(value);
  return {value.shape, std::vector<double>(x.begin(), x.end()), false};
}

// What a quantize let's result stands for, exactly, by the meaning on the operands the native
// run gave it: a scheme's or a float form's values, a value row's codes in units of its scale,
// or the weights times their value rows' scales in their form.
Exact exact_quantize(const ir::Let& let, const std::vector<const exec::native::Value*>& operands) {
  Exact x = observed(*operands[0]);
  const size_t block = static_cast<size_t>(let.attrs.starts.at(0));
  if (operands.size() == 2) {
    const WeightsForm form = *weights_of_spec(let.attrs.spec, let.attrs.starts);
    const Exact v = observed(*operands[1]);
    const size_t row = static_cast<size_t>(v.shape.back());
    std::vector<double> scales;
    for (size_t r = 0; r < v.values.size(); r += row)
      scales.push_back(quantize_block_exact(v.values.data() + r, row, form.values).scale);
    const std::vector<size_t> row_of = value_row_of_weights(form, x.shape, v.shape);
    x.coded = form.weights.scheme.has_value();
    for (size_t start = 0; start < x.values.size(); start += block) {
      std::vector<mpq_class> t;
      for (size_t i = start; i < start + block; ++i)
        t.push_back(mpq_class(x.values[i]) * mpq_class(scales[row_of[i]]));
      for (size_t i = 0; i < block; ++i) {
        x.values[start + i] = form.weights.scheme
                                  ? quantize_rationals(t, *form.weights.scheme).values[i]
                                  : round_rational(t[i], *form.weights.float_format);
      }
    }
    return x;
  }
  const std::optional<Scheme> codes = codes_of_spec(let.attrs.spec, let.attrs.starts);
  const std::optional<Keep> keep = keep_of_spec(let.attrs.spec);
  x.coded = !keep;
  for (size_t start = 0; start < x.values.size(); start += block) {
    double* row = x.values.data() + start;
    if (keep) {
      const KeptRow kept = keep_row_exact(row, block, *keep);
      std::copy(kept.values.begin(), kept.values.end(), row);
    } else if (codes) {
      const QuantizedBlock q = quantize_block_exact(row, block, *codes);
      for (size_t i = 0; i < block; ++i)
        row[i] = q.scale == 0 ? 0 : codes_value(q.words, i, codes->words);
    } else {
      const QuantizedBlock q =
          quantize_block_exact(row, block, scheme_of_spec(let.attrs.spec, let.attrs.starts));
      std::copy(q.values.begin(), q.values.end(), row);
    }
  }
  return x;
}

Exact exact_transpose(const Exact& x, const std::vector<int64_t>& axes) {
  std::vector<int64_t> shape;
  for (int64_t a : axes) shape.push_back(x.shape[static_cast<size_t>(a)]);
  std::vector<size_t> strides(x.shape.size(), 1);
  for (size_t a = x.shape.size() - 1; a-- > 0;)
    strides[a] = strides[a + 1] * static_cast<size_t>(x.shape[a + 1]);
  Exact out{shape, std::vector<double>(x.values.size()), x.coded};
  std::vector<int64_t> index(shape.size(), 0);
  for (double& value : out.values) {
    size_t from = 0;
    for (size_t a = 0; a < shape.size(); ++a)
      from += static_cast<size_t>(index[a]) * strides[static_cast<size_t>(axes[a])];
    value = x.values[from];
    for (size_t a = shape.size(); a-- > 0 && ++index[a] == shape[a];) index[a] = 0;
  }
  return out;
}

// The einsum `spec` of a and b: each output the exact sum, rounded once to binary64.
std::vector<double> exact_einsum(const std::string& spec, const Exact& a, const Exact& b) {
  const size_t comma = spec.find(','), arrow = spec.find("->");
  const std::string la = spec.substr(0, comma), lb = spec.substr(comma + 1, arrow - comma - 1),
                    lo = spec.substr(arrow + 2);
  std::string letters = lo;  // the output's, then the contracted ones
  std::map<char, int64_t> extent;
  for (size_t i = 0; i < la.size(); ++i) extent[la[i]] = a.shape[i];
  for (size_t i = 0; i < lb.size(); ++i) extent[lb[i]] = b.shape[i];
  for (char c : la) {
    if (lo.find(c) == std::string::npos) letters += c;
  }
  auto index_in = [&](const std::string& operand, const std::vector<int64_t>& shape,
                      const std::map<char, int64_t>& at) {
    size_t index = 0;
    for (size_t i = 0; i < operand.size(); ++i)
      index = index * static_cast<size_t>(shape[i]) + static_cast<size_t>(at.at(operand[i]));
    return index;
  };
  size_t outputs = 1, terms = 1;
  for (char c : lo) outputs *= static_cast<size_t>(extent[c]);
  for (size_t i = lo.size(); i < letters.size(); ++i)
    terms *= static_cast<size_t>(extent[letters[i]]);
  std::vector<double> out;
  for (size_t o = 0; o < outputs; ++o) {
    mpq_class sum = 0;
    for (size_t t = 0; t < terms; ++t) {
      std::map<char, int64_t> at;
      size_t rest = o * terms + t;
      for (size_t i = letters.size(); i-- > 0;) {
        at[letters[i]] = static_cast<int64_t>(rest % static_cast<size_t>(extent[letters[i]]));
        rest /= static_cast<size_t>(extent[letters[i]]);
      }
      sum += mpq_class(a.values[index_in(la, a.shape, at)]) *
             mpq_class(b.values[index_in(lb, b.shape, at)]);
    }
    out.push_back(nearest_binary64(sum));
  }
  return out;
}

// Follows a native run let by let: the exact values of its quantizes (and transposes of them),
// and each contraction of two such values in schemes — an attention's scores or weighted sum on
// codes — against its exact sum rounded once to binary64 and once into the site's type.
struct MeaningCheck {
  std::map<std::pair<std::string, uint32_t>, Exact>
      exact;  // by function and let, the latest call's
  int checked = 0, differing = 0;
  std::string first_difference;

  void observe(const exec::native::LetObservation& o) {
    const ir::Let& let = o.function.lets[o.let_index];
    const auto recorded = [&](size_t i) -> const Exact* {
      const ir::ValueRef v = let.operands.at(i);
      const auto it = exact.find({o.function.name, v.index});
      return v.kind == ir::ValueRef::Kind::Let && it != exact.end() ? &it->second : nullptr;
    };
    if (let.op == ir::Op::quantize) {
      exact[{o.function.name, o.let_index}] = exact_quantize(let, o.operands);
    } else if (let.op == ir::Op::transpose && recorded(0)) {
      exact[{o.function.name, o.let_index}] = exact_transpose(*recorded(0), let.attrs.axes);
    } else if (let.op == ir::Op::contract && recorded(0) && recorded(1) && recorded(0)->coded &&
               recorded(1)->coded) {
      const std::vector<double> meant = exact_einsum(let.attrs.spec, *recorded(0), *recorded(1));
      const Exact got = observed(o.value);
      for (size_t i = 0; i < meant.size(); ++i) {
        const double want = o.value.type == RealType::f64 ? meant[i]
                            : o.value.type == RealType::f32
                                ? static_cast<float>(meant[i])
                                : round_to_float_format(meant[i], FloatFormat::bf16);
        if (got.values[i] != want && differing++ == 0) {
          std::ostringstream text;
          text << o.function.site_name(o.let_index) << "[" << i << "]: " << std::hexfloat
               << got.values[i] << " for " << want;
          first_difference = text.str();
        }
      }
      ++checked;
    }
  }
};

struct Observed {
  std::vector<std::vector<uint8_t>> bytes;  // each result's, each step's
  MeaningCheck check;
};

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* data = reinterpret_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(data, data + t.byte_size());
}

Tensor integers(std::vector<int64_t> values, std::vector<int64_t> shape) {
  Tensor t(ElementType::i64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_integer(i, values[i]);
  return t;
}

const std::vector<int64_t> kTokens = {3, 1, 4, 1, 5, 9, 2};

struct Model {
  explicit Model(const std::string& file, const Contract& contract)
      : program(compile(file)), chip(chip_of(program, contract)), store(testing::nonzero_parameters(program)) {}
  ir::Program program, chip;
  reference::ParameterStore store;
};

// The chip's prefill (`logits`) and then a decode step at each position, under `realization`,
// each let observed by a MeaningCheck where `observe`.
Observed run(const Model& model, const exec::native::Realization& realization, int threads,
             bool scalar, bool observe) {
  using namespace exec::native;
  Observed out;
  const LetObserver observer = [&](const LetObservation& o) { out.check.observe(o); };
  ExecuteOptions options(threads, scalar);
  if (observe) options.observer = &observer;
  const PreparedParameters parameters = prepare_parameters(
      model.chip, realization, [&](const std::string& path) { return model.store.find(path); });
  out.bytes.push_back(bytes_of(
      execute(model.chip, "logits", realization, {integers(kTokens, {kT})}, parameters, options)
          .at(0)));
  const std::vector<int64_t> cache_shape =
      model.chip.find_function("decode")->argument_types[0].shape;
  Value kc =
      argument_value(model.chip, "decode", 0, Tensor(ElementType::f64, cache_shape), realization);
  Value vc =
      argument_value(model.chip, "decode", 1, Tensor(ElementType::f64, cache_shape), realization);
  for (int64_t t = 0; t < kT; ++t) {
    std::vector<Value> arguments;
    arguments.push_back(std::move(kc));
    arguments.push_back(std::move(vc));
    arguments.push_back(argument_value(model.chip, "decode", 2, integers({t}, {}), realization));
    arguments.push_back(argument_value(
        model.chip, "decode", 3, integers({kTokens[static_cast<size_t>(t)]}, {1}), realization));
    std::vector<Value> results = execute_values(model.chip, "decode", realization,
                                                std::move(arguments), parameters, options);
    out.bytes.push_back(bytes_of(output_tensor(results[0])));
    kc = std::move(results[1]);
    vc = std::move(results[2]);
  }
  out.bytes.push_back(bytes_of(output_tensor(kc)));
  out.bytes.push_back(bytes_of(output_tensor(vc)));
  return out;
}

// Every attention product on codes (`products` of each attention: 2, or 1 where the queries are
// a float's) of the prefill and of each decode step is the meaning's bits, and the runs at 1 and
// 2 threads, SIMD and scalar, the same bytes.
void expect_meaning(const std::string& file, const Contract& contract, RealType type,
                    int products = 2) {
  const Model model(file, contract);
  const std::vector<AttentionSite> sites = attention_sites(model.program);
  ASSERT_EQ(sites.size(), 2u) << "the prefill's and the decode step's";
  const auto realization = chip_realization(exec::native::uniform_realization(type), contract);
  const Observed observed = run(model, realization, 2, false, true);
  // Per layer (the caches' first axis): the prefill's two products, and each decode step's two.
  const int64_t layers = model.chip.find_function("decode")->argument_types[0].shape[0];
  EXPECT_EQ(observed.check.checked, layers * products * (1 + kT));
  EXPECT_EQ(observed.check.differing, 0) << observed.check.first_difference;
  const Observed one = run(model, realization, 1, false, false);
  for (const auto& [threads, scalar] : {std::pair{2, false}, {1, true}}) {
    EXPECT_EQ(run(model, realization, threads, scalar, false).bytes, one.bytes)
        << threads << " threads, scalar " << scalar;
  }
}

TEST(AttentionIntegerSums, GptPrefillAndDecodeAreTheMeaningBitForBitInF32) {
  expect_meaning("gpt.psk", integer_attention(Words::one), RealType::f32);
}
TEST(AttentionIntegerSums, GptPrefillAndDecodeAreTheMeaningBitForBitInF64) {
  expect_meaning("gpt.psk", integer_attention(Words::one), RealType::f64);
}
TEST(AttentionIntegerSums, GptPrefillAndDecodeAreTheMeaningBitForBitInBf16) {
  expect_meaning("gpt.psk", integer_attention(Words::one), RealType::bf16);
}
TEST(AttentionIntegerSums, TwoWordQueriesAreTheMeaningBitForBit) {
  expect_meaning("gpt.psk", integer_attention(Words::two_rest), RealType::f32);
}
TEST(AttentionIntegerSums, LlamaPrefillAndDecodeAreTheMeaningBitForBit) {
  expect_meaning("llama.psk", integer_attention(Words::one), RealType::f32);
}
// The rotated int8 KV example as it ships: queries in f32 (the scores on the forms' values), the
// weights unsigned — the weighted sum on codes.
TEST(AttentionIntegerSums, RotatedKvCachesWeightedSumIsTheMeaningBitForBit) {
  expect_meaning("gpt.psk",
                 read_contract_file(std::string(PRESK_SOURCE_DIR) +
                                    "/examples/contracts/kv_int8_rotated.json"),
                 RealType::f32, 1);
}

// Without the integer sums, the contractions run in f32 on the values the forms stand for: not
// the meaning's bits.
TEST(AttentionIntegerSums, TheFloatPathOnTheFormsValuesIsNotTheMeaning) {
  const Model model("gpt.psk", integer_attention(Words::one));
  const Observed floats =
      run(model, exec::native::uniform_realization(RealType::f32), 1, false, true);
  EXPECT_GT(floats.check.checked, 0);
  EXPECT_GT(floats.check.differing, 0);
}

// The scores and weighted sum of two queries over two keys of width 8, the keys through a
// transpose: a small attention whose scores are a result too.
ir::Program small_attention() {
  const std::string text =
      "entry f($0 q : R[2, 8], $1 k : R[2, 8], $2 v : R[2, 8]) -> (R[2, 2], R[2, 8]) {\n"
      "  %0 = transpose($1) axes=[1, 0] : R[8, 2]\n"
      "  %1 = contract($0, %0) spec=\"xy,yz->xz\" : R[2, 2]\n"
      "  %2 = softmax(%1) axes=[1] : R[2, 2]\n"
      "  %3 = contract(%2, $2) spec=\"xy,yz->xz\" : R[2, 8]\n"
      "  return %1, %3\n}\n";
  ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"a.pir", text}));
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

// The attention's integer sums are the contract's accumulator's: 16 bits saturating hold no sum
// of eight products 127·127 (129032), so the chip's score of a query by a key of the same values
// is 32767·s², where 32 bits give the meaning, 129032·s² (s = f32(1/127) for rows of ones); and
// holds_accumulator says so from the forms: the scores need 18 bits (8·127·127), the weighted
// sum 17 (2 keys · 255 · 127).
TEST(AttentionIntegerSums, TheirSumsAreTheContractsAccumulatorAndItsCheck) {
  Contract contract = integer_attention(Words::one);
  const ir::Program chip = chip_of(small_attention(), contract);
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) {
    Tensor& t = inputs.emplace_back(ElementType::f64, std::vector<int64_t>{2, 8});
    for (size_t j = 0; j < 16; ++j) t.set(j, i == 2 ? static_cast<double>(j) - 7.5 : 1.0);
  }
  const double s = static_cast<float>(1.0 / 127);
  for (const auto& [bits, overflow, sum] :
       {std::tuple{32, Overflow::wrap, 129032.0}, {16, Overflow::saturate, 32767.0}}) {
    contract.accumulator_bits = bits;
    contract.overflow = overflow;
    const auto realization =
        chip_realization(exec::native::uniform_realization(RealType::f64), contract);
    for (int threads : {1, 2}) {
      const Tensor scores =
          exec::native::execute(chip, "f", realization, inputs, {}, {threads, false}).at(0);
      for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(scores.get(i), sum * (s * s)) << bits << " bits, score " << i;
    }
    const ir::Program program = small_attention();
    const AttentionAccumulators sums =
        attention_accumulators(program, attention_sites(program)[0], *contract.attention, contract);
    ASSERT_TRUE(sums.scores && sums.weighted);
    EXPECT_EQ(sums.scores->bits_needed, 18);
    EXPECT_EQ(sums.weighted->bits_needed, 17);
    EXPECT_EQ(sums.scores->holds, bits == 32);
    EXPECT_EQ(sums.weighted->holds, bits == 32);
  }
  EXPECT_NE(attention_text(small_attention(), contract)
                .find("its scores in integers: 18 accumulator bits; 16 do not hold them"),
            std::string::npos)
      << attention_text(small_attention(), contract);
  // The shipped int8 KV contract takes its queries and weights in f32: no integer sums.
  const Contract kv =
      read_contract_file(std::string(PRESK_SOURCE_DIR) + "/examples/contracts/kv_int8.json");
  const ir::Program program = small_attention();
  const AttentionAccumulators floats =
      attention_accumulators(program, attention_sites(program)[0], *kv.attention, kv);
  EXPECT_FALSE(floats.scores || floats.weighted);
}

}  // namespace attention_integer
}  // namespace presk::numerics
