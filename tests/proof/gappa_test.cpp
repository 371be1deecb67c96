// `presk gappa` (src/proof) end to end with Debian's gappa: a 4-term dot product and a layer
// norm at D = 4, each with an envelope calibrated on a grid of inputs, are proved, and the proof
// is at least the worst gap over the grid (the envelope's samples are the grid, so the measured
// gap is the exact worst case over it) and not vacuous (within a stated factor of the
// first-order bound); an envelope magnitude halved makes Gappa find the hypotheses
// contradictory, which presk reports as not proved; a softmax row is proved in stages; Gappa's
// output is read back exactly; what has no Gappa form is a coded error. Gappa is a dependency (scripts/install-deps): no skipping.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "proof/gappa_run.h"
#include "proof/gappa_script.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::proof {
namespace {

using testing::presk;
using testing::run_command;

const std::string kLayerNorm = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk";
const std::string kSoftmax = std::string(PRESK_SOURCE_DIR) + "/examples/softmax.psk";

constexpr const char* kDot = R"(const K = 4
module Dot {
  param w : R[K] = normal(1.0)
  fn apply(x : R[K]) -> R = x · w
}
entry dot(p : Dot, x : R[K]) -> R = p.apply(x)
)";

std::string write_text(testing_support::TempFolder& folder, const std::string& name,
                       const std::string& text) {
  const std::string path = folder.file(name);
  std::ofstream(path) << text;
  return path;
}

// Every x in G⁴ (G a few values, none of them binary32 numbers but ±1) as samples of `x`,
// shaped `shape` per sample; rows whose variance is below `min_variance` are left out.
std::string write_grid(testing_support::TempFolder& folder, const std::vector<int64_t>& shape,
                       double min_variance, int64_t& samples) {
  const double grid[] = {-1.0, -0.55, -0.1, 0.3, 0.7, 1.0};
  std::vector<double> values;
  for (double a : grid)
    for (double b : grid)
      for (double c : grid)
        for (double d : grid) {
          const double mean = (a + b + c + d) / 4;
          const double variance = ((a - mean) * (a - mean) + (b - mean) * (b - mean) +
                                   (c - mean) * (c - mean) + (d - mean) * (d - mean)) /
                                  4;
          if (variance < min_variance) continue;
          values.insert(values.end(), {a, b, c, d});
        }
  samples = static_cast<int64_t>(values.size() / 4);
  std::vector<int64_t> full{samples};
  full.insert(full.end(), shape.begin(), shape.end());
  Tensor x(ElementType::f64, full);
  for (size_t i = 0; i < values.size(); ++i) x.set(static_cast<int64_t>(i), values[i]);
  const std::string path = folder.file("grid.safetensors");
  write_safetensors(path, {{"x", x}});
  return path;
}

std::string calibrate(testing_support::TempFolder& folder, const std::string& program,
                      const std::string& args, const std::string& name) {
  const std::string out = folder.file(name);
  const auto result = run_command(presk() + " calibrate --precision " + program + " " + args +
                                      " --bits 256 --quiet --out " + out,
                                  false);
  EXPECT_EQ(result.status, 0) << result.output;
  return out;
}

nlohmann::json prove(testing_support::TempFolder& folder, const std::string& program,
                     const std::string& envelope, const std::string& more = "") {
  const auto result =
      run_command(presk() + " gappa " + program + " --realize f32 --precision " + envelope +
                      " --out " + folder.file("proof.g") + " --run --json --timeout 60 " + more,
                  false);
  EXPECT_TRUE(result.status == 0 || result.status == 1) << result.output;
  return nlohmann::json::parse(result.output);
}

double number(const nlohmann::json& value) {
  return value.is_string() ? std::stod(value.get<std::string>()) : value.get<double>();
}

// The proof holds on the grid and says something: at least the worst gap over it, and within
// `factor` of the first-order k bound (which a vacuous enclosure, Gappa's from ranges alone, is
// not).
void expect_proved_on_grid(const nlohmann::json& report, double factor) {
  ASSERT_EQ(report["outcome"], "proved") << report.dump();
  const double proved = number(report["proved"]), measured = number(report["measured"]);
  EXPECT_GT(measured, 0);
  EXPECT_GE(proved, measured) << report.dump();
  EXPECT_LE(proved, factor * number(report["bounds"]["k"])) << report.dump();
}

