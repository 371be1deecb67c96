// The calibration against facts computed by hand: a contraction's k, Σ|xw|, √Σ(xw)² and operand
// factors; the rounding errors of 1/3 in each type; mse's and layernorm's magnitudes, counts and
// first-sample sensitivities; the rounding of binary64 values against support/number_format.h;
// identical envelopes for any thread count; and `presk calibrate --precision` on gpt_tiny.
#include "precision/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "common/run_command.h"
#include "exec/reference/interpreter.h"
#include "exec/reference/parameters.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/number_format.h"
#include "support/temp_folder.h"

namespace presk::precision {
namespace {

using reference::HostTensor;

ir::Program compile_text(const std::string& text, std::vector<lang::Binding> dims = {}) {
  lang::FrontendOptions options;
  options.dims = std::move(dims);
  return lang::compile(std::make_shared<SourceFile>(SourceFile{"inline.psk", text}), options);
}

ir::Program compile_example(const std::string& name, std::vector<lang::Binding> consts,
                            std::vector<lang::Binding> dims) {
  lang::FrontendOptions options;
  options.consts = std::move(consts);
  options.dims = std::move(dims);
  return lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + name), options);
}

HostTensor reals(std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor host;
  host.type = ir::Type{ir::ElemKind::Real, std::move(shape), {}, {}};
  host.reals = std::move(values);
  return host;
}

// The one site of the envelope computed by `op` (fails when there is not exactly one).
const SiteEnvelope& only_site(const Envelope& envelope, const std::string& op) {
  const SiteEnvelope* found = nullptr;
  int count = 0;
  for (const SiteEnvelope& site : envelope.sites) {
    if (site.op != op) continue;
    found = &site;
    ++count;
  }
  if (count != 1) throw std::runtime_error(std::to_string(count) + " sites of op " + op);
  return *found;
}

Envelope calibrate_on(const ir::Program& program, const std::string& entry, std::vector<std::vector<HostTensor>> samples,
                      const reference::ParameterStore& parameters = {}, int threads = 1, Sweep sweep = Sweep::exact) {
  CalibrationOptions options;
  options.bits = 128;
  options.threads = threads;
  options.sweep = sweep;
  return calibrate(program, entry, parameters, static_cast<int64_t>(samples.size()),
                   [&](int64_t k) { return samples.at(k); }, options);
}

TEST(Calibrate, ContractionTermsByHand) {
  ir::Program program = compile_text("entry f(x : R[2, 3], w : R[3, 2]) -> R[2, 2] = x @ w\n");
  HostTensor x = reals({2, 3}, {1, -2, 3, 0.5, 0, -1});
  HostTensor w = reals({3, 2}, {1, 2, 3, -1, -2, 0.25});
  Envelope envelope = calibrate_on(program, "f", {{x, w}});
  const SiteEnvelope& site = only_site(envelope, "contract");
  // Outputs −11, 4.75, 2.5, 0.75; row 0 · column 0 has terms 1, −6, −6.
  EXPECT_EQ(site.max_abs, 11);
  EXPECT_EQ(envelope.output_max_abs, 11);
  ASSERT_TRUE(site.terms.has_value());
  EXPECT_EQ(site.terms->terms, 3);
  EXPECT_EQ(site.weight, 5);  // 2k − 1
  EXPECT_EQ(site.terms->sum_abs_terms, 13);
  EXPECT_DOUBLE_EQ(site.terms->root_sum_squares, std::sqrt(73.0));
  EXPECT_EQ(site.terms->operand_factors[0], 6);  // max Σ|w| over a column: 1 + 3 + 2
  EXPECT_EQ(site.terms->operand_factors[1], 6);  // max Σ|x| over a row: 1 + 2 + 3
  EXPECT_EQ(site.elements, 4);
  EXPECT_EQ(site.elements_per_sample, 4);
  EXPECT_EQ(site.rounding.f32, 0);  // every output is exact in every type
  EXPECT_EQ(site.rounding.bf16, 0);
  // The entry's result with a cotangent of ones: ‖∂L/∂v‖₁ = 4.
  EXPECT_EQ(site.sensitivity, 4);
  EXPECT_EQ(envelope.entry, "f");
  EXPECT_EQ(envelope.samples, 1);
  EXPECT_EQ(envelope.bits, 128);
  EXPECT_EQ(envelope.program_hash.size(), 64u);
  EXPECT_EQ(envelope.date.size(), 20u);
}

