// Bits are a function of (program, realization, inputs): every example, and every example
// entry's vjp (src/ad/), under ten realizations gives identical bits on the scalar path and
// the SIMD path, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/native/executor.h"
#include "exec/native/kernels.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/parameters.h"
#include "ir/parser.h"
#include "ir/sites.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "common/realizations.h"
#include "native/example_runs.h"  // tests/native/

namespace presk::exec::native {
namespace {

using test_support::compile_example;
using test_support::Example;
using test_support::tensors_of;

const Example kExamples[] = {
    {"mlp.psk", "loss"},         {"mlp.psk", "logits"},       {"layernorm.psk", "normalize"},
    {"rmsnorm.psk", "normalize"}, {"softmax.psk", "probabilities"}, {"softmax.psk", "log_probabilities"},
    {"softmax.psk", "by_hand"},  {"mse.psk", "mse"},          {"gpt_tiny.psk", "loss"},
    {"gpt_tiny.psk", "logits"},  {"gpt.psk", "loss"},
};


// `entry` under every realization: the scalar path on one thread defines the bits; SIMD and
// two threads reproduce them; every result is finite.
void expect_bits_agree(const ir::Program& program, const std::string& entry, const std::vector<Tensor>& inputs,
                       const reference::ParameterStore& store) {
  int index = 0;
  for (const Realization& realization : testing::test_realizations(program)) {
    SCOPED_TRACE("realization " + std::to_string(index++) + ": " + realization_to_json(realization).dump());
    const PreparedParameters params =
        prepare_parameters(program, realization, [&](const std::string& path) { return store.find(path); });
    const std::vector<Tensor> defining = execute(program, entry, realization, inputs, params, {1, true});
    for (ExecuteOptions options : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{2, true}}) {
      const std::vector<Tensor> other = execute(program, entry, realization, inputs, params, options);
      EXPECT_TRUE(test_support::same_bits(defining, other)) << "threads " << options.threads << " scalar " << options.force_scalar;
    }
    for (const Tensor& t : defining) {
      for (uint64_t i = 0; i < t.element_count(); ++i) ASSERT_TRUE(std::isfinite(t.get(i))) << "element " << i;
    }
  }
}

class Bits : public ::testing::TestWithParam<Example> {};

TEST_P(Bits, ScalarSimdAndThreadsAgree) {
  const Example example = GetParam();
  const ir::Program program = compile_example(example.file, example.entry);
  const reference::ParameterStore store = reference::synthesize_parameters(program, 3, 1);
  expect_bits_agree(program, example.entry, tensors_of(test_support::example_inputs(program, example.entry, 7)), store);
}

// The f64 realization against the exact reference (MPFR, 256 bits) on the same parameters and
// inputs; f32 and bf16 within a tolerance that scales with their unit roundoff.
TEST_P(Bits, AgreesWithTheExactReference) {
  const Example example = GetParam();
  const ir::Program program = compile_example(example.file, example.entry);
  const reference::ParameterStore store = reference::synthesize_parameters(program, 3, 1);
  const ir::Function* function = program.find_function(example.entry);
  const std::vector<reference::HostTensor> hosts = test_support::example_inputs(program, example.entry, 7);
  reference::MpfrArith arith(256);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : hosts) arguments.push_back(reference::to_value(arith, host));
  const auto exact = reference::run_function(program, *function, store, arguments, reference::RunOptions{});
  const std::vector<Tensor> inputs = tensors_of(hosts);
  for (RealType type : {RealType::f64, RealType::f32, RealType::bf16}) {
    const Realization realization = uniform_realization(type);
    const PreparedParameters params =
        prepare_parameters(program, realization, [&](const std::string& path) { return store.find(path); });
    const std::vector<Tensor> out = execute(program, example.entry, realization, inputs, params, {2, false});
    // A per-example bound: 2^10 unit roundoffs (bf16: 2^4) of the magnitude of the result (plus 1).
    const double tolerance = (type == RealType::bf16 ? 16 : 1024) * real_unit_roundoff(type);
    for (uint64_t i = 0; i < out[0].element_count(); ++i) {
      const double r = arith.to_double(exact[0].real(static_cast<int64_t>(i)));
      EXPECT_NEAR(out[0].get(i), r, tolerance * (1 + std::fabs(r))) << real_type_name(type) << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, Bits, ::testing::ValuesIn(kExamples),
                         [](const auto& info) { return test_support::test_name(info.param); });

// The vjp of every example entry (E.vjp with a seeded cotangent, every parameter non-zero).
class VjpBits : public ::testing::TestWithParam<Example> {};

TEST_P(VjpBits, ScalarSimdAndThreadsAgree) {
  const test_support::VjpRun run = test_support::prepare_vjp(GetParam(), 7);
  expect_bits_agree(run.program, run.entry, tensors_of(run.inputs), run.parameters);
}

INSTANTIATE_TEST_SUITE_P(Examples, VjpBits, ::testing::ValuesIn(kExamples),
                         [](const auto& info) { return test_support::test_name(info.param); });

// The threaded paths (elementwise chunks, softmax row blocks, contraction row groups, bf16
// stores rounded by the workers) start at sizes that dims of 5, 6, … never reach: gpt.psk at
// T = 160 (D = 64; 51200 attention weights per layer) runs them, forward (the whole logits
// matrix) and vjp (every gradient). The output head, zeros when synthesized, gets the values
// of the token table's first rows, so that the logits depend on every block (attention
// included: its scores' masked half is skipped on the SIMD path, never on the scalar one).
TEST(BitsAtScale, GptLogitsAndVjpAtT160) {
  lang::FrontendOptions options;
  options.dims.push_back({"T", 160});
  const auto source = lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/gpt.psk");
  options.entry = "logits";
  const ir::Program logits = lang::compile(source, options);
  reference::ParameterStore store = reference::synthesize_parameters(logits, 3, 1);
  const std::vector<double>& tok = *store.find("tok");
  store.set("head", std::vector<double>(tok.begin(), tok.begin() + static_cast<long>(store.find("head")->size())));
  expect_bits_agree(logits, "logits", tensors_of(test_support::example_inputs(logits, "logits", 7)), store);
  options.entry = "loss";
  const test_support::VjpRun run = test_support::prepare_vjp(lang::compile(source, options), "loss", 7);
  expect_bits_agree(run.program, run.entry, tensors_of(run.inputs), run.parameters);
}

// An elementwise op writes over its first operand's storage only where that value dies there
// (OpContext::first_operand_dies) and nothing else holds it: values read again later, read
// twice by the same op, or handed to a function keep their elements. Every result against the same
// computation in plain C++ (exp and rsqrt by presk's scalar kernels), bit for bit.
TEST(InPlace, OnlyDyingValuesAreWrittenOver) {
  const std::string text = R"(
dim T
entry later(x : R[T]) -> R[T] {
  let y = exp(x)
  let z = y + 2.0
  z * y
}
entry twice(x : R[T]) -> R[T] {
  let y = exp(x)
  let z = y * y
  rsqrt(z + 1.0)
}
fn plus(a : R[T]) -> R[T] = a + 1.0
entry argument(x : R[T]) -> R[T] {
  let y = exp(x)
  plus(y) * y
}
)";
  const auto source = std::make_shared<SourceFile>(SourceFile{"in_place.psk", text});
  const int64_t n = 40000;  // past the elementwise chunk size, so the threaded path runs too
  Tensor x(ElementType::f32, {n});
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x.set(static_cast<uint64_t>(i), std::ldexp(static_cast<double>(i % 97) - 48.0, -4));
    e[static_cast<size_t>(i)] = unary_scalar(UnaryFn::exp, static_cast<float>(x.get(static_cast<uint64_t>(i))));
  }
  auto expect = [&](const std::string& entry, size_t result, auto f) {
    lang::FrontendOptions options;
    options.dims.push_back({"T", n});
    options.entry = entry;
    const ir::Program program = lang::compile(source, options);
    for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{1, true}}) {
      const std::vector<Tensor> out = execute(program, entry, uniform_realization(RealType::f32), {x}, {}, run);
      for (int64_t i = 0; i < n; ++i) {
        const float want = f(e[static_cast<size_t>(i)]), got = static_cast<float>(out.at(result).get(static_cast<uint64_t>(i)));
        ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << entry << " result " << result << " element " << i;
      }
    }
  };
  expect("later", 0, [](float y) { return (y + 2.0f) * y; });
  expect("twice", 0, [](float y) { return unary_scalar(UnaryFn::rsqrt, y * y + 1.0f); });
  expect("argument", 0, [](float y) { return (y + 1.0f) * y; });
}

