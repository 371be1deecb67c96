// The IR's `quantize` op (ops.def; docs/chip.md, "The quantize op") in both executors, computed
// by hand on a small case, and the quantize pass's program (numerics/quantize.h, chip_program):
// the placement made quantize lets, every other site's name kept, the same bits at any thread
// count.
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
#include "ir/sites.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "numerics/bind.h"
#include "numerics/quantize.h"
#include "numerics/scheme/meaning.h"

namespace presk::numerics {
namespace {

using presk::testing::error_code;
using reference::MpfrArith;

ir::Program quantize_program(const std::string& spec, int64_t block) {
  const std::string text = "entry q($0 x : R[2, 8]) -> R[2, 8] {\n  %0 = quantize($0) axes=[1] starts=[" +
                           std::to_string(block) + "] spec=\"" + spec + "\" : R[2, 8]\n  return %0\n}\n";
  ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"q.pir", text}));
  ir::verify_program(program, ir::VerifyMode::UserInput);  // as every command checks IR read from a file
  return program;
}

const std::vector<double> kX = {1, 2, 3, 4, -0.5, 0.25, 0, 0.125,  //
                                 0, 0, 0, 0, 1e-3, -2e-3, 3e-3, 100};

std::vector<double> exact_run(const ir::Program& program) {
  const MpfrArith arith(128);
  reference::HostTensor x{program.functions[0].argument_types[0], kX, {}};
  std::vector<reference::Value<MpfrArith>> arguments;
  arguments.push_back(reference::to_value(arith, x));
  const auto out = reference::run_function<MpfrArith>(program, program.functions[0], {}, arguments,
                                                      reference::RunOptions{128, 2, nullptr, {}});
  std::vector<double> values;
  for (int64_t i = 0; i < out[0].size(); ++i) values.push_back(arith.to_double(out[0].real(i)));
  return values;
}

Tensor native_run(const ir::Program& program, exec::native::RealType type, int threads) {
  Tensor x(ElementType::f64, {2, 8});
  for (size_t i = 0; i < kX.size(); ++i) x.set(i, kX[i]);
  return exec::native::execute(program, "q", exec::native::uniform_realization(type), {x}, {}, {threads, false}).at(0);
}

TEST(QuantizeOp, BlocksOfFourByHand) {
  const ir::Program program = quantize_program("absmax/one", 4);
  const std::vector<double> exact = exact_run(program);
  // Block [1, 2, 3, 4]: s = f32(4/127); codes ⌊x·127/4⌉ = 32 (31.75), 64 (63.5, ties to even), 95, 127.
  const double s = static_cast<float>(4.0 / 127);
  const std::vector<double> first = {32 * s, 64 * s, 95 * s, 127 * s};
  EXPECT_EQ(std::vector<double>(exact.begin(), exact.begin() + 4), first);
  // Block [0, 0, 0, 0]: s = 0, every code 0.
  EXPECT_EQ(std::vector<double>(exact.begin() + 8, exact.begin() + 12), std::vector<double>(4, 0.0));
  // Every block as the meaning (meaning.h) quantizes it.
  EXPECT_EQ(exact, dequantized(quantize_row_exact(kX.data(), kX.size(), 4, *parse_scheme_spec("absmax/one", 4))));
  // The native executor: the meaning's values, rounded once into the site's type; f64 keeps them.
  const Tensor f32 = native_run(program, exec::native::RealType::f32, 1);
  const Tensor f64 = native_run(program, exec::native::RealType::f64, 1);
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(f32.get(i), static_cast<float>(exact[i])) << i;
    EXPECT_EQ(f64.get(i), exact[i]) << i;
  }
}

TEST(QuantizeOp, EverySchemeInBothExecutors) {
  for (const std::string spec : {"absmax/two_rest", "pow2(1)/one", "pow2(3)/three", "absmax/two_code16"}) {
    for (int64_t block : {2, 8}) {
      const ir::Program program = quantize_program(spec, block);
      const std::vector<double> exact = exact_run(program);
      EXPECT_EQ(exact, dequantized(quantize_row_exact(kX.data(), kX.size(), block, *parse_scheme_spec(spec, block))));
      const Tensor f64 = native_run(program, exec::native::RealType::f64, 2);
      for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(f64.get(i), exact[i]) << spec << " " << i;
    }
  }
}

