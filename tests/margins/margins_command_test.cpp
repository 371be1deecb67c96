// `presk margins` end to end, in a temporary folder: ε* exact on a program whose logits are its
// input, --offset/--windows against the binomial computed here, --realize never flipping more
// decisions than allowed, the solve line, the coded errors, and a token-window file feeding a
// logits entry's Z[T] argument (which `presk run` reads too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "common/run_command.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"
#include "support/tensor.h"

namespace presk {
namespace {

using testing::presk;
using testing::run_command;

constexpr const char* kProgram =
    "const V = 3\n"
    "dim N\n"
    "entry logits(x : R[N, 2, V]) -> R[N, 2, V] = x * 1\n"
    "entry total(x : R[N, 2, V]) -> R = sum(x)\n";

struct Files {
  testing_support::TempFolder folder;
  std::string program, data;
  std::vector<int> shuffle = std::vector<int>(100);
  // 10 windows of logits R[5, 2, 3]: position p has margin (σ(p) + 1)/64.
  Files() {
    program = folder.file("identity.psk");
    std::ofstream(program) << kProgram;
    std::iota(shuffle.begin(), shuffle.end(), 0);
    std::shuffle(shuffle.begin(), shuffle.end(), std::mt19937(3));
    Tensor x(ElementType::f64, {10, 5, 2, 3});
    for (int p = 0; p < 100; ++p) {
      for (int j = 0; j < 3; ++j) {
        x.set(static_cast<uint64_t>(3 * p + j), j == p % 3 ? 1 + (shuffle[p] + 1) / 64.0 : j == (p + 1) % 3 ? 1.0 : -1.0);
      }
    }
    data = folder.file("x.safetensors");
    write_safetensors(data, {{"x", x}});
  }
  // stdout only, or with stderr after it (`merge`: for the diagnostics).
  testing::CommandResult margins(const std::string& args, bool merge = false) const {
    return run_command(presk() + " margins " + program + " --entry logits --dim N=5 --data " + data + " " + args +
                           " --quiet",
                       merge);
  }
};

// K: the largest k with P(X ≤ k; n, δ) ≤ 1 − c, summed here in double.
int64_t most_close_calls(int64_t n, double delta, double c) {
  double cdf = 0;
  for (int64_t k = 0; k < n; ++k) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * std::log(delta) +
                    (n - k) * std::log1p(-delta));
    if (cdf > 1 - c) return k - 1;
  }
  return n - 1;
}

TEST(MarginsCommand, EpsilonStarOnHandComputedLogits) {
  const Files files;
  const testing::CommandResult result = files.margins("--delta 0.1 --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["windows"], 10);
  EXPECT_EQ(report["positions"], 100);
  EXPECT_EQ(report["positions_per_window"], 10);
  ASSERT_EQ(report["epsilon_star"].size(), 1u);
  const nlohmann::json& star = report["epsilon_star"][0];
  EXPECT_EQ(star["allowed"], 4);                    // P(X ≤ 4; 100, 0.1) = 0.0237, P(X ≤ 5) = 0.0576
  EXPECT_EQ(star["epsilon"].get<double>(), 5 / 128.0);  // the fifth smallest margin, 5/64, halved
  EXPECT_EQ(star["minimum_positions"], 29);
  EXPECT_NE(star["solve"].get<std::string>().find("--budget-abs 3.90e-2 "), std::string::npos) << star["solve"];
  EXPECT_NE(report["calibrate"].get<std::string>().find("--entry logits --dim N=5"), std::string::npos);
  EXPECT_EQ(report["quantiles"][0]["margin"].get<double>(), 1 / 64.0);
  EXPECT_EQ(report["quantiles"].back()["margin"].get<double>(), 100 / 64.0);
}

TEST(MarginsCommand, OffsetAndWindowsPickTheSamples) {
  const Files files;
  const testing::CommandResult result = files.margins("--offset 2 --windows 5 --delta 0.1 --confidence 0.9 --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  std::vector<double> margins;
  for (int p = 20; p < 70; ++p) margins.push_back((files.shuffle[p] + 1) / 64.0);
  std::sort(margins.begin(), margins.end());
  const int64_t k = most_close_calls(50, 0.1, 0.9);
  EXPECT_EQ(report["positions"], 50);
  EXPECT_EQ(report["epsilon_star"][0]["allowed"], k);
  EXPECT_EQ(report["epsilon_star"][0]["epsilon"].get<double>(), margins[static_cast<size_t>(k)] / 2);
  // The table prints the same ε* and a solve line.
  const testing::CommandResult table = files.margins("--offset 2 --windows 5 --delta 0.1 --confidence 0.9");
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("presk solve " + files.program), std::string::npos) << table.output;
}

// --over windows: the bound counts windows, a window a close call when any of its positions is
// (the windows' smallest margins, computed here); the output states which it counts. With 10
// windows δ = 0.1 at 95 % needs 29 trials: refused over windows, where 100 positions suffice.
TEST(MarginsCommand, TheBoundOverWindows) {
  const Files files;
  const testing::CommandResult result = files.margins("--delta 0.5 --confidence 0.9 --over windows --json");
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["over"], "windows");
  std::vector<double> minima;
  for (int w = 0; w < 10; ++w) {
    double least = INFINITY;
    for (int p = 10 * w; p < 10 * w + 10; ++p) least = std::min(least, (files.shuffle[p] + 1) / 64.0);
    minima.push_back(least);
  }
  std::sort(minima.begin(), minima.end());
  const int64_t k = most_close_calls(10, 0.5, 0.9);
  EXPECT_EQ(report["epsilon_star"][0]["allowed"], k);
  EXPECT_EQ(report["epsilon_star"][0]["epsilon"].get<double>(), minima[static_cast<size_t>(k)] / 2);
  EXPECT_EQ(files.margins("--delta 0.5 --confidence 0.9 --json").status, 0);
  EXPECT_EQ(nlohmann::json::parse(files.margins("--delta 0.5 --confidence 0.9 --json").output)["over"], "positions");
  const testing::CommandResult few = files.margins("--delta 0.1 --over windows", true);
  EXPECT_EQ(few.status, 1) << few.output;
  EXPECT_NE(few.output.find("E1153"), std::string::npos) << few.output;
  const testing::CommandResult table = files.margins("--delta 0.5 --confidence 0.9 --over windows");
  EXPECT_NE(table.output.find("over windows"), std::string::npos) << table.output;
  const testing::CommandResult positions = files.margins("--delta 0.1");
  EXPECT_NE(positions.output.find("the confidence is overstated"), std::string::npos) << positions.output;
}