// A contraction whose one reader adds a vector along its last axis computes that sum itself
// (the executor's epilogues): in the kernels' last store (tiles, scalar), after the streaming
// path (few rows), after the interleaved order's combination, at bf16 sites in C's store. Every element must equal the
// add's own IEEE sum of the product's element and the bias, in the add's operand order;
// biases include ±0, ±∞, NaN and magnitudes that round away most of the product. A product
// read twice is not fused and must give the same values.
TEST(Epilogue, BiasIsAddedAsTheAddWould) {
  const std::string text = R"(
dim M
const K = 40
const N = 70
entry fused(x : R[M, K], w : R[K, N], b : R[N]) -> R[M, N] = x @ w + b
entry first(x : R[M, K], w : R[K, N], b : R[N]) -> R[M, N] = b + x @ w
entry product(x : R[M, K], w : R[K, N]) -> R[M, N] = x @ w
entry twice(x : R[M, K], w : R[K, N], b : R[N]) -> R[M, N] {
  let y = x @ w
  let z = y + b
  z - y
}
)";
  const auto source = std::make_shared<SourceFile>(SourceFile{"epilogue.psk", text});
  for (const int64_t m : {int64_t{3}, int64_t{70}}) {  // the streaming path (M <= 8, N >= 64) and the tiles
    lang::FrontendOptions options;
    options.dims.push_back({"M", m});
    const ir::Program program = lang::compile(source, options);
    for (const RealType type : {RealType::f32, RealType::f64, RealType::bf16}) {
      const ElementType element = type == RealType::f64 ? ElementType::f64 : ElementType::f32;
      // The add at a site of `type`: bf16 computes in f32 on its operands as stored (the product
      // already a bf16 value, the f32 bias rounded at the edge), then rounds once more.
      auto sum = [type](double p, double q, bool bias_first) -> double {
        if (type == RealType::f64) return bias_first ? q + p : p + q;
        const float x = static_cast<float>(p), y = type == RealType::bf16 ? round_bf16(static_cast<float>(q)) : static_cast<float>(q);
        const float z = bias_first ? y + x : x + y;
        return type == RealType::bf16 ? round_bf16(z) : z;
      };
      auto difference = [type](double p, double q) -> double {
        if (type == RealType::f64) return p - q;
        const float z = static_cast<float>(p) - static_cast<float>(q);
        return type == RealType::bf16 ? round_bf16(z) : z;
      };
      Tensor x(element, {m, 40}), w(element, {40, 70}), b(element, {70});
      for (uint64_t i = 0; i < x.element_count(); ++i) x.set(i, std::ldexp(static_cast<double>(i * 7919 % 211) - 105.0, -5));
      for (uint64_t i = 0; i < w.element_count(); ++i) w.set(i, std::ldexp(static_cast<double>(i * 104729 % 199) - 99.0, -7));
      const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -3.0e-3, 1e-30};
      for (uint64_t j = 0; j < 70; ++j) b.set(j, j < 8 ? specials[j] : std::ldexp(static_cast<double>(j) - 20.0, 10 - static_cast<int>(j % 20)));
      Realization realization = uniform_realization(type);
      for (const Order order : {Order{}, Order{OrderKind::interleaved, 0, 8}}) {
        realization.order = order;
        for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{2, false}, ExecuteOptions{1, true}}) {
          const Tensor c = execute(program, "product", realization, {x, w}, {}, run).at(0);
          auto expect = [&](const std::string& entry, bool bias_first) {
            const Tensor got = execute(program, entry, realization, {x, w, b}, {}, run).at(0);
            for (uint64_t i = 0; i < c.element_count(); ++i) {
              const double want = sum(c.get(i), b.get(i % 70), bias_first);
              ASSERT_TRUE(got.get(i) == want || (std::isnan(want) && std::isnan(got.get(i))))
                  << entry << " M=" << m << " element " << i << ": " << got.get(i) << " against " << want;
              ASSERT_EQ(std::signbit(got.get(i)), std::signbit(want)) << entry << " element " << i;
            }
          };
          expect("fused", false);
          expect("first", true);
          const Tensor twice = execute(program, "twice", realization, {x, w, b}, {}, run).at(0);
          const Tensor fused = execute(program, "fused", realization, {x, w, b}, {}, run).at(0);
          for (uint64_t i = 0; i < c.element_count(); ++i) {
            const double want = difference(fused.get(i), c.get(i));
            ASSERT_TRUE(twice.get(i) == want || (std::isnan(want) && std::isnan(twice.get(i)))) << "twice element " << i;
          }
        }
      }
    }
  }
}