TEST(Calibrate, RoundingErrorsOfOneThird) {
  ir::Program program = compile_text("entry third(x : R[2]) -> R[2] = x / 3\n");
  Envelope envelope = calibrate_on(program, "third", {{reals({2}, {1, 0.75})}});
  const SiteEnvelope& site = only_site(envelope, "div");
  EXPECT_EQ(site.max_abs, 1.0 / 3 + std::ldexp(1, -54));  // rounded up to binary64
  // 1/3 = 0.0101…₂: the quantum of its binade is 2^(−2−p+1) and the remainder a third of it.
  EXPECT_DOUBLE_EQ(site.rounding.f64, std::ldexp(1, -54) / 3);
  EXPECT_DOUBLE_EQ(site.rounding.f32, std::ldexp(1, -25) / 3);
  EXPECT_DOUBLE_EQ(site.rounding.bf16, std::ldexp(1, -9) / 3);
  EXPECT_FALSE(site.terms.has_value());
  EXPECT_EQ(site.weight, 1);
}

// Hugging Face's mask: where(keep, scores, torch.finfo(float32).min). The decimal's rounding
// (≈1.9·10²⁰ in f64 and f32; the binary64 value's half ulp 2⁷⁴ under --sweep f64) is not counted
// at the masked elements when only a softmax reads the where, which sends them to exactly 0; it
// is when another reader sees them (g), and in the softmax's absence too.
TEST(Calibrate, RoundingASoftmaxSendsToZeroIsNotCounted) {
  const std::string mask = "where(x > 0, x, -3.4028234663852886e38)";
  ir::Program program = compile_text("entry f(x : R[2, 3]) -> R[2, 3] = softmax(" + mask + ", axis: 1)\n"
                                     "entry g(x : R[2, 3]) -> R[2, 3] { let m = " + mask +
                                     "\n softmax(m, axis: 1) + m }\n"
                                     "entry h(x : R[2, 3]) -> R[2, 3] = " + mask + " * 2\n");
  const HostTensor x = reals({2, 3}, {1, -2, 0.5, 3, -1, 2});  // exact in every type
  for (Sweep sweep : {Sweep::exact, Sweep::f64}) {
    const char* name = sweep_name(sweep);
    const SiteEnvelope& f = only_site(calibrate_on(program, "f", {{x}}, {}, 1, sweep), "where");
    EXPECT_GT(f.max_abs, 3.4e38) << name;  // the magnitude is still the value's
    EXPECT_EQ(f.rounding.f32, 0) << name;
    EXPECT_EQ(f.rounding.bf16, 0) << name;
    EXPECT_LT(f.rounding.f64, 1e-15) << name;
    for (const char* entry : {"g", "h"}) {
      const SiteEnvelope& counted = only_site(calibrate_on(program, entry, {{x}}, {}, 1, sweep), "where");
      EXPECT_GT(counted.rounding.f64, 1e20) << name << " " << entry;
      EXPECT_TRUE(std::isinf(counted.rounding.bf16)) << name << " " << entry;  // beyond bf16's largest
    }
  }
}

TEST(Calibrate, RoundingOfBinary64AgreesWithNumberFormat) {
  std::mt19937_64 generator(5);
  std::uniform_real_distribution<double> exponent(-140, 140);
  std::vector<double> values = {0, 1, -0.1, 3.0e38, 3.4e38, 1e-40, -1e-45, 65504.7, 1.0 + std::ldexp(1, -8)};
  for (int i = 0; i < 500; ++i) values.push_back((i % 2 ? 1 : -1) * std::exp2(exponent(generator)));
  for (double x : values) {
    RoundingEnvelope errors = rounding_errors(x);
    EXPECT_EQ(errors.f64, 0) << x;
    double f32 = round_to(x, ElementType::f32), bf16 = round_to(x, ElementType::bf16);
    EXPECT_EQ(errors.f32, std::isinf(f32) ? std::fabs(f32) : std::fabs(f32 - x)) << x;
    EXPECT_EQ(errors.bf16, std::isinf(bf16) ? std::fabs(bf16) : std::fabs(bf16 - x)) << x;
  }
  EXPECT_TRUE(std::isinf(rounding_errors(3.4e38).bf16));  // above bf16's largest, 3.39e38
}

