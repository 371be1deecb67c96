// The native executor runs reverse mode: every example entry's vjp (E.vjp from ad::add_vjps,
// with a seeded cotangent and every parameter non-zero) under uniform f64 and f32 against the
// exact reference (MPFR at 200 bits) on the same inputs and parameters. Each cotangent's
// largest elementwise gap, relative to its largest exact magnitude, stays within 1e-12 (f64)
// and 1e-5 (f32); so do gelu_tanh_grad and gelu_erf_grad in a vjp of their own. The bits of
// the same runs (and of mixed realizations, whose stacks convert layers of other types) are
// checked in bits_test.cpp (VjpBits).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "exec/native/executor.h"
#include "exec/reference/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "native/example_runs.h"  // tests/native/

namespace presk::exec::native {
namespace {

using test_support::Example;
using test_support::VjpRun;

const Example kEntries[] = {
    {"mse.psk", "mse"},
    {"layernorm.psk", "normalize"},
    {"rmsnorm.psk", "normalize"},
    {"softmax.psk", "probabilities"},
    {"softmax.psk", "log_probabilities"},
    {"softmax.psk", "by_hand"},
    {"mlp.psk", "loss"},
    {"mlp.psk", "logits"},
    {"gpt_tiny.psk", "loss"},
    {"gpt_tiny.psk", "logits"},
    {"gpt.psk", "loss"},
};

using Exact = std::vector<reference::Value<reference::MpfrArith>>;

Exact run_exactly(const VjpRun& run, const reference::MpfrArith& arith) {
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (const reference::HostTensor& host : run.inputs)
    arguments.push_back(reference::to_value(arith, host));
  reference::RunOptions options;
  options.bits = arith.bits();
  options.threads = 2;
  return reference::run_function(run.program, *run.program.find_function(run.entry), run.parameters,
                                 arguments, options);
}

std::vector<Tensor> run_natively(const VjpRun& run, RealType type,
                                 const ExecuteOptions& options = {2, false}) {
  const Realization realization = uniform_realization(type);
  const PreparedParameters params = prepare_parameters(
      run.program, realization, [&](const std::string& path) { return run.parameters.find(path); });
  return execute(run.program, run.entry, realization, test_support::tensors_of(run.inputs), params,
                 options);
}

double largest_magnitude(const reference::MpfrArith& arith,
                         const reference::Value<reference::MpfrArith>& exact) {
  double magnitude = 0;
  for (int64_t i = 0; i < exact.size(); ++i)
    magnitude = std::max(magnitude, std::fabs(arith.to_double(exact.real(i))));
  return magnitude;
}

// max |native − exact| / scale over one cotangent (+∞ if a native element is not finite).
double relative_gap(const reference::MpfrArith& arith, const Tensor& native,
                    const reference::Value<reference::MpfrArith>& exact, double scale) {
  double gap = 0;
  for (int64_t i = 0; i < exact.size(); ++i) {
    const double y = native.get(static_cast<uint64_t>(i));
    if (!std::isfinite(y)) return INFINITY;
    gap = std::max(gap, std::fabs(y - arith.to_double(exact.real(i))));
  }
  return scale > 0 ? gap / scale : gap;
}

// Each cotangent's gap relative to its own largest exact magnitude; a cotangent that is zero
// in exact arithmetic (below 2^-100 of the vjp's largest, the residue of the reference's 200
// bits: gpt's key bias, which softmax cannot see) relative to the vjp's largest cotangent.
// Prints the largest gap per type.
void expect_agreement(const VjpRun& run, const std::string& what) {
  const ir::Function& vjp = *run.program.find_function(run.entry);
  const reference::MpfrArith arith(200);
  const Exact exact = run_exactly(run, arith);
  std::vector<double> magnitudes;
  for (const auto& value : exact) magnitudes.push_back(largest_magnitude(arith, value));
  const double largest = *std::max_element(magnitudes.begin(), magnitudes.end());
  for (RealType type : {RealType::f64, RealType::f32}) {
    const double tolerance = type == RealType::f64 ? 1e-12 : 1e-5;
    const std::vector<Tensor> native = run_natively(run, type);
    ASSERT_EQ(native.size(), exact.size());
    double worst = 0;
    for (size_t k = 0; k < native.size(); ++k) {
      ASSERT_EQ(native[k].shape(), exact[k].shape) << vjp.result_names[k];
      const bool zero = magnitudes[k] <= std::ldexp(largest, -100);
      const double gap = relative_gap(arith, native[k], exact[k], zero ? largest : magnitudes[k]);
      EXPECT_LE(gap, tolerance) << what << " " << real_type_name(type) << " cotangent "
                                << vjp.result_names[k]
                                << (zero ? " (zero in exact arithmetic)" : "");
      worst = std::max(worst, gap);
    }
    std::printf("%-30s %s: %2zu cotangents, largest relative gap %.3g\n", what.c_str(),
                real_type_name(type), native.size(), worst);
  }
}

class NativeVjp : public ::testing::TestWithParam<Example> {};

TEST_P(NativeVjp, CotangentsAgreeWithTheExactReference) {
  expect_agreement(test_support::prepare_vjp(GetParam(), 7), test_support::test_name(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Examples, NativeVjp, ::testing::ValuesIn(kEntries),
                         [](const auto& info) { return test_support::test_name(info.param); });

// The gelu derivatives (gelu_erf is in no example): f(x) = gelu(x) ⊙ x over R[4, 16], x drawn
// normal(0, 1), so that f.vjp runs gelu_*_grad.
TEST(NativeVjp, GeluDerivatives) {
  for (const char* op : {"gelu_tanh", "gelu_erf"}) {
    const std::string text = std::string("entry f ($0 : R[4, 16]) -> R[4, 16] {\n  %0 = ") + op +
                             "($0) : R[4, 16]\n  %1 = mul(%0, $0) : R[4, 16]\n  return %1\n}\n";
    ir::Program program =
        ir::parse_program(std::make_shared<SourceFile>(SourceFile{"gelu.pir", text}));
    ir::verify_program(program, ir::VerifyMode::UserInput);
    expect_agreement(test_support::prepare_vjp(program, "f", 7), op);
  }
}

// gpt_tiny's loss.vjp against the forward loss, natively (f32, 1 thread, the fastest of 20
// runs after one to warm up): printed, not asserted.
TEST(NativeVjpTiming, GptTinyLossVjpAgainstForward) {
  const Example example{"gpt_tiny.psk", "loss"};
  const VjpRun run = test_support::prepare_vjp(example, 7);
  const Realization realization = uniform_realization(RealType::f32);
  const PreparedParameters params = prepare_parameters(
      run.program, realization, [&](const std::string& path) { return run.parameters.find(path); });
  const std::vector<Tensor> inputs = test_support::tensors_of(run.inputs);
  const std::vector<Tensor> forward_inputs(inputs.begin(), inputs.end() - 1);
  auto seconds = [&](const std::string& entry, const std::vector<Tensor>& in) {
    execute(run.program, entry, realization, in, params, {1, false});
    double fastest = INFINITY;
    for (int r = 0; r < 20; ++r) {
      const auto start = std::chrono::steady_clock::now();
      execute(run.program, entry, realization, in, params, {1, false});
      fastest = std::min(
          fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return fastest;
  };
  const double forward = seconds("loss", forward_inputs), backward = seconds(run.entry, inputs);
  std::printf("gpt_tiny loss (T=5, f32, 1 thread): forward %.3g ms, loss.vjp %.3g ms (%.1fx)\n",
              forward * 1e3, backward * 1e3, backward / forward);
  EXPECT_GT(backward, 0);
}

}  // namespace
}  // namespace presk::exec::native