// Lets no result depends on are not run (a vjp's adjoints of constants): the profile of a
// function with an unread value shows only the ops its result needs, and the result is right.
TEST(LiveLets, UnreadValuesAreNotComputed) {
  const ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"live.pir",
      "entry f ($0 : R[4]) -> R[4] {\n  %0 = exp($0) : R[4]\n  %1 = literal \"1\" : R\n"
      "  %2 = add($0, %1) : R[4]\n  return %2\n}\n"}));
  Tensor x(ElementType::f32, {4});
  for (uint64_t i = 0; i < 4; ++i) x.set(i, static_cast<double>(i) - 1.5);
  OpProfile profile;
  ExecuteOptions run{1, false};
  run.profile = &profile;
  const Tensor y = execute(program, "f", uniform_realization(RealType::f32), {x}, {}, run).at(0);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(y.get(i), x.get(i) + 1.0);
  EXPECT_EQ(profile.count("add f32"), 1u);
  EXPECT_EQ(profile.count("exp f32"), 0u);
}

// A broadcast read only by elementwise ops hands its operand on as it is (they broadcast it
// themselves), unless its site rounds it: x · broadcast(a) against the products in plain C++,
// with the broadcast's site f32 (handed on) and bf16 (rounded first, as the op says).
TEST(LazyBroadcast, ReadersSeeTheBroadcastValues) {
  const ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"lazy.pir",
      "entry lazy ($0 : R[5, 1], $1 : R[5, 3]) -> R[5, 3] {\n  %0 = broadcast($0) : R[5, 3]\n"
      "  %1 = mul($1, %0) : R[5, 3]\n  return %1\n}\n"}));
  Tensor a(ElementType::f32, {5, 1}), x(ElementType::f32, {5, 3});
  for (uint64_t i = 0; i < 5; ++i) a.set(i, 1.0 + std::ldexp(static_cast<double>(i * 37 + 1), -12));
  for (uint64_t i = 0; i < 15; ++i) x.set(i, 3.0 - static_cast<double>(i) / 7.0);
  for (const char* site : {"f32", "bf16"}) {
    const Realization realization = parse_realization(
        nlohmann::json{{"format", 1}, {"default", "f32"}, {"sites", {{"lazy/%0", site}}}}, "r.json");
    for (ExecuteOptions run : {ExecuteOptions{1, false}, ExecuteOptions{1, true}}) {
      const Tensor y = execute(program, "lazy", realization, {a, x}, {}, run).at(0);
      for (uint64_t i = 0; i < 15; ++i) {
        float factor = static_cast<float>(a.get(i / 3));
        if (std::string(site) == "bf16") factor = from_bf16(to_bf16(factor));
        const float want = static_cast<float>(x.get(i)) * factor;
        EXPECT_EQ(static_cast<float>(y.get(i)), want) << site << " element " << i;
      }
    }
  }
  // A broadcast bias of a contraction is added by the add, not as the contraction's epilogue
  // (which reads a whole row of bias).
  const ir::Program biased = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"biased.pir",
      "entry f ($0 : R[5, 3], $1 : R[3, 3], $2 : R[1]) -> R[5, 3] {\n  %0 = broadcast($2) : R[3]\n"
      "  %1 = contract($0, $1) spec=\"xy,yz->xz\" : R[5, 3]\n  %2 = add(%1, %0) : R[5, 3]\n  return %2\n}\n"}));
  Tensor w(ElementType::f32, {3, 3}), b(ElementType::f32, {1});
  for (uint64_t i = 0; i < 9; ++i) w.set(i, i % 4 == 0 ? 1.0 : 0.0);  // the identity
  b.set(0, 0.25);
  const Tensor z = execute(biased, "f", uniform_realization(RealType::f32), {x, w, b}, {}, {}).at(0);
  for (uint64_t i = 0; i < 15; ++i) EXPECT_EQ(static_cast<float>(z.get(i)), static_cast<float>(x.get(i)) + 0.25f) << i;
}

}  // namespace
}  // namespace presk::exec::native
