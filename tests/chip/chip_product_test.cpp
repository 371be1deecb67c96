// A chip's integer sums in the native executor (exec/native/ops_chip.h; docs/chip.md, "The chip's
// products"): a product of a quantize's codes by int8 weights computed as the chip does — by hand
// on a small case (32-bit, and 16-bit accumulators wrapping and saturating), against an
// independent computation from the exact meaning's codes for every scheme, the same bits on every
// SIMD target and thread count, and a fused op against its parts run apart within its Bound.
#include <gtest/gtest.h>

#include <hwy/highway.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "lang/frontend.h"
#include "numerics/bind.h"
#include "numerics/quantize.h"
#include "numerics/scheme/meaning.h"

namespace presk::numerics {
namespace {

using exec::native::RealType;

// x[M, K] quantized in `spec` by blocks of `block`, times a parameter w[K, N].
ir::Program product_program(int64_t m, int64_t k, int64_t n, const std::string& spec, int64_t block) {
  const std::string x = "R[" + std::to_string(m) + ", " + std::to_string(k) + "]";
  const std::string w = "R[" + std::to_string(k) + ", " + std::to_string(n) + "]";
  const std::string y = "R[" + std::to_string(m) + ", " + std::to_string(n) + "]";
  const std::string text = "param w : " + w + " = zeros\n\nentry q($0 x : " + x + ") -> " + y +
                           " {\n  %0 = quantize($0) axes=[1] starts=[" + std::to_string(block) + "] spec=\"" + spec +
                           "\" : " + x + "\n  %1 = param \"w\" : " + w + "\n  %2 = contract(%0, %1) spec=\"xy,yz->xz\" : " +
                           y + "\n  return %2\n}\n";
  ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"q.pir", text}));
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

// f32 sites, w stored as int8 with one scale per column (or per `group` along K), integer sums.
exec::native::Realization int8_sums(int bits, bool saturate, int64_t group = 0) {
  exec::native::Realization r = exec::native::uniform_realization(RealType::f32);
  r.quant["w"] = exec::native::QuantSpec{8, -2, exec::native::QuantScheme::absmax, group};
  r.integer_sums = {bits, saturate};
  return r;
}

Tensor run(const ir::Program& program, const exec::native::Realization& realization, const std::vector<double>& x,
           const std::vector<int64_t>& shape, const std::vector<double>& w, int threads, bool scalar) {
  Tensor input(ElementType::f64, shape);
  for (size_t i = 0; i < x.size(); ++i) input.set(i, x[i]);
  const auto params = exec::native::prepare_parameters(program, realization, [&](const std::string&) { return &w; });
  return exec::native::execute(program, "q", realization, {input}, params, {threads, scalar}).at(0);
}

TEST(ChipProduct, ByHand) {
  const ir::Program program = product_program(1, 4, 2, "absmax/one", 4);
  // x = [1, 2, 3, 4]: s_a = f32(4/127), codes 32 (31.75), 64 (63.5, ties to even), 95, 127.
  const double s_a = static_cast<float>(4.0 / 127);
  // w's columns [1.27, −1.27, 0.5, 0] and [0, 0, 0, 2.54]: scales f32(0.01) and f32(0.02), codes
  // [127, −127, 50, 0] and [0, 0, 0, 127].
  const std::vector<double> w = {1.27, 0, -1.27, 0, 0.5, 0, 0, 2.54};
  const double s0 = static_cast<float>(1.27 / 127), s1 = static_cast<float>(2.54 / 127);
  const Tensor y = run(program, int8_sums(32, false), {1, 2, 3, 4}, {1, 4}, w, 1, false);
  // Column 0: 32·127 − 64·127 + 95·50 = 686; column 1: 127·127 = 16129; each (sum·s_a)·s_w in
  // binary64, rounded once to f32.
  EXPECT_EQ(y.get(0), static_cast<float>(686 * s_a * s0));
  EXPECT_EQ(y.get(1), static_cast<float>(16129 * s_a * s1));
  // Without integer sums the product computes on the values (f32(q·s) each, an f32 fma chain).
  const Tensor values = run(program, int8_sums(0, false), {1, 2, 3, 4}, {1, 4}, w, 1, false);
  float chain = 0;
  const std::vector<int> codes = {32, 64, 95, 127}, w0 = {127, -127, 50, 0};
  for (size_t i = 0; i < 4; ++i) {
    chain = std::fma(static_cast<float>(codes[i] * s_a), static_cast<float>(w0[i]) * static_cast<float>(s0), chain);
  }
  EXPECT_EQ(values.get(0), chain);
}