TEST(MarginsCommand, ARealizationFlipsNoMoreThanAllowed) {
  testing_support::TempFolder folder;
  const std::string program = folder.file("identity.psk"), data = folder.file("close.safetensors");
  std::ofstream(program) << kProgram;
  std::mt19937 random(5);
  std::normal_distribution<double> normal(0, 1);
  Tensor x(ElementType::f64, {40, 5, 2, 3});
  for (uint64_t i = 0; i < 1200; i += 30) {
    const double scale = std::ldexp(1.0, static_cast<int>(random() % 24) - 26);
    for (uint64_t j = 0; j < 30; ++j) x.set(i + j, 1 + scale * normal(random));
  }
  write_safetensors(data, {{"x", x}});
  const testing::CommandResult result =
      run_command(presk() + " margins " + program + " --entry logits --dim N=5 --data " + data +
                      " --delta 0.1 --realize f64 --realize f32 --realize bf16 --threads 3 --json --quiet",
                  false);
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json realizations = nlohmann::json::parse(result.output)["realizations"];
  ASSERT_EQ(realizations.size(), 3u);
  for (const nlohmann::json& realized : realizations) {
    const std::string name = realized["realize"];
    EXPECT_LE(realized["flipped"].get<int64_t>(), realized["allowed"].get<int64_t>()) << name;
    if (name != "f64") {
      EXPECT_GT(realized["flipped"].get<int64_t>(), 0) << name;
    }
  }
  // One realization alone measures what it measured among the three.
  const testing::CommandResult alone =
      run_command(presk() + " margins " + program + " --entry logits --dim N=5 --data " + data +
                      " --delta 0.1 --realize bf16 --json --quiet",
                  false);
  ASSERT_EQ(alone.status, 0) << alone.output;
  EXPECT_EQ(nlohmann::json::parse(alone.output)["realizations"][0], realizations[2]);
}

TEST(MarginsCommand, BadInputIsCoded) {
  const Files files;
  const std::pair<std::string, std::string> cases[] = {
      {"--delta 0", "E1151"},      {"--delta 1.5", "E1151"},  {"--delta 0.1 --delta -1", "E1151"},
      {"--confidence 1", "E1152"}, {"--confidence 0", "E1152"}, {"--delta 1e-3", "E1153"},
      {"--windows 2 --delta 0.1", "E1153"}};
  for (const auto& [args, code] : cases) {
    const testing::CommandResult result = files.margins(args, true);
    EXPECT_EQ(result.status, 1) << args << ": " << result.output;
    EXPECT_NE(result.output.find(code), std::string::npos) << args << ": " << result.output;
  }
  const testing::CommandResult scalar =
      run_command(presk() + " margins " + files.program + " --entry total --dim N=5 --data " + files.data + " --quiet");
  EXPECT_EQ(scalar.status, 1) << scalar.output;
  EXPECT_NE(scalar.output.find("E1150"), std::string::npos) << scalar.output;
}

