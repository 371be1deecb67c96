// The reference's own gap certified (proof/certify.h): the bound from the Arb ball run at p bits
// holds against an independent stand-in for the denotation — the MPFR reference at 4p bits, whose
// own distance is 2^-3p times smaller (the seed's "The reference's own gap") — and is not vacuous;
// `presk check --measure` prints it and flags a gap that does not exceed it by kCertifiedFactor.
#include "proof/certify.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/run_command.h"
#include "exec/reference/arith_mpfr.h"
#include "exec/reference/interpreter.h"
#include "lang/frontend.h"
#include "support/random.h"
#include "support/temp_folder.h"

namespace presk::proof {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// max over outputs of |a − b|, rounded up.
double largest_difference(const precision::ExactOutputs& a, const precision::ExactOutputs& b) {
  double largest = 0;
  mpfr_t d;
  mpfr_init2(d, 4096);
  for (size_t k = 0; k < a.samples.size(); ++k) {
    for (size_t r = 0; r < a.samples[k].size(); ++r) {
      const auto& x = a.samples[k][r];
      for (int64_t i = 0; i < reference::element_count(x.shape); ++i) {
        mpfr_sub(d, x.real(i), b.samples[k][r].real(i), MPFR_RNDA);
        largest = std::max(largest, std::fabs(mpfr_get_d(d, MPFR_RNDA)));
      }
    }
  }
  mpfr_clear(d);
  return largest;
}

TEST(CertifiedReference, BoundsTheDistanceToAFourTimesFinerReference) {
  for (const char* file : {"layernorm.psk", "softmax.psk", "mlp.psk"}) {
    lang::FrontendOptions options;
    options.entry = std::string(file) == "softmax.psk" ? "probabilities"
                    : std::string(file) == "mlp.psk"   ? "logits"
                                                       : "normalize";
    options.dims = {{std::string(file) == "mlp.psk" ? "B" : "T", 3}};
    const ir::Program program = lang::compile(
        lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file), options);
    const ir::Function& entry = *program.find_function(options.entry);
    const reference::ParameterStore parameters = reference::synthesize_parameters(program, 1, 1);
    const precision::SampleInputs inputs = [&](int64_t k) {
      return reference::synthesize_inputs(entry, 7, 2, k);
    };
    for (long bits : {53L, 64L, 128L}) {
      const precision::ExactOutputs at_p =
          precision::run_exactly(program, entry, parameters, 2, inputs, bits, 1);
      const precision::ExactOutputs finer =
          precision::run_exactly(program, entry, parameters, 2, inputs, 4 * bits, 1);
      const CertifiedReference certified =
          certify_reference(program, entry, parameters, 2, inputs, at_p, 1, bits);
      const double distance = largest_difference(at_p, finer);
      EXPECT_EQ(certified.samples, 2);
      EXPECT_GE(certified.radius, distance) << file << " at " << bits;
      // Not vacuous: within 2^20 of a few units of roundoff at p bits times the output's scale.
      EXPECT_LE(certified.radius, std::ldexp(1.0, 40 - static_cast<int>(bits)))
          << file << " at " << bits;
    }
  }
}