TEST(QuantizeOp, MalformedSchemesAreCodedErrors) {
  EXPECT_EQ(error_code([] { exact_run(quantize_program("absmax/four", 4)); }), "E1722");
  EXPECT_EQ(error_code([] { native_run(quantize_program("pow2(25)/one", 4), exec::native::RealType::f32, 1); }), "E1722");
  // A block that does not divide the row is a type error of the IR, found when it is read.
  const std::string code = error_code([] { quantize_program("absmax/one", 3); });
  EXPECT_EQ(code.rfind("E04", 0), 0u) << code;
}

// A cache row's keep (spec "keep/<mode>", the row its block): each row of 8 as the meaning keeps
// it (keep_row_exact), in both executors, the native f32 kernel giving the meaning's bits; the
// int8 row by hand.
TEST(QuantizeOp, CacheKeepsInBothExecutors) {
  for (const std::string mode : {"int8_rows", "int8_rows_rotated", "f16", "bf16"}) {
    const Keep keep = *parse_keep_name(mode);
    const ir::Program program = quantize_program("keep/" + mode, 8);
    const std::vector<double> exact = exact_run(program);
    std::vector<double> meant;
    for (size_t row = 0; row < 2; ++row) {
      const KeptRow kept = keep_row_exact(kX.data() + 8 * row, 8, keep);
      meant.insert(meant.end(), kept.values.begin(), kept.values.end());
    }
    EXPECT_EQ(exact, meant) << mode;
    for (int threads : {1, 2}) {
      const Tensor f32 = native_run(program, exec::native::RealType::f32, threads);
      const Tensor f64 = native_run(program, exec::native::RealType::f64, threads);
      for (size_t i = 0; i < exact.size(); ++i) {
        EXPECT_EQ(f32.get(i), static_cast<float>(exact[i])) << mode << " " << i;
        EXPECT_EQ(f64.get(i), exact[i]) << mode << " " << i;
      }
    }
  }
  // Row [1, 2, 3, 4, −0.5, 0.25, 0, 0.125] as int8: s = f16(4/127), codes ⌊x/s⌉.
  const std::vector<double> exact = exact_run(quantize_program("keep/int8_rows", 8));
  const double s = round_to_float_format(4.0 / 127, FloatFormat::f16);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(exact[i], std::nearbyint(kX[i] / s) * s) << i;
  EXPECT_EQ(error_code([] { exact_run(quantize_program("keep/int4_rows", 8)); }), "E1722");
}

ir::Program tiny_gpt() {
  lang::FrontendOptions options;
  options.dims = {{"T", 8}};
  options.entry = "logits";
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt_tiny.psk"), options);
}

Contract w8a8() {
  Contract c;
  c.chip = "test";
  c.activation = Scheme{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};
  return c;
}

TEST(ChipProgram, QuantizeLetsThatLeaveEverySiteItsName) {
  const ir::Program program = tiny_gpt();
  const Contract contract = w8a8();
  const std::vector<QuantizedProduct> products = bind_contract(contract, program, nullptr);
  const std::vector<QuantizeSite> sites = quantize(program, contract, products);
  const ir::Program chip = chip_program(program, contract, sites, products);
  std::vector<std::string> before, after;
  int64_t quantizes = 0;
  for (const ir::Site& s : ir::site_table(program)) before.push_back(s.name);
  for (const ir::Site& s : ir::site_table(chip)) {
    if (s.op == ir::Op::quantize) {
      ++quantizes;
      EXPECT_NE(s.name.find("/quantize"), std::string::npos) << s.name;
    } else {
      after.push_back(s.name);
    }
  }
  EXPECT_EQ(before, after);
  EXPECT_EQ(quantizes, static_cast<int64_t>(sites.size())) << ir::print_program(chip);
  // Every quantized product reads a quantize (through views that keep its rows).
  for (const QuantizedProduct& q : products) {
    const ir::Function& f = chip.functions[q.product.function];
    uint32_t let = 0;
    while (f.site_name(let) != q.product.site) ++let;
    ir::ValueRef v = f.lets[let].operands[static_cast<size_t>(q.product.activation)];
    while (v.kind == ir::ValueRef::Kind::Let && f.lets[v.index].op != ir::Op::quantize) v = f.lets[v.index].operands[0];
    EXPECT_TRUE(v.kind == ir::ValueRef::Kind::Let && f.lets[v.index].op == ir::Op::quantize) << q.product.site;
  }
}

