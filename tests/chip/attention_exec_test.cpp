// The contract's attention forms inside the executors (docs/chip.md, "Attention in the
// executors"): the chip's program takes an attention's queries, keys, values and weights in their
// forms; by hand on a small case, and the native executor against the exact reference on the
// corpus GPT, the same bits at any thread count and on the scalar path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "common/error_code.h"
#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "numerics/attention_forms.h"
#include "numerics/bind.h"
#include "numerics/quantize.h"

namespace presk::numerics {
namespace attention_exec {

using presk::testing::error_code;
using reference::MpfrArith;

const Scheme kAbsmaxRow{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};
const Scheme kUnsignedRow{Block::of_row(), {Scale::Kind::unsigned_pow2, 0}, Words::one};

Taken scheme_taken(const Scheme& scheme) {
  Taken t;
  t.scheme = scheme;
  return t;
}

// int8 queries, keys and values by rows under absmax scales; the weights unsigned over every key.
Contract int8_attention() {
  Contract c;
  c.chip = "int8 attention";
  c.attention = AttentionNumerics{scheme_taken(kAbsmaxRow), scheme_taken(kAbsmaxRow), scheme_taken(kAbsmaxRow),
                                  scheme_taken(kUnsignedRow)};
  return c;
}

ir::Program chip_of(const ir::Program& program, const Contract& contract) {
  const std::vector<QuantizedProduct> products = bind_contract(contract, program, nullptr);
  return chip_program(program, contract, quantize(program, contract, products), products);
}

// softmax(q·kᵀ)·v of two queries and two keys of width 4, the keys read through a transpose.
ir::Program small_attention() {
  const std::string text =
      "entry f($0 q : R[2, 4], $1 k : R[2, 4], $2 v : R[2, 4]) -> R[2, 4] {\n"
      "  %0 = transpose($1) axes=[1, 0] : R[4, 2]\n"
      "  %1 = contract($0, %0) spec=\"xy,yz->xz\" : R[2, 2]\n"
      "  %2 = softmax(%1) axes=[1] : R[2, 2]\n"
      "  %3 = contract(%2, $2) spec=\"xy,yz->xz\" : R[2, 4]\n"
      "  return %3\n}\n";
  ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"a.pir", text}));
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

const std::vector<std::vector<double>> kSmall = {{0, 0, 0, 0, 1, 0.5, 0, 0},   // q
                                                 {1, 1, 0, 0, 0, 0, 0, 0},     // k
                                                 {1, 2, 3, 4, -8, 0.5, 0, 1}};  // v

std::vector<double> small_exact(const ir::Program& program) {
  const MpfrArith arith(256);
  const ir::Function& f = program.functions[0];
  std::vector<reference::Value<MpfrArith>> arguments;
  for (size_t i = 0; i < 3; ++i) arguments.push_back(reference::to_value(arith, reference::HostTensor{f.argument_types[i], kSmall[i], {}}));
  const auto out = reference::run_function<MpfrArith>(program, f, {}, arguments, reference::RunOptions{256, 2, nullptr, {}});
  std::vector<double> values;
  for (int64_t i = 0; i < out[0].size(); ++i) values.push_back(arith.to_double(out[0].real(i)));
  return values;
}

Tensor small_native(const ir::Program& program, exec::native::RealType type, int threads, bool scalar) {
  std::vector<Tensor> x;
  for (const std::vector<double>& values : kSmall) {
    Tensor& t = x.emplace_back(ElementType::f64, std::vector<int64_t>{2, 4});
    for (size_t i = 0; i < values.size(); ++i) t.set(i, values[i]);
  }
  return exec::native::execute(program, "f", exec::native::uniform_realization(type), x, {}, {threads, scalar}).at(0);
}

TEST(AttentionInExecutors, TheFormsQuantizesAreInTheChipsProgram) {
  const ir::Program chip = chip_of(small_attention(), int8_attention());
  const ir::Function& f = chip.functions[0];
  int quantizes = 0;
  for (const ir::Let& let : f.lets) quantizes += let.op == ir::Op::quantize;
  EXPECT_EQ(quantizes, 4) << ir::print_program(chip);
  // The keys are taken in rows along the contracted axis: before the transpose, which reads them.
  for (const ir::Let& let : f.lets) {
    if (let.op != ir::Op::transpose) continue;
    ASSERT_EQ(let.operands[0].kind, ir::ValueRef::Kind::Let) << ir::print_program(chip);
    EXPECT_EQ(f.lets[let.operands[0].index].op, ir::Op::quantize) << ir::print_program(chip);
  }
  // The weighted sum reads the weights times the value rows' scales, and the values' codes.
  const ir::Let& sum = f.lets.back();
  ASSERT_EQ(sum.op, ir::Op::contract);
  EXPECT_EQ(f.lets[sum.operands[0].index].attrs.spec, "weights|unsigned/one|absmax/one|xy,yz") << ir::print_program(chip);
  EXPECT_EQ(f.lets[sum.operands[1].index].attrs.spec, "codes/absmax/one") << ir::print_program(chip);
  // Every other site keeps its name.
  EXPECT_EQ(f.site_name(static_cast<uint32_t>(f.lets.size() - 1)), "f/%3");
}