TEST(Gappa, DotProductOfFourTermsProvedOnAGrid) {
  testing_support::TempFolder folder;
  const std::string program = write_text(folder, "dot.psk", kDot);
  int64_t samples = 0;
  const std::string grid = write_grid(folder, {4}, -1, samples);
  const std::string envelope =
      calibrate(folder, program,
                "--entry dot --data " + grid + " --samples " + std::to_string(samples), "dot.json");
  const nlohmann::json report = prove(folder, program, envelope);
  expect_proved_on_grid(report, 4);
  EXPECT_EQ(report["goals"], 1);
}

TEST(Gappa, LayerNormAtFourProvedOnAGrid) {
  testing_support::TempFolder folder;
  int64_t samples = 0;
  const std::string grid = write_grid(folder, {1, 4}, 0.05, samples);
  const std::string envelope = calibrate(folder, kLayerNorm,
                                         "--entry normalize --const D=4 --dim T=1 --data " + grid +
                                             " --samples " + std::to_string(samples),
                                         "ln.json");
  const nlohmann::json report = prove(folder, kLayerNorm, envelope);
  expect_proved_on_grid(report, 20);
  EXPECT_EQ(report["goals"], 4);
}

// One row's envelope: the proof agrees with the first-order cond bound within 2×; halving any
// one magnitude contradicts the others (the row's variance is pinned by its mean of squares
// above and its rsqrt below), and presk says not proved, with no bound.
TEST(Gappa, HalvedMagnitudeIsNotProved) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate(
      folder, kLayerNorm, "--entry normalize --const D=4 --dim T=1 --samples 1", "row.json");
  const nlohmann::json report = prove(folder, kLayerNorm, envelope);
  ASSERT_EQ(report["outcome"], "proved") << report.dump();
  EXPECT_GE(number(report["proved"]), number(report["measured"]));
  EXPECT_LE(number(report["proved"]), 2 * number(report["bounds"]["cond"]));
  for (const std::string site : {"LayerNorm.apply/%6", "LayerNorm.apply/%3"}) {
    nlohmann::json halved = nlohmann::json::parse(std::ifstream(envelope));
    for (nlohmann::json& s : halved["sites"]) {
      if (s["site"] == site) s["max_abs"] = number(s["max_abs"]) / 2;
    }
    const std::string path = folder.file("halved.json");
    std::ofstream(path) << halved.dump();
    const auto result =
        run_command(presk() + " gappa " + kLayerNorm + " --realize f32 --precision " + path +
                    " --out " + folder.file("halved.g") + " --run --timeout 60");
    EXPECT_EQ(result.status, 1) << result.output;
    EXPECT_NE(result.output.find("not proved (the hypotheses contradict each other)"),
              std::string::npos)
        << result.output;
    const nlohmann::json json = prove(folder, kLayerNorm, path);
    EXPECT_TRUE(json["proved"].is_null()) << json.dump();
  }
}