TEST(MarginsCommand, TheSolveLineTargetsEpsilonStar) {
  const Files files;
  const std::string envelope = files.folder.file("logits-envelope.json");
  const testing::CommandResult calibrated =
      run_command(presk() + " calibrate --precision " + files.program + " --entry logits --dim N=5 --data " + files.data +
                  " --samples 4 --bits 128 --quiet --out " + envelope);
  ASSERT_EQ(calibrated.status, 0) << calibrated.output;
  const testing::CommandResult result =
      files.margins("--offset 4 --delta 0.1 --json --precision " + envelope);
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json star = nlohmann::json::parse(result.output)["epsilon_star"][0];
  const std::string line = star["solve"];
  ASSERT_EQ(line.rfind("presk solve ", 0), 0u) << line;
  // The budget printed is ε* to three digits, never above it; the solve runs and is inside it.
  const double budget = std::stod(line.substr(line.find("--budget-abs ") + 13));
  EXPECT_LE(budget, star["epsilon"].get<double>());
  EXPECT_GT(budget, 0.99 * star["epsilon"].get<double>());
  const testing::CommandResult solved =
      run_command("cd " + files.folder.path() + " && " + presk() + line.substr(5) + " --quiet --json", false);
  ASSERT_EQ(solved.status, 0) << line << ": " << solved.output;
  const nlohmann::json record = nlohmann::json::parse(solved.output);
  EXPECT_EQ(record["entry"], "logits");
  EXPECT_EQ(record["budget"]["absolute"].get<double>(), budget);
  EXPECT_TRUE(record["inside"]);
  // An envelope of another entry is refused: its solve would not budget the logits.
  const std::string other = files.folder.file("total-envelope.json");
  ASSERT_EQ(run_command(presk() + " calibrate --precision " + files.program + " --entry total --dim N=5 --data " +
                        files.data + " --samples 2 --bits 128 --quiet --out " + other)
                .status,
            0);
  const testing::CommandResult refused = files.margins("--delta 0.1 --precision " + other, true);
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_NE(refused.output.find("E1155"), std::string::npos) << refused.output;
}

// A table of logits read by token: row t has its top at class t, with margin (t + 1)/8.
constexpr const char* kTable =
    "const V = 4\n"
    "dim T\n"
    "module Table {\n"
    "  param rows : R[V, V] = zeros\n"
    "  fn apply(tokens : Z[T]) -> R[T, V] = embed(rows, tokens)\n"
    "}\n"
    "entry logits(p : Table, tokens : Z[T]) -> R[T, V] = p.apply(tokens)\n"
    "entry loss(p : Table, tokens : Z[T + 1]) -> R = cross_entropy(p.apply(tokens[0 : T]), tokens[1 : T + 1])\n";

TEST(MarginsCommand, ATokenWindowFileFeedsALogitsEntry) {
  testing_support::TempFolder folder;
  const std::string program = folder.file("table.psk"), weights = folder.file("rows.safetensors"),
                    data = folder.file("windows.safetensors");
  std::ofstream(program) << kTable;
  Tensor rows(ElementType::f64, {4, 4});
  for (int t = 0; t < 4; ++t) rows.set(static_cast<uint64_t>(5 * t), (t + 1) / 8.0);
  write_safetensors(weights, {{"rows", rows}});
  // 30 windows of T + 1 = 5 tokens: 0, 1, 2, 0, then 3, which only the loss reads.
  Tensor tokens(ElementType::i32, {30, 5});
  for (uint64_t i = 0; i < 150; ++i) tokens.set_integer(i, std::vector<int64_t>{0, 1, 2, 0, 3}[i % 5]);
  write_safetensors(data, {{"tokens", tokens}});
  const std::string files = program + " --dim T=4 --weights " + weights + " --data " + data;
  const testing::CommandResult result =
      run_command(presk() + " margins " + files + " --entry logits --delta 0.1 --json --quiet", false);
  ASSERT_EQ(result.status, 0) << result.output;
  const nlohmann::json report = nlohmann::json::parse(result.output);
  EXPECT_EQ(report["positions"], 120);
  EXPECT_EQ(report["quantiles"][0]["margin"].get<double>(), 1 / 8.0);
  EXPECT_EQ(report["quantiles"].back()["margin"].get<double>(), 3 / 8.0);  // token 3 is never read
  // 60 of the 120 positions have margin 1/8 (token 0): ε* = 1/16, no close call.
  EXPECT_EQ(report["epsilon_star"][0]["epsilon"].get<double>(), 1 / 16.0);
  EXPECT_EQ(report["epsilon_star"][0]["close_calls"], 0);
  for (const char* entry : {"logits", "loss"}) {
    const testing::CommandResult run =
        run_command(presk() + " run " + files + " --entry " + entry + " --exact --offset 3 --json", false);
    EXPECT_EQ(run.status, 0) << entry << ": " << run.output;
  }
}

}  // namespace
}  // namespace presk