TEST(AttentionInExecutors, SmallCaseByHand) {
  const ir::Program chip = chip_of(small_attention(), int8_attention());
  const std::vector<double> exact = small_exact(chip);
  // Values: row 0 [1, 2, 3, 4] at s₀ = f32(4/127), codes [32, 64, 95, 127] (63.5 a tie: 64);
  // row 1 [−8, 0.5, 0, 1] at s₁ = f32(8/127), codes [−127, 8, 0, 16].
  const double s0 = static_cast<float>(4.0 / 127), s1 = static_cast<float>(8.0 / 127);
  const double c0[4] = {32, 64, 95, 127}, c1[4] = {-127, 8, 0, 16};
  // Query 0 is zeros: scores [0, 0], weights [1/2, 1/2], t = [s₀/2, s₁/2]. Unsigned over the two
  // keys: the least 2^e with s₁/2 ≤ 255·2^e is 2^-12; codes 2048·s₀ = 64.50… → 65, 2048·s₁ = 129.0… → 129.
  // out = 2^-12·(65·c₀ + 129·c₁) = 2^-12·[−14303, 5192, 6175, 10319].
  const double row0[4] = {-14303, 5192, 6175, 10319};
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(exact[d], std::ldexp(row0[d], -12)) << d;
  // Query 1 [1, 0.5, 0, 0] at s_q = f32(1/127), codes [127, ⌊0.5/s_q⌉]; key 0 [1, 1, 0, 0] at the
  // same scale, codes [127, 127]; key 1 zeros. Score a = s_q²·127·(127 + c), and 0.
  const double sq = static_cast<float>(1.0 / 127), c = std::nearbyint(0.5 / sq);
  const double a = sq * sq * 127 * (127 + c);
  const double t0 = s0 / (1 + std::exp(-a)), t1 = s1 / (1 + std::exp(a));
  const double sw = std::ldexp(1, static_cast<int>(std::ceil(std::log2(std::max(t0, t1) / 255))));
  const double q0 = std::nearbyint(t0 / sw), q1 = std::nearbyint(t1 / sw);
  ASSERT_GT(q0, 127);  // the larger weight's code needs the unsigned byte
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(exact[4 + d], sw * (q0 * c0[d] + q1 * c1[d])) << d;
  // The native executor: every t̂ and code exact in binary32, and so are these sums.
  for (int threads : {1, 2}) {
    for (bool scalar : {false, true}) {
      const Tensor native = small_native(chip, exec::native::RealType::f32, threads, scalar);
      for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(native.get(i), exact[i]) << i;
    }
  }
  // Without the forms, the plain program's output is another.
  EXPECT_NE(small_exact(small_attention()), exact);
}

TEST(AttentionInExecutors, FloatFormsRoundEachValue) {
  Contract contract = int8_attention();
  Taken bf16;
  bf16.float_format = FloatFormat::bf16;
  contract.attention->values = bf16;
  contract.attention->weights = bf16;
  const ir::Program chip = chip_of(small_attention(), contract);
  const std::vector<double> exact = small_exact(chip);
  // Query 0: weights [1/2, 1/2] (exact in bf16); the values rounded to bf16 (all exact here).
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(exact[d], 0.5 * (kSmall[2][d] + kSmall[2][4 + d])) << d;
  const Tensor native = small_native(chip, exec::native::RealType::f32, 2, false);
  for (size_t i = 0; i < exact.size(); ++i) EXPECT_NEAR(native.get(i), exact[i], 1e-6 * std::fabs(exact[i])) << i;
}

TEST(AttentionInExecutors, BadFormsAreCodedErrors) {
  const ir::Program program = small_attention();
  Contract blocks = int8_attention();
  blocks.attention->keys.scheme->block = Block::fixed_count(3);  // rows of 4
  EXPECT_EQ(error_code([&] { bind_contract(blocks, program, nullptr); }), "E1711");
  Contract short_values = int8_attention();
  short_values.attention->values.scheme->block = Block::fixed_count(2);
  EXPECT_EQ(error_code([&] { bind_contract(short_values, program, nullptr); }), "E1726");
  Contract negative = int8_attention();
  negative.attention->queries = scheme_taken(kUnsignedRow);
  EXPECT_EQ(error_code([&] { bind_contract(negative, program, nullptr); }), "E1714");
}