// A proof past --timeout (Gappa's CPU seconds) is reported as timed out, with no bound.
TEST(Gappa, TimeoutSaysSo) {
  testing_support::TempFolder folder;
  const std::string envelope = calibrate(
      folder, kLayerNorm, "--entry normalize --const D=16 --dim T=1 --samples 1", "wide.json");
  const auto result =
      run_command(presk() + " gappa " + kLayerNorm + " --realize f32 --precision " + envelope +
                  " --out " + folder.file("wide.g") + " --run --timeout 1");
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("not proved (timed out)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("ran past the limit of 1 s of CPU time"), std::string::npos)
      << result.output;
}

TEST(Gappa, OutputReadBackExactly) {
  const GappaResult proved = read_gappa_output(
      "Results:\n  |r5 - E5| in [0, 1051958674788358579b-76 {1.39226e-05, 2^(-16.1322)}]\n"
      "  |r6 - E6| in [2882303761517b-58 {1e-05, 2^(-16.6096)}, 3 {3, 2^(1.58496)}]\n",
      0, 2);
  EXPECT_EQ(proved.outcome, Outcome::proved);
  EXPECT_EQ(proved.goals, 2);
  EXPECT_EQ(proved.bound, 3);
  const GappaResult small =
      read_gappa_output("Results:\n  |r5 - E5| in [0, 1051958674788358579b-76 {…}]\n", 0, 1);
  // 1051958674788358579·2⁻⁷⁶ needs 60 bits: rounded up, never down.
  EXPECT_GE(small.bound, std::ldexp(1051958674788358579.0, -76));
  EXPECT_LE(small.bound, std::nextafter(std::ldexp(1051958674788358579.0, -76), 1.0));
  EXPECT_EQ(read_gappa_output("Results:\n  |r5 - E5| in [0, 1b-3]\n", 0, 2).outcome,
            Outcome::not_proved);
  EXPECT_EQ(
      read_gappa_output("Error: some properties were not satisfied:\n  BND(|r1 - E1|)\n", 1, 1)
          .outcome,
      Outcome::not_proved);
  EXPECT_EQ(read_gappa_output(
                "Results:\n  remaining results are pointless, anything can be proved.\n", 0, 1)
                .outcome,
            Outcome::contradictory);
}

TEST(Gappa, NumbersWrittenExactly) {
  EXPECT_EQ(gappa_number(0), "0");
  EXPECT_EQ(gappa_number(-3), "-3");
  EXPECT_EQ(gappa_number(0.625), "5b-3");
  EXPECT_EQ(gappa_number(0.1), "3602879701896397b-55");
  EXPECT_EQ(gappa_number(std::ldexp(1.0, 1000)), "1b1000");
}

// A softmax row, by hand (max, exp, sum, ÷ as separate sites) and as the op, in stages: the
// errors of the max's members and of exp's arguments are proved first, then the row with them as
// hypotheses (docs/proof.md). The proof is at least the worst gap over the grid.
TEST(Gappa, SoftmaxRowsProvedOnAGridInStages) {
  testing_support::TempFolder folder;
  int64_t samples = 0;
  const std::string grid = write_grid(folder, {1, 4}, -1, samples);
  for (const char* entry : {"by_hand", "probabilities"}) {
    const std::string envelope =
        calibrate(folder, kSoftmax,
                  std::string("--entry ") + entry + " --const V=4 --dim T=1 --data " + grid +
                      " --samples " + std::to_string(samples),
                  std::string(entry) + ".json");
    const nlohmann::json report = prove(folder, kSoftmax, envelope);
    expect_proved_on_grid(report, 20);
    EXPECT_EQ(report["goals"], 4);
    EXPECT_EQ(report["stages"].size(), 2u) << report.dump();
  }
  // Without --run the stages cannot run: E1604, before any file is written.
  const auto result = run_command(presk() + " gappa " + kSoftmax + " --realize f32 --precision " +
                                  folder.file("by_hand.json") + " --out " + folder.file("s.g"));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("E1604"), std::string::npos) << result.output;
  EXPECT_FALSE(std::ifstream(folder.file("s.g")).good());
}

TEST(Gappa, NoGappaFormIsACodedError) {
  testing_support::TempFolder folder;
  const std::string envelope =
      calibrate(folder, kSoftmax, "--entry log_probabilities --const V=4 --dim T=1 --samples 1",
                "softmax.json");
  auto result = run_command(presk() + " gappa " + kSoftmax + " --realize f32 --precision " +
                            envelope + " --out " + folder.file("s.g"));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("E1600"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("log_softmax"), std::string::npos) << result.output;
  const std::string ln = calibrate(
      folder, kLayerNorm, "--entry normalize --const D=4 --dim T=1 --samples 1", "ln.json");
  result = run_command(presk() + " gappa " + kLayerNorm + " --realize f32 --precision " + ln +
                       " --site Nope/%3 --out " + folder.file("l.g"));
  EXPECT_NE(result.output.find("E1601"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace presk::proof