TEST(ChipProduct, SixteenBitAccumulatorsByHand) {
  const ir::Program program = product_program(1, 4, 2, "absmax/one", 4);
  // x = [4, 4, 4, 4]: every code 127. Column 0 [1.27, −1.27, 1.27, −1.27]: partial sums 16129, 0,
  // 16129, 0. Column 1 [2.54] × 4: partial sums 16129, 32258, 48387, 64516 — past 32767 at the third.
  const std::vector<double> x(4, 4.0), w = {1.27, 2.54, -1.27, 2.54, 1.27, 2.54, -1.27, 2.54};
  const double s_a = static_cast<float>(4.0 / 127), s1 = static_cast<float>(2.54 / 127);
  const Tensor wrapped = run(program, int8_sums(16, false), x, {1, 4}, w, 1, false);
  const Tensor saturated = run(program, int8_sums(16, true), x, {1, 4}, w, 1, false);
  const Tensor wide = run(program, int8_sums(32, false), x, {1, 4}, w, 1, false);
  EXPECT_EQ(wrapped.get(0), 0.0f);
  EXPECT_EQ(saturated.get(0), 0.0f);
  EXPECT_EQ(wide.get(1), static_cast<float>(64516 * s_a * s1));
  EXPECT_EQ(wrapped.get(1), static_cast<float>((64516 - 65536) * s_a * s1));  // −1020
  EXPECT_EQ(saturated.get(1), static_cast<float>(32767 * s_a * s1));
}

// The chip's output from the exact meaning's codes (meaning.h) and the stored weights' codes,
// computed here apart from the executor: per run and word, the exact integer sum (no accumulator
// here overflows) times 2^(−shift·word), s_a and s_w, added in binary64; then rounded to f32.
std::vector<float> expected_outputs(const std::vector<double>& x, int64_t m, int64_t k, int64_t n, const Scheme& scheme,
                                    int64_t block, const std::vector<double>& w, int64_t group) {
  const exec::native::QuantizedWeights q = exec::native::quantize(w, {k, n}, 8, 0, false, group);
  const int64_t g = group > 0 ? group : k, run = std::min(block, g);
  const int shift = scheme.words == Words::two_code16 ? 8 : 7;
  std::vector<float> out;
  for (int64_t i = 0; i < m; ++i) {
    std::vector<float> row(x.begin() + i * k, x.begin() + (i + 1) * k);  // the f32 argument
    const std::vector<double> wide(row.begin(), row.end());
    const std::vector<QuantizedBlock> blocks = quantize_row_exact(wide.data(), wide.size(), static_cast<size_t>(block), scheme);
    for (int64_t j = 0; j < n; ++j) {
      double y = 0;
      for (int64_t start = 0; start < k; start += run) {
        const QuantizedBlock& b = blocks[static_cast<size_t>(start / block)];
        const double s_w = q.scales[q.scale_index(static_cast<size_t>(start * n + j))];
        for (size_t word = 0; word < b.words.size(); ++word) {
          int64_t sum = 0;
          for (int64_t t = start; t < start + run; ++t) sum += b.words[word][static_cast<size_t>(t % block)] * q.q_at(static_cast<size_t>(t * n + j));
          y += std::ldexp(static_cast<double>(sum), -shift * static_cast<int>(word)) * b.scale * s_w;
        }
      }
      out.push_back(static_cast<float>(y));
    }
  }
  return out;
}