// An attention's own forms (`attentions`, by its scores' site) override the contract's: none
// attends on its values as kept, no quantize; an entry naming no attention's scores is E1728.
TEST(AttentionInExecutors, EachAttentionsOwnFormsOverrideTheContracts) {
  const ir::Program program = small_attention();
  Contract c = int8_attention();
  c.attentions["f/%1"] = std::nullopt;
  EXPECT_TRUE(c.has_attention_forms());
  const ir::Program kept = chip_of(program, c);
  for (const ir::Let& let : kept.functions[0].lets) EXPECT_NE(let.op, ir::Op::quantize) << ir::print_program(kept);
  EXPECT_NE(attention_text(program, c).find("attention f/%1 · f/%3  on its values as kept"), std::string::npos)
      << attention_text(program, c);
  Contract own;  // no default forms; the one attention its own
  own.attentions["f/%1"] = int8_attention().attention;
  EXPECT_EQ(ir::print_program(chip_of(program, own)), ir::print_program(chip_of(program, int8_attention())));
  own.attentions["f/%2"] = std::nullopt;  // the softmax is no attention's scores
  EXPECT_EQ(error_code([&] { bind_contract(own, program, nullptr); }), "E1728");
}

ir::Program gpt(const std::string& entry) {
  lang::FrontendOptions options;
  options.dims = {{"T", 8}};
  options.entry = entry;
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt.psk"), options);
}

// The corpus GPT's logits with int8 attention: the native run the same bits at 1, 2 and 3 threads
// and on the scalar path; near the exact meaning of the chip's program, which lies farther from
// the plain program's.
TEST(AttentionInExecutors, NativeAgreesWithTheReferenceOnTheGpt) {
  const ir::Program program = gpt("logits");
  const ir::Program chip = chip_of(program, int8_attention());
  ASSERT_FALSE(attention_sites(program).empty());
  const ir::Function& entry = *chip.find_function("logits");
  const std::vector<reference::HostTensor> inputs = reference::synthesize_inputs(entry, 5, reference::default_token_range(chip));
  reference::ParameterStore store = reference::synthesize_parameters(program, 7, 1);
  std::vector<double> head(64 * 63);  // the head starts at zeros: logits of 0 whatever the chip
  for (size_t i = 0; i < head.size(); ++i) head[i] = 0.3 * std::sin(1.0 + 0.7 * static_cast<double>(i));
  store.set("head", head);
  const auto realization = exec::native::uniform_realization(exec::native::RealType::f32);
  const auto params = exec::native::prepare_parameters(chip, realization, [&](const std::string& path) { return store.find(path); });
  const std::vector<Tensor> tensors = reference::to_tensors(inputs);
  const Tensor one = exec::native::execute(chip, "logits", realization, tensors, params, {1, true}).at(0);
  for (const auto& [threads, scalar] : {std::pair{1, false}, {2, false}, {3, true}}) {
    const Tensor more = exec::native::execute(chip, "logits", realization, tensors, params, {threads, scalar}).at(0);
    ASSERT_EQ(one.byte_size(), more.byte_size());
    EXPECT_TRUE(std::equal(one.bytes().begin(), one.bytes().end(), more.bytes().begin())) << threads << " threads";
  }
  const MpfrArith arith(128);
  auto exact = [&](const ir::Program& p) {
    std::vector<reference::Value<MpfrArith>> arguments;
    for (const reference::HostTensor& x : inputs) arguments.push_back(reference::to_value(arith, x));
    const auto out = reference::run_function<MpfrArith>(p, *p.find_function("logits"), store, arguments,
                                                        reference::RunOptions{128, 2, nullptr, {}});
    std::vector<double> values;
    for (int64_t i = 0; i < out[0].size(); ++i) values.push_back(arith.to_double(out[0].real(i)));
    return values;
  };
  const std::vector<double> chip_exact = exact(chip), plain_exact = exact(program);
  double arithmetic = 0, representation = 0, largest = 0;
  for (size_t i = 0; i < chip_exact.size(); ++i) {
    arithmetic = std::max(arithmetic, std::fabs(one.get(i) - chip_exact[i]));
    representation = std::max(representation, std::fabs(chip_exact[i] - plain_exact[i]));
    largest = std::max(largest, std::fabs(plain_exact[i]));
  }
  EXPECT_GT(representation, 1e-5 * largest) << "int8 attention moves the logits";
  EXPECT_LT(representation, 0.05 * largest);
  EXPECT_LT(arithmetic, representation / 10) << "the f32 run lies nearer its own meaning";
}

}  // namespace attention_exec
}  // namespace presk::numerics
