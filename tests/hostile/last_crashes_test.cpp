// The last hostile-input classes of issue #32, each a crash or an internal error before: calls
// chained deeper than the exact interpreter's stack (E0517), a sample offset near 2⁶³ (E0515,
// not an overflowed index), a dropout rate that is not a number (E1050), `train --until 0`
// (no step), `presk bench` with nothing to time (a usage error, exit 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "hostile/hostile.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::hostile {
namespace {

class LastCrashes : public HostileTest {
 protected:
  // Token windows of 9 (W = 8, gpt_tiny's `--dim T=8`) for presk train.
  void write_windows() {
    Tensor tokens(ElementType::i32, {64, 9});
    for (uint64_t i = 0; i < tokens.element_count(); ++i) tokens.set_integer(i, int64_t(i % 11));
    write_safetensors(path("d.safetensors"), {{"tokens", tokens}});
    watch("d.safetensors");
  }
  std::string train(const std::string& arguments) const {
    return "train '" + example("gpt_tiny.psk") + "' --dim T=8 --data d.safetensors --batch 1 --threads 1 " +
           arguments;
  }
};

// A chain of `depth` functions, each calling the next, under the entry `chain`.
std::string call_chain(int depth) {
  std::string text = "dim N\nfn f0(x : R[N]) -> R[N] = x * x\n";
  for (int i = 1; i < depth; ++i) {
    text += "fn f" + std::to_string(i) + "(x : R[N]) -> R[N] = f" + std::to_string(i - 1) + "(x) + x\n";
  }
  return text + "entry chain(x : R[N]) -> R[N] = f" + std::to_string(depth - 1) + "(x)\n";
}

TEST_F(LastCrashes, CallsChainedTooDeepAreE0517NotACrash) {
  write("deep.psk", call_chain(20000));
  auto result = bounded_presk("run deep.psk --entry chain --dim N=2 --exact", 120, 8L << 20);
  expect_refused(result, 1, "E0517", "256");
  // Within the bound the same chain runs, exactly: f_k(x) = x² + k·x at x from the seed.
  write("shallow.psk", call_chain(200));
  auto shallow = presk("run shallow.psk --entry chain --dim N=2 --exact");
  EXPECT_EQ(shallow.status, 0) << shallow.output.substr(0, 2000);
}

TEST_F(LastCrashes, SampleOffsetNearTwoToThe63IsE0515) {
  Tensor x(ElementType::f64, {4, 3});
  write_safetensors(path("x.safetensors"), {{"prediction", x}, {"target", x}});
  watch("x.safetensors");
  const std::string run = "run '" + example("mse.psk") + "' --entry mse --dim N=3 --data x.safetensors --exact ";
  expect_refused(presk(run + "--offset 9223372036854775800 --samples 8"), 1, "E0515", "9223372036854775800");
  expect_refused(presk(run + "--offset 3 --samples 2"), 1, "E0515", "2 samples from sample 3");
  EXPECT_EQ(presk(run + "--offset 2 --samples 2").status, 0);
}

TEST_F(LastCrashes, DropoutRateNotANumberIsE1050) {
  write_windows();
  expect_refused(presk(train("--steps 2 --dropout nan --out c.safetensors")), 1, "E1050", "--dropout nan");
}

TEST_F(LastCrashes, UntilZeroRunsNoStep) {
  write_windows();
  auto result = presk(train("--steps 3 --until 0 --out c.safetensors --json"));
  ASSERT_EQ(result.status, 0) << result.output.substr(0, 2000);
  const nlohmann::json json = nlohmann::json::parse(result.output.substr(result.output.find('{')));
  EXPECT_EQ(json["first_step"], 0);
  EXPECT_EQ(json["last_step"], 0);
  EXPECT_TRUE(json["steps"].empty()) << json.dump();
  // and --resume runs the rest, as after any --until
  auto resumed = presk(train("--steps 3 --resume c.safetensors --out c.safetensors --json"));
  ASSERT_EQ(resumed.status, 0) << resumed.output.substr(0, 2000);
  EXPECT_EQ(nlohmann::json::parse(resumed.output.substr(resumed.output.find('{')))["steps"].size(), 3u);
}

// rsqrt(−0) = +∞ natively, as the exact reference gives it (docs/semantics.md), in every type.
TEST_F(LastCrashes, RsqrtOfMinusZeroAgreesWithTheReference) {
  write("r.psk", "dim N\nentry r(x : R[N]) -> R[N] = rsqrt(x)\n");
  Tensor x(ElementType::f64, {3});
  x.set(0, -0.0);
  x.set(1, 0.0);
  x.set(2, 4.0);
  write_safetensors(path("x.safetensors"), {{"x", x}});
  const std::string run = "run r.psk --entry r --dim N=3 --data x.safetensors --json ";
  auto exact = presk(run + "--exact --bits 64");
  ASSERT_EQ(exact.status, 0) << exact.output;
  const nlohmann::json exact_values = nlohmann::json::parse(exact.output)["outputs"][0]["values"];
  for (const char* type : {"f64", "f32", "bf16"}) {
    auto native = presk(run + "--realize " + type);
    ASSERT_EQ(native.status, 0) << native.output;
    const nlohmann::json values = nlohmann::json::parse(native.output)["samples"][0]["outputs"][0]["values"];
    EXPECT_EQ(values[0], values[1]) << type << ": rsqrt(-0) " << values[0] << ", rsqrt(+0) " << values[1];
    EXPECT_EQ(values[0].get<std::string>().find('-'), std::string::npos) << type << " " << values;
    EXPECT_EQ(values[2], "0.5") << type;
  }
  EXPECT_EQ(exact_values[0], exact_values[1]) << exact_values;
}

TEST_F(LastCrashes, BenchWithNothingToTimeIsAUsageError) {
  expect_refused(presk("bench"), 2, "E1206");
}

}  // namespace
}  // namespace presk::hostile
