// A solve on an envelope of real files: weights and data written here. The envelope records
// their SHA-256 and the solve refuses other bytes (E1104, E1105); the samples after the
// envelope's in the data file are held out and measured (as many as the envelope's, or
// --heldout M, or fewer where the file ends); --narrow heldout undoes on them.
#include <cstdint>

#include "solve/solve_fixture.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::solve_testing {
namespace {

// A deterministic value in [−scale, scale) from (seed, index).
double value_of(uint64_t seed, uint64_t index, double scale) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return scale * (static_cast<double>(z >> 11) / 9007199254740992.0 * 2 - 1);
}

Tensor filled(ElementType type, std::vector<int64_t> shape, uint64_t seed, double scale) {
  Tensor tensor(type, std::move(shape));
  for (uint64_t i = 0; i < static_cast<uint64_t>(tensor.element_count()); ++i) tensor.set(i, value_of(seed, i, scale));
  return tensor;
}

// mlp.psk's parameters (In = 16, W = 32, K = 10) from `seed`.
std::string write_weights(testing_support::TempFolder& folder, const std::string& name, uint64_t seed) {
  const Tensor w = filled(ElementType::f64, {16, 32}, seed, 0.3), b = filled(ElementType::f64, {32}, seed + 1, 0.1);
  const Tensor out = filled(ElementType::f64, {32, 10}, seed + 2, 0.3), bias = filled(ElementType::f64, {10}, seed + 3, 0.1);
  const std::string path = folder.file(name);
  write_safetensors(path, {{"hidden.w", w}, {"hidden.b", b}, {"out", out}, {"bias", bias}});
  return path;
}

// `samples` samples of mlp.psk's loss at B = 4: x [S, 4, 16], labels [S, 4] in [0, 10).
std::string write_data(testing_support::TempFolder& folder, const std::string& name, int64_t samples, uint64_t seed) {
  const Tensor x = filled(ElementType::f64, {samples, 4, 16}, seed, 2);
  Tensor labels(ElementType::i64, {samples, 4});
  for (uint64_t i = 0; i < static_cast<uint64_t>(labels.element_count()); ++i) {
    labels.set(i, static_cast<double>(static_cast<int64_t>((value_of(seed + 7, i, 1) + 1) * 5) % 10));
  }
  const std::string path = folder.file(name);
  write_safetensors(path, {{"x", x}, {"labels", labels}});
  return path;
}

struct Files {
  testing_support::TempFolder folder;
  std::string program = example("mlp.psk"), weights, data, envelope;
  Files() {
    weights = write_weights(folder, "weights.safetensors", 1);
    data = write_data(folder, "data.safetensors", 7, 2);
    envelope = calibrate(folder, program, "loss", "--dim B=4 --samples 3 --weights " + weights + " --data " + data);
  }
};

TEST(SolveProvenance, OtherBytesAreRefused) {
  Files files;
  const std::string other_weights = write_weights(files.folder, "other.safetensors", 9);
  const std::string other_data = write_data(files.folder, "other-data.safetensors", 7, 3);
  const std::string out = files.folder.file("never.json");
  for (const auto& [args, code] : {std::pair<std::string, std::string>{"--weights " + other_weights, "E1104"},
                                   {"--data " + other_data, "E1105"}}) {
    const testing::CommandResult result = testing::run_command(testing::presk() + " solve " + files.program +
                                                               " --precision " + files.envelope + " --budget 1e-3 " +
                                                               args + " --quiet --out " + out);
    EXPECT_EQ(result.status, 1) << result.output;
    EXPECT_NE(result.output.find(code), std::string::npos) << result.output;
    EXPECT_FALSE(std::ifstream(out).good());
  }
  // The envelope's own files, named again, are accepted.
  const Solved same = solve(files.program, files.envelope, "--budget 1e-3 --weights " + files.weights, out);
  EXPECT_EQ(same.status, 0) << same.output;
}

TEST(SolveProvenance, TheFollowingSamplesAreHeldOut) {
  Files files;
  const Solved solved = solve(files.program, files.envelope, "--budget 1e-4", files.folder.file("a.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  EXPECT_EQ(solved.report["gap"]["held_out_samples"], 3);  // as many as the envelope's
  EXPECT_GT(number(solved.report["gap"]["held_out"]["absolute"]), 0);
  const Solved two = solve(files.program, files.envelope, "--budget 1e-4 --heldout 2", files.folder.file("b.json"));
  EXPECT_EQ(two.report["gap"]["held_out_samples"], 2);
  const Solved capped = solve(files.program, files.envelope, "--budget 1e-4 --heldout 50", files.folder.file("c.json"));
  EXPECT_EQ(capped.report["gap"]["held_out_samples"], 4);  // the file holds 7: 3 in sample, 4 after
  const Solved none = solve(files.program, files.envelope, "--budget 1e-4 --heldout 0", files.folder.file("d.json"));
  EXPECT_TRUE(none.report["gap"]["held_out"].is_null());
}

TEST(SolveProvenance, NarrowingByMeasurementStaysInside) {
  Files files;
  for (const char* mode : {"measured", "heldout"}) {
    const Solved base = solve(files.program, files.envelope, "--budget 1e-4", files.folder.file("base.json"));
    const Solved narrowed =
        solve(files.program, files.envelope, std::string("--budget 1e-4 --narrow ") + mode, files.folder.file("n.json"));
    ASSERT_EQ(narrowed.status, 0) << narrowed.output;
    EXPECT_TRUE(narrowed.report["inside"]);
    // Kept steps stay inside budget/k in sample (k = 2.5): the final gap is no larger than that,
    // or it is the base's (nothing kept).
    const double gap = number(narrowed.report["gap"]["in_sample"]["absolute"]);
    const double budget = number(narrowed.report["budget"]["absolute"]);
    EXPECT_TRUE(gap <= budget / 2.5 || gap == number(base.report["gap"]["in_sample"]["absolute"])) << mode;
    EXPECT_LE(number(narrowed.report["traffic"]["realization"]), number(base.report["traffic"]["realization"])) << mode;
    bool tried = false;
    for (const auto& move : narrowed.report["moves"]) tried |= move["kind"] == "try_narrow";
    EXPECT_TRUE(tried) << mode;
  }
}

TEST(SolveProvenance, RssAimsAtTheBudgetOverTheMargin) {
  Files files;
  const Solved solved = solve(files.program, files.envelope, "--budget 1e-4 --estimate rss --margin 4",
                              files.folder.file("rss.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  EXPECT_DOUBLE_EQ(number(solved.report["target"]), number(solved.report["budget"]["absolute"]) / 4);
  EXPECT_EQ(solved.report["options"]["estimate"], "rss");
}

}  // namespace
}  // namespace presk::solve_testing