TEST(Calibrate, MseOverTwoSamples) {
  ir::Program program = compile_example("mse.psk", {}, {{"N", 4}});
  std::vector<std::vector<HostTensor>> samples = {
      {reals({4}, {1, 2, 3, 4}), reals({4}, {0.5, 2, 5, 4})},  // e = [0.5, 0, −2, 0], mse 1.0625
      {reals({4}, {0, 0, 0, 1}), reals({4}, {0, 0, 0, -2})}};  // e = [0, 0, 0, 3], mse 2.25
  Envelope envelope = calibrate_on(program, "mse", samples);
  const SiteEnvelope& error = only_site(envelope, "sub");
  const SiteEnvelope& square = only_site(envelope, "mul");
  const SiteEnvelope& mean = only_site(envelope, "mean");
  EXPECT_EQ(error.max_abs, 3);
  EXPECT_EQ(square.max_abs, 9);
  EXPECT_EQ(mean.max_abs, 2.25);
  EXPECT_EQ(envelope.output_max_abs, 2.25);
  EXPECT_EQ(error.elements, 8);
  EXPECT_EQ(error.elements_per_sample, 4);
  EXPECT_EQ(mean.elements, 2);
  ASSERT_TRUE(mean.terms.has_value());
  EXPECT_EQ(mean.terms->terms, 4);
  EXPECT_EQ(mean.weight, 4);
  EXPECT_EQ(mean.terms->sum_abs_terms, 9);                     // the sum before the division
  EXPECT_EQ(mean.terms->root_sum_squares, 9);
  EXPECT_EQ(mean.terms->operand_factors[0], 4);                 // wᵢ = 1: Σ|wᵢ| = k
  EXPECT_EQ(mean.terms->operand_factors[1], 9);                 // Σ|xᵢ|
  // Sensitivities on the first sample: L = Σe²/4, ∂L/∂(e²) = 1/4, ∂L/∂e = e/2.
  EXPECT_EQ(mean.sensitivity, 1);
  EXPECT_EQ(square.sensitivity, 1);
  EXPECT_EQ(error.sensitivity, 1.25);
  EXPECT_TRUE(envelope.parameters.empty());
}

TEST(Calibrate, LayernormMagnitudesAndParameters) {
  ir::Program program = compile_example("layernorm.psk", {{"D", 4}}, {{"T", 3}});
  reference::ParameterStore parameters = reference::synthesize_parameters(program, 0, 1);
  std::vector<double> x = {1, 0, 0, 0, 0, 2, 0, 0, -4, 0, 0, 0};
  Envelope envelope = calibrate_on(program, "normalize", {{reals({3, 4}, x)}}, parameters);
  // Independently in binary64: ḡ_d = Σ_t x̂_td with a cotangent of ones.
  double gain[4] = {0, 0, 0, 0}, output = 0, largest_mean = 0;
  for (int t = 0; t < 3; ++t) {
    double mu = (x[4 * t] + x[4 * t + 1] + x[4 * t + 2] + x[4 * t + 3]) / 4, var = 0;
    for (int d = 0; d < 4; ++d) var += (x[4 * t + d] - mu) * (x[4 * t + d] - mu) / 4;
    largest_mean = std::max(largest_mean, std::fabs(mu));
    for (int d = 0; d < 4; ++d) {
      double normalized = (x[4 * t + d] - mu) / std::sqrt(var + 1e-5);
      gain[d] += normalized;
      output = std::max(output, std::fabs(normalized));
    }
  }
  EXPECT_NEAR(envelope.output_max_abs, output, 1e-12);
  const SiteEnvelope* mu = envelope.find_site("LayerNorm.apply/%0");
  ASSERT_NE(mu, nullptr);
  EXPECT_EQ(mu->op, "mean");
  EXPECT_EQ(mu->max_abs, largest_mean);
  EXPECT_EQ(mu->terms->terms, 4);
  const ParameterEnvelope* g = envelope.find_parameter("g");
  const ParameterEnvelope* b = envelope.find_parameter("b");
  ASSERT_TRUE(g && b);
  EXPECT_EQ(g->max_abs, 1);
  EXPECT_EQ(g->elements, 4);
  EXPECT_EQ(g->rounding.bf16, 0);
  EXPECT_EQ(b->sensitivity, 12);  // T·D ones
  EXPECT_NEAR(*g->sensitivity, std::fabs(gain[0]) + std::fabs(gain[1]) + std::fabs(gain[2]) + std::fabs(gain[3]), 1e-12);
  // The literal 1e-5: never differentiated, so its sensitivity is unknown, not 0.
  EXPECT_FALSE(envelope.find_site("LayerNorm.apply/%4")->sensitivity.has_value());
  EXPECT_GT(envelope.find_site("LayerNorm.apply/%4")->rounding.f32, 0);
}