TEST(ChipProduct, EverySchemeIsTheChipsSumOnEveryTargetAndThreadCount) {
  constexpr int64_t kM = 5, kK = 64, kN = 24;
  std::mt19937 random(3);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> x(kM * kK), w(kK * kN);
  for (double& v : x) v = normal(random);
  for (double& v : w) v = normal(random);
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"absmax/one", 64}, {"absmax/one", 32}, {"absmax/two_rest", 16}, {"pow2(1)/two_code16", 64}, {"absmax/three", 32}, {"unsigned/one", 32}};
  for (const auto& [spec, block] : cases) {
    for (int64_t group : {int64_t{0}, int64_t{16}}) {
      const Scheme scheme = *parse_scheme_spec(spec, block);
      std::vector<double> xs = x;
      if (scheme.scale.kind == Scale::Kind::unsigned_pow2) {
        for (double& v : xs) v = std::fabs(v);
      }
      const ir::Program program = product_program(kM, kK, kN, spec, block);
      const auto realization = int8_sums(32, false, group);
      const Tensor scalar = run(program, realization, xs, {kM, kK}, w, 1, true);
      const std::vector<float> expected = expected_outputs(xs, kM, kK, kN, scheme, block, w, group);
      for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(scalar.get(i), expected[i]) << spec << " group " << group << " at " << i;
      for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        for (int threads : {1, 2, 3}) {
          const Tensor simd = run(program, realization, xs, {kM, kK}, w, threads, false);
          ASSERT_TRUE(std::equal(scalar.bytes().begin(), scalar.bytes().end(), simd.bytes().begin()))
              << spec << " on " << hwy::TargetName(target) << ", " << threads << " threads";
        }
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

// A fused op (the producer and its quantize as one, an `epilogue` placement) against its parts
// run apart — the producer's program run alone, then its result quantized and multiplied by the
// chip's sums here — within the contract's Bound (EXACT: bit for bit), under int8 weights.
TEST(ChipProduct, AFusedOpIsItsPartsRunApartWithinItsBound) {
  const std::string text =
      "const D = 32\nconst T = 3\nmodule M {\n  param w1 : R[D, D] = normal(0.3)\n  param w2 : R[D, D] = normal(0.3)\n"
      "  fn apply(x : R[T, D]) -> R[T, D] {\n    let h = tanh(x @ w1)\n    h @ w2\n  }\n  fn first(x : R[T, D]) -> R[T, D] {\n"
      "    tanh(x @ w1)\n  }\n}\nentry f(p : M, x : R[T, D]) -> R[T, D] = p.apply(x)\n"
      "entry g(p : M, x : R[T, D]) -> R[T, D] = p.first(x)\n";
  const ir::Program program = lang::compile(std::make_shared<SourceFile>(SourceFile{"f.psk", text}), {});
  Contract fused;
  fused.chip = "test";
  fused.activation = Scheme{Block::of_row(), {Scale::Kind::absmax, 0}, Words::one};
  fused.fused = {"tanh_quant"};
  const std::vector<QuantizedProduct> products = bind_contract(fused, program, nullptr);
  const std::vector<QuantizeSite> sites = quantize(program, fused, products);
  ASSERT_TRUE(std::any_of(sites.begin(), sites.end(), [](const QuantizeSite& s) { return s.where == Placement::epilogue; }));
  const ir::Program chip = chip_program(program, fused, sites, products);
  exec::native::Realization realization = exec::native::uniform_realization(RealType::f32);
  for (const char* path : {"w1", "w2"}) realization.quant[path] = exec::native::QuantSpec{8, -2, exec::native::QuantScheme::absmax, 0};
  realization = chip_realization(realization, fused);
  reference::ParameterStore store = reference::synthesize_parameters(program, 3, 1);
  const auto params = exec::native::prepare_parameters(chip, realization, [&](const std::string& path) { return store.find(path); });
  const std::vector<Tensor> x = reference::to_tensors(reference::synthesize_inputs(*program.find_function("f"), 4, 2));
  const Tensor whole = exec::native::execute(chip, "f", realization, x, params, {2, false}).at(0);
  // Apart: the producer h = tanh(q(x) @ w1) by the chip's program's own entry `g`, then h quantized
  // and multiplied by w2's codes as the chip sums them (expected_outputs).
  const Tensor h = exec::native::execute(chip, "g", realization, x, params, {1, false}).at(0);
  std::vector<double> hs(h.element_count());
  for (size_t i = 0; i < hs.size(); ++i) hs[i] = h.get(i);
  ASSERT_NE(store.find("w2"), nullptr);
  const std::vector<float> apart = expected_outputs(hs, 3, 32, 32, *fused.activation, 32, *store.find("w2"), 0);
  for (size_t i = 0; i < apart.size(); ++i) {
    ASSERT_TRUE(fused.fused_bound.admits(whole.get(i), apart[i], 0)) << i << ": " << whole.get(i) << " against " << apart[i];
  }
}

}  // namespace
}  // namespace presk::numerics