TEST(ChipProgram, TheSameBitsAtAnyThreadCountAndNearTheMeaning) {
  const ir::Program program = tiny_gpt();
  const Contract contract = w8a8();
  const std::vector<QuantizedProduct> products = bind_contract(contract, program, nullptr);
  const ir::Program chip = chip_program(program, contract, quantize(program, contract, products), products);
  const ir::Function& entry = *chip.find_function("logits");
  const std::vector<reference::HostTensor> inputs =
      reference::synthesize_inputs(entry, 5, reference::default_token_range(chip));
  reference::ParameterStore store = reference::synthesize_parameters(chip, 7, 1);
  std::vector<double> head(8 * 11);  // the tiny GPT's head starts at zeros: logits of 0 whatever the chip
  for (size_t i = 0; i < head.size(); ++i) head[i] = 0.1 * static_cast<double>(static_cast<int>(i % 7) - 3);
  store.set("head", head);
  const auto params = exec::native::prepare_parameters(chip, exec::native::uniform_realization(exec::native::RealType::f32),
                                                       [&](const std::string& path) { return store.find(path); });
  const std::vector<Tensor> tensors = reference::to_tensors(inputs);
  const auto realization = exec::native::uniform_realization(exec::native::RealType::f32);
  const Tensor one = exec::native::execute(chip, "logits", realization, tensors, params, {1, false}).at(0);
  for (int threads : {2, 3}) {
    const Tensor more = exec::native::execute(chip, "logits", realization, tensors, params, {threads, false}).at(0);
    ASSERT_EQ(one.byte_size(), more.byte_size());
    EXPECT_TRUE(std::equal(one.bytes().begin(), one.bytes().end(), more.bytes().begin())) << threads << " threads";
  }
  // The chip's program differs from the plain one (its activations are int8), and not by much.
  const Tensor plain = exec::native::execute(program, "logits", realization, tensors, params, {1, false}).at(0);
  double gap = 0, largest = 0;
  for (uint64_t i = 0; i < one.element_count(); ++i) {
    gap = std::max(gap, std::fabs(one.get(i) - plain.get(i)));
    largest = std::max(largest, std::fabs(plain.get(i)));
  }
  EXPECT_GT(gap, 0);
  EXPECT_LT(gap, 0.05 * largest);
}

// A fused op (the producer and its quantize as one, an `epilogue` placement) against its parts run
// apart (the quantize after the producer): within the contract's Bound — here EXACT, bit for bit.
TEST(ChipProgram, AFusedOpIsItsPartsRunApart) {
  const std::string text =
      "const D = 8\nconst T = 4\nmodule M {\n  param w1 : R[D, D] = normal(0.3)\n  param w2 : R[D, D] = normal(0.3)\n"
      "  fn apply(x : R[T, D]) -> R[T, D] {\n    let h = tanh(x @ w1)\n    h @ w2\n  }\n}\n"
      "entry f(p : M, x : R[T, D]) -> R[T, D] = p.apply(x)\n";
  const ir::Program program = lang::compile(std::make_shared<SourceFile>(SourceFile{"f.psk", text}), {});
  Contract fused = w8a8(), apart = w8a8();
  fused.fused = {"tanh_quant"};
  ASSERT_TRUE(fused.fused_bound.is_exact());
  const std::vector<QuantizedProduct> products = bind_contract(fused, program, nullptr);
  const std::vector<QuantizeSite> fused_sites = quantize(program, fused, products);
  ASSERT_TRUE(std::any_of(fused_sites.begin(), fused_sites.end(), [](const QuantizeSite& s) { return s.where == Placement::epilogue; }));
  const ir::Program with_fused = chip_program(program, fused, fused_sites, products);
  const ir::Program with_parts = chip_program(program, apart, quantize(program, apart, products), products);
  reference::ParameterStore store = reference::synthesize_parameters(program, 3, 1);
  const auto realization = exec::native::uniform_realization(exec::native::RealType::f32);
  const auto params = exec::native::prepare_parameters(program, realization, [&](const std::string& path) { return store.find(path); });
  const std::vector<Tensor> x = reference::to_tensors(reference::synthesize_inputs(*program.find_function("f"), 4, 2));
  const Tensor a = exec::native::execute(with_fused, "f", realization, x, params, {2, false}).at(0);
  const Tensor b = exec::native::execute(with_parts, "f", realization, x, params, {1, false}).at(0);
  for (uint64_t i = 0; i < a.element_count(); ++i) {
    EXPECT_TRUE(fused.fused_bound.admits(a.get(i), b.get(i), 0)) << i << ": " << a.get(i) << " against " << b.get(i);
  }
}

}  // namespace
}  // namespace presk::numerics