// The site with the largest max |v|, the first in program order among equals.
std::string top_site_name(const Envelope& envelope) {
  const SiteEnvelope* top = &envelope.sites.at(0);
  for (const SiteEnvelope& site : envelope.sites) {
    if (site.max_abs > top->max_abs) top = &site;
  }
  return top->site;
}

// gpt_tiny at T = 4 on synthesized tokens, as `presk calibrate` would run it.
Envelope calibrate_gpt_tiny(int threads, int64_t samples) {
  ir::Program program = compile_example("gpt_tiny.psk", {}, {{"T", 4}});
  reference::ParameterStore parameters = reference::synthesize_parameters(program, 0, 1);
  const ir::Function& entry = reference::find_entry(program, "loss");
  int64_t range = reference::default_token_range(program);
  CalibrationOptions options;
  options.bits = 96;
  options.threads = threads;
  return calibrate(program, "loss", parameters, samples,
                   [&](int64_t k) { return reference::synthesize_inputs(entry, 0, range, k); }, options);
}

TEST(Calibrate, SameEnvelopeForAnyThreadCount) {
  Envelope one = calibrate_gpt_tiny(1, 3), two = calibrate_gpt_tiny(2, 3), five = calibrate_gpt_tiny(5, 3);
  one.date = two.date = five.date = "";
  EXPECT_EQ(envelope_json(one), envelope_json(two));
  EXPECT_EQ(envelope_json(one), envelope_json(five));
  // No data-dependent control flow: every sample computes as many elements as the first, and
  // the causal mask's −∞ (6 of 16 per head, 2 heads, 2 layers) are counted, not measured.
  for (const SiteEnvelope& site : one.sites) EXPECT_EQ(site.elements, 3 * site.elements_per_sample) << site.site;
  const SiteEnvelope& mask = only_site(one, "causal_mask");
  EXPECT_EQ(mask.elements_per_sample, 64);
  EXPECT_EQ(mask.non_finite, 3 * 24);
  EXPECT_TRUE(std::isfinite(mask.max_abs));
}

TEST(CalibrateCommand, GptTinyJson) {
  testing_support::TempFolder folder;
  std::string out = folder.file("envelope.json");
  std::string command = testing::presk() + " calibrate --precision " + PRESK_SOURCE_DIR +
                        "/examples/gpt_tiny.psk --entry loss --dim T=4 --samples 2 --bits 128 --threads 2 --quiet --json --sites 5 --out " + out;
  testing::CommandResult result = testing::run_command(command, false);
  ASSERT_EQ(result.status, 0) << result.output;
  nlohmann::json json = nlohmann::json::parse(result.output);
  EXPECT_EQ(json["entry"], "loss");
  EXPECT_EQ(json["samples"], 2);
  EXPECT_EQ(json["bits"], 128);
  EXPECT_EQ(json["synthesized"], true);
  ASSERT_EQ(json["top"].size(), 5u);
  for (size_t i = 1; i < json["top"].size(); ++i) {
    EXPECT_GE(json["top"][i - 1]["max_abs"].get<double>(), json["top"][i]["max_abs"].get<double>());
  }
  Envelope envelope = read_envelope(out);
  EXPECT_EQ(json["sites"], envelope.sites.size());
  EXPECT_EQ(json["program_hash"], envelope.program_hash);
  EXPECT_EQ(envelope.bindings.at("T"), "4");
  EXPECT_EQ(envelope.token_range, 11);
  EXPECT_EQ(envelope.data, "");
  EXPECT_EQ(json["top"][0]["site"], top_site_name(envelope));
}

