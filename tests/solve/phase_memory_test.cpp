// The phases' memory estimates (cli/phase_memory.h, ir/footprint.h) against what a run really
// holds: `calibrate --sweep f64` of a small Llama (D 64, 2 layers, GQA 4/2, a vocabulary of 8000
// so that the logits and their cotangents dominate), run as a child whose peak resident memory
// the kernel reports (getrusage of the children). The estimate must be an upper bound of the
// peak's growth over a process that does nothing (presk --version), and within a stated factor
// of it (the estimate of 2026-12-03 counted every let of every function at once: ~1.8× the run
// of a 125M Llama by the whole process's peak, far more at this size).
#include <sys/resource.h>

#include <iostream>
#include <map>
#include <regex>

#include "solve/solve_fixture.h"

namespace presk::solve_testing {
namespace {

// The peak resident set of the largest child reaped so far, in bytes (Linux: ru_maxrss in KiB).
uint64_t children_peak() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// The bytes of the first "needs about N UNIT" in `output` (support/input_file.h's byte_count_text).
double estimate_in(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex("needs about ([0-9.e+]+) (bytes|KiB|MiB|GiB)"))) return -1;
  const std::string unit = match[2];
  const double scale = unit == "GiB" ? 1 << 30 : unit == "MiB" ? 1 << 20 : unit == "KiB" ? 1 << 10 : 1;
  return std::stod(match[1]) * scale;
}

TEST(PhaseMemory, EstimateBoundsTheMeasuredPeakOfASmallLlama) {
  testing_support::TempFolder folder;
  // Nothing else runs as a child of this test before these two (ctest runs each test alone).
  const testing::CommandResult idle = testing::run_command(testing::presk() + " --version");
  ASSERT_EQ(idle.status, 0) << idle.output;
  const uint64_t baseline = children_peak();
  const std::string out = folder.file("e.json");
  // PRESK_MEMORY_LIMIT=4K with =warn: the estimate is printed, and the run goes on.
  const testing::CommandResult run = testing::run_command(
      "PRESK_MEMORY_LIMIT=4K PRESK_MEMORY_ESTIMATE=warn " + testing::presk() + " calibrate --precision " +
      example("llama.psk") + " --entry loss --const V=8000 --dim T=32 --samples 2 --bits 128 --sweep f64 --threads 1 "
      "--quiet --out " + out);
  ASSERT_EQ(run.status, 0) << run.output;
  const uint64_t peak = children_peak();
  ASSERT_GT(peak, baseline) << run.output;
  const double growth = static_cast<double>(peak - baseline);
  const double estimate = estimate_in(run.output);
  ASSERT_GT(estimate, 0) << run.output;
  std::cerr << "estimate " << estimate / (1 << 20) << " MiB, peak growth " << growth / (1 << 20) << " MiB (peak "
            << static_cast<double>(peak) / (1 << 20) << " MiB, idle " << static_cast<double>(baseline) / (1 << 20)
            << " MiB)\n";
  EXPECT_GE(estimate, growth) << run.output;
  EXPECT_LE(estimate, 6 * growth) << run.output;
}

// The bytes of the phase whose description starts `phase` in an E0017 message.
double phase_in(const std::string& output, const std::string& phase) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex(phase + "[^;)]*: about ([0-9.e+]+) (bytes|KiB|MiB|GiB)"))) return -1;
  const std::string unit = match[2];
  const double scale = unit == "GiB" ? 1 << 30 : unit == "MiB" ? 1 << 20 : unit == "KiB" ? 1 << 10 : 1;
  return std::stod(match[1]) * scale;
}

// A bf16 checkpoint's headers are read before the estimate: its P tensor elements count 2 bytes
// as read and 2 at rest for the native binary64 runs (in their stored type), against 8 and 8 for
// synthesized (binary64) parameters: 12·P bytes less, to the message's 3 digits.
TEST(PhaseMemory, ACheckpointsParametersCountInTheirStoredType) {
  testing_support::TempFolder folder;
  const std::string weights = folder.file("ck");
  const testing::CommandResult synth = testing::run_command(
      testing::presk() + " checkpoint synth " + example("llama.psk") + " --dim T=8 --json --quiet --out " + weights, false);
  ASSERT_EQ(synth.status, 0) << synth.output;
  const double elements = nlohmann::json::parse(synth.output)["parameters"].get<double>();
  std::map<std::string, double> native;
  for (const std::string& with : {std::string(), " --weights " + weights}) {
    const testing::CommandResult run = testing::run_command(
        "PRESK_MEMORY_LIMIT=1K " + testing::presk() + " calibrate --precision " + example("llama.psk") +
        " --entry logits --dim T=8 --samples 2 --bits 128 --sweep f64 --threads 2 --out " + folder.file("e.json") + with);
    ASSERT_NE(run.output.find("E0017"), std::string::npos) << run.output;
    native[with] = phase_in(run.output, "the native binary64 runs");
    ASSERT_GT(native[with], 0) << run.output;
  }
  const double saved = native[""] - native[" --weights " + weights];
  EXPECT_NEAR(saved, 12 * elements, 0.01 * native[""]);
}

// The elements the run line of an E0017 message counts held at once per sample.
double run_elements(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex("the program's ([0-9]+) elements held at once per sample"))) return -1;
  return std::stod(match[1]);
}

// A solve's exact runs have no observer, so the reference reads the parameters in place: its
// estimate must not count the head (V × D elements, here 2.05 M of the program's lets) as a let
// at --bits, as a calibration with the exact sweep (observed: each parameter converted whole)
// does. The 1.2B solve was refused at 81 GiB when the solve counted it so.
TEST(PhaseMemory, ASolveCountsItsParametersReadInPlace) {
  testing_support::TempFolder folder;
  const std::string weights = folder.file("ck"), envelope = folder.file("e.json");
  const std::string binds = " --const V=32000 --dim T=8 --weights " + weights;
  const testing::CommandResult synth = testing::run_command(
      testing::presk() + " checkpoint synth " + example("llama.psk") + " --const V=32000 --dim T=8 --quiet --out " + weights);
  ASSERT_EQ(synth.status, 0) << synth.output;
  const testing::CommandResult calibrate = testing::run_command(
      testing::presk() + " calibrate --precision " + example("llama.psk") + " --entry logits" + binds +
      " --samples 1 --bits 64 --sweep f64 --quiet --out " + envelope);
  ASSERT_EQ(calibrate.status, 0) << calibrate.output;
  const testing::CommandResult solve = testing::run_command(
      "PRESK_MEMORY_LIMIT=1K " + testing::presk() + " solve " + example("llama.psk") + " --precision " + envelope +
      " --budget 1e-3 --out " + folder.file("s.json"));
  const testing::CommandResult observed = testing::run_command(
      "PRESK_MEMORY_LIMIT=1K " + testing::presk() + " calibrate --precision " + example("llama.psk") + " --entry logits" +
      binds + " --samples 1 --bits 64 --out " + folder.file("o.json"));
  const double in_place = run_elements(solve.output), whole = run_elements(observed.output);
  ASSERT_GT(in_place, 0) << solve.output;
  ASSERT_GT(whole, 0) << observed.output;
  EXPECT_LE(in_place + 32000.0 * 64 / 2, whole) << solve.output << observed.output;
}

}  // namespace
}  // namespace presk::solve_testing