TEST(CertifiedReference, CheckMeasurePrintsItAndFlagsAGapBelowIt) {
  testing_support::TempFolder folder;
  const std::string program = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk";
  for (const char* bits : {"256", "53"}) {
    const std::string envelope = folder.file(std::string("ln") + bits + ".json");
    auto result = testing::run_command(
        testing::presk() + " calibrate --precision " + program +
            " --entry normalize --dim T=2 --const D=4 --samples 2 --quiet --bits " + bits +
            " --out " + envelope,
        false);
    ASSERT_EQ(result.status, 0) << result.output;
    result = testing::run_command(testing::presk() + " check --precision " + envelope + " " +
                                      program + " --realize f64 --measure --json",
                                  false);
    ASSERT_EQ(result.status, 0) << result.output;
    const nlohmann::json measured = nlohmann::json::parse(result.output)["measured"];
    const double radius = measured["reference_radius"].get<double>(),
                 gap = measured["absolute"].get<double>();
    EXPECT_GT(radius, 0);
    EXPECT_EQ(measured["certified"].get<bool>(), gap > kCertifiedFactor * radius);
    // At 256 bits f64's gap is read as a value; at 53 bits the reference is no finer than f64.
    EXPECT_EQ(measured["certified"].get<bool>(), std::string(bits) == "256") << measured.dump();
    result = testing::run_command(testing::presk() + " check --precision " + envelope + " " +
                                      program + " --realize f64 --measure",
                                  false);
    EXPECT_NE(result.output.find("proven by Arb balls"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("flagged:") != std::string::npos, std::string(bits) == "53")
        << result.output;
  }
}

// The program and samples of the tests below.
struct Case {
  ir::Program program;
  reference::ParameterStore parameters;
  precision::SampleInputs inputs;
  const ir::Function& entry() const { return *program.find_function("logits"); }
};
Case mlp_case() {
  lang::FrontendOptions options;
  options.entry = "logits";
  options.dims = {{"B", 3}};
  Case c{lang::compile(lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/mlp.psk"), options), {}, {}};
  c.parameters = reference::synthesize_parameters(c.program, 1, 1);
  const ir::Function& entry = c.entry();
  c.inputs = [&entry](int64_t k) { return reference::synthesize_inputs(entry, 7, 2, k); };
  return c;
}

// certify_gap runs the balls again at more bits where their bound does not certify the gap: at
// 128 bits the bound r is mostly the balls' own growth, so a gap of exactly 1000·r (not
// certified: the gap must exceed it) is certified at 128 + ⌈log2 16⌉ → 192 bits, whose bound is
// below r; capped at 128 bits, or with a gap of 0, it runs once. At 53 bits the bound is the
// MPFR reference's own distance, which more bits do not narrow, for a gap too small: it stops.
TEST(CertifiedReference, MoreBitsCertifyWhatTheBallsWrappedAndStopWhereTheyCannot) {
  const Case c = mlp_case();
  const precision::ExactOutputs at_128 = precision::run_exactly(c.program, c.entry(), c.parameters, 2, c.inputs, 128, 1);
  const CertifiedReference once = certify_reference(c.program, c.entry(), c.parameters, 2, c.inputs, at_128, 1, 128);
  const double gap = kCertifiedFactor * once.radius;
  ASSERT_FALSE(certifies(once, gap));
  std::vector<std::string> notes;
  const auto note = [&](const std::string& line) { notes.push_back(line); };
  const CertifiedReference again =
      certify_gap(c.program, c.entry(), c.parameters, 2, c.inputs, at_128, 1, gap, kCertifyMaxBits, note);
  ASSERT_EQ(again.runs.size(), 2u);
  EXPECT_EQ(again.runs[0].bits, 128);
  EXPECT_EQ(again.runs[0].radius, once.radius);
  EXPECT_EQ(again.runs[1].bits, 192);
  EXPECT_EQ(again.bits, 192);
  EXPECT_LT(again.radius, once.radius);
  EXPECT_TRUE(certifies(again, gap));
  EXPECT_EQ(notes.size(), 3u);  // two runs and the step between them
  EXPECT_EQ(certify_gap(c.program, c.entry(), c.parameters, 2, c.inputs, at_128, 1, gap, 128, {}).runs.size(), 1u);
  EXPECT_EQ(certify_gap(c.program, c.entry(), c.parameters, 2, c.inputs, at_128, 1, 0, 512, {}).runs.size(), 1u);

  const precision::ExactOutputs at_53 = precision::run_exactly(c.program, c.entry(), c.parameters, 2, c.inputs, 53, 1);
  const CertifiedReference coarse = certify_reference(c.program, c.entry(), c.parameters, 2, c.inputs, at_53, 1, 53);
  // A gap 1000× below anything the 53-bit reference can be proven to: the runs stop on their
  // own (the bound no longer falls 4×), before the cap.
  const double tiny = coarse.radius;
  const CertifiedReference stalled =
      certify_gap(c.program, c.entry(), c.parameters, 2, c.inputs, at_53, 1, tiny, kCertifyMaxBits, {});
  ASSERT_GE(stalled.runs.size(), 2u);
  EXPECT_FALSE(certifies(stalled, tiny));
  EXPECT_LT(stalled.bits, kCertifyMaxBits);
  EXPECT_GT(stalled.runs.back().radius, stalled.runs[stalled.runs.size() - 2].radius / 4);
}

// Balls that lose every bit (x/3·3 − x holds 0, so its reciprocal is indeterminate) stop where
// they do, at each precision: 128, 256, then 512 bits (the cap), each run naming the site, the
// bound infinite.
TEST(CertifiedReference, ARunWhoseBallsWrapStopsThereAndDoublesItsBits) {
  testing_support::TempFolder folder;
  const std::string path = folder.file("wrap.psk");
  std::ofstream(path) << "dim T\nentry f(x : R[T]) -> R[T] = 1 / (x / 3 * 3 - x)\n";
  lang::FrontendOptions options;
  options.entry = "f";
  options.dims = {{"T", 4}};
  const ir::Program program = lang::compile(lang::read_source(path), options);
  const ir::Function& entry = *program.find_function("f");
  const reference::ParameterStore parameters = reference::synthesize_parameters(program, 1, 1);
  const precision::SampleInputs inputs = [&](int64_t k) { return reference::synthesize_inputs(entry, 7, 2, k); };
  const precision::ExactOutputs exact = precision::run_exactly(program, entry, parameters, 1, inputs, 128, 1);
  const CertifiedReference certified =
      certify_gap(program, entry, parameters, 1, inputs, exact, 1, 1.0, kCertifyMaxBits, {});
  ASSERT_EQ(certified.runs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(certified.runs[i].bits, 128L << i);
    EXPECT_NE(certified.runs[i].wrapped_at.find("f/%"), std::string::npos) << certified.runs[i].wrapped_at;
    EXPECT_TRUE(std::isinf(certified.runs[i].radius));
  }
  EXPECT_FALSE(certifies(certified, 1.0));
}

// presk solve certifies the reference it measured against (--certify N, default 1): the record
// holds δ_p's bound, the report prints it and flags a gap that does not exceed it by
// kCertifiedFactor; --certify 0 records none; the record is the same bytes at 1 and 2 threads.
TEST(CertifiedReference, SolveRecordsItPrintsItAndFlagsAGapBelowIt) {
  testing_support::TempFolder folder;
  const std::string program = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk";
  for (const char* bits : {"256", "53"}) {
    const std::string envelope = folder.file(std::string("ln") + bits + ".json");
    auto result = testing::run_command(testing::presk() + " calibrate --precision " + program +
                                           " --entry normalize --dim T=2 --const D=4 --samples 3 --quiet --bits " +
                                           bits + " --out " + envelope,
                                       false);
    ASSERT_EQ(result.status, 0) << result.output;
    const std::string solve = testing::presk() + " solve " + program + " --precision " + envelope +
                              " --budget 1e-13 --quiet --certify 2 --out ";
    const std::string r1 = folder.file(std::string("r1_") + bits + ".json"),
                      r2 = folder.file(std::string("r2_") + bits + ".json");
    result = testing::run_command(solve + r1 + " --threads 1", false);
    ASSERT_EQ(result.status, 0) << result.output;
    // At 53 bits the balls run again at more bits (certify_gap), which cannot help: the bound is
    // the 53-bit reference's own distance. The report names the bits of the run it prints.
    const nlohmann::json first = nlohmann::json::parse(read_text(r1))["solve"]["reference"];
    EXPECT_EQ(first["runs"].size() > 1, std::string(bits) == "53") << first.dump();
    EXPECT_EQ(first["reference_bits"].get<int>(), std::stoi(bits));
    EXPECT_NE(result.output.find("of the denotation, proven (Arb balls at " + std::to_string(first["bits"].get<int>()) +
                                 " bits on 2 of the 3 samples"),
              std::string::npos)
        << result.output;
    EXPECT_EQ(result.output.find("flagged") != std::string::npos, std::string(bits) == "53") << result.output;
    ASSERT_EQ(testing::run_command(solve + r2 + " --threads 2", false).status, 0);
    EXPECT_EQ(read_text(r1), read_text(r2)) << "the record depends on the thread count";
    const nlohmann::json record = nlohmann::json::parse(read_text(r1))["solve"];
    const nlohmann::json& reference = record["reference"];
    const double radius = reference["radius"].get<double>();
    const double gap = record["gap"]["in_sample"]["absolute"].get<double>();
    EXPECT_GT(radius, 0);
    EXPECT_LT(radius, std::ldexp(1.0, 40 - std::stoi(bits)));
    EXPECT_EQ(reference["samples_certified"].get<int>(), 2);
    EXPECT_EQ(reference["certified"].get<bool>(), gap > kCertifiedFactor * radius) << reference.dump();
  }
  const std::string r0 = folder.file("r0.json");
  ASSERT_EQ(testing::run_command(testing::presk() + " solve " + program + " --precision " + folder.file("ln256.json") +
                                     " --budget 1e-3 --quiet --certify 0 --out " + r0,
                                 false)
                .status,
            0);
  EXPECT_FALSE(nlohmann::json::parse(read_text(r0))["solve"].contains("reference"));
}

}  // namespace
}  // namespace presk::proof