// The envelope's sensitivities are those `presk dump --stage sensitivity` ranks, for the same
// sample (--offset), unknown included.
TEST(CalibrateCommand, SensitivitiesMatchTheDump) {
  testing_support::TempFolder folder;
  std::string program = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk --entry normalize --const D=4 --dim T=3";
  testing::CommandResult calibrated = testing::run_command(
      testing::presk() + " calibrate --precision " + program + " --samples 2 --offset 1 --bits 128 --quiet --out " +
      folder.file("e.json"));
  ASSERT_EQ(calibrated.status, 0) << calibrated.output;
  testing::CommandResult dumped = testing::run_command(
      testing::presk() + " dump --stage sensitivity " + program + " --offset 1 --bits 128 --json", false);
  ASSERT_EQ(dumped.status, 0) << dumped.output;
  Envelope envelope = read_envelope(folder.file("e.json"));
  int compared = 0;
  nlohmann::json dump = nlohmann::json::parse(dumped.output);
  for (const nlohmann::json& row : dump["rows"]) {
    std::optional<double> total;
    if (!row["total"].is_null()) total = row["total"].get<double>();
    std::string name = row["name"];
    if (row["kind"] == "parameter") {
      EXPECT_EQ(envelope.find_parameter(name)->sensitivity, total) << name;
    } else if (const SiteEnvelope* site = envelope.find_site(name)) {
      EXPECT_EQ(site->sensitivity, total) << name;
    }
    ++compared;
  }
  EXPECT_GT(compared, 10);
}

TEST(CalibrateCommand, TableAndModes) {
  testing_support::TempFolder folder;
  std::string base = testing::presk() + " calibrate " + PRESK_SOURCE_DIR +
                     "/examples/mse.psk --entry mse --dim N=4 --samples 2 --bits 64 --out " + folder.file("e.json");
  testing::CommandResult table = testing::run_command(base + " --precision --quiet", false);
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_EQ(table.output.rfind("presk calibrate: 4 sites over 2 samples of `mse` at 64 bits\n", 0), 0u) << table.output;
  EXPECT_NE(table.output.find("synthesized from seed 0"), std::string::npos) << table.output;
  testing::CommandResult progress = testing::run_command("(" + base + " --precision >/dev/null)");
  EXPECT_NE(progress.output.find("2/2 samples"), std::string::npos) << progress.output;
  testing::CommandResult none = testing::run_command(base);
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.output.find("E0910"), std::string::npos) << none.output;
  testing::CommandResult step = testing::run_command(base + " --step");  // --samples is --precision's
  EXPECT_EQ(step.status, 2);
  EXPECT_NE(step.output.find("E1257"), std::string::npos) << step.output;
  testing::CommandResult unsampled = testing::run_command(testing::presk() + " calibrate --precision " + PRESK_SOURCE_DIR +
                                                          "/examples/mse.psk --entry mse --dim N=4 --bits 64 --out " +
                                                          folder.file("e.json"));
  EXPECT_EQ(unsampled.status, 2);
  EXPECT_NE(unsampled.output.find("--samples"), std::string::npos) << unsampled.output;
  testing::CommandResult help = testing::run_command(testing::presk() + " calibrate --help");
  EXPECT_NE(help.output.find("--precision"), std::string::npos);
  EXPECT_NE(help.output.find("--out"), std::string::npos);
}

}  // namespace
}  // namespace presk::precision
