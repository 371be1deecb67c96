// A solve on an envelope of real files: weights and data written here. The envelope records
// their SHA-256 and the solve refuses other bytes (E1104, E1105); the samples after the
// envelope's in the data file are held out and measured (as many as the envelope's, or
// --heldout M, or fewer where the file ends); --narrow heldout undoes on them.
#include <cstdint>
#include <vector>

#include "solve/files_fixture.h"

namespace presk::solve_testing {
namespace {

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

// --narrow heldout undoes kept steps, the last first, while the held-out gap is above budget/k:
// on these files at 1e-3 it undoes some (the narrowing overfits the 3 in-sample windows), each
// undo reverses a kept try_narrow and follows a held-out measurement above budget/k, and the
// held-out gap it ends with is within budget/k (k = --margin, 2.5).
TEST(SolveProvenance, HeldOutNarrowingUndoesUntilWithinTheMargin) {
  Files files;
  const Solved solved = solve(files.program, files.envelope, "--budget 1e-3 --narrow heldout", files.folder.file("h.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  const double threshold = number(solved.report["budget"]["absolute"]) / 2.5;
  std::vector<nlohmann::json> kept;  // the kept try_narrow moves, in order
  int undone = 0;
  double last_held_out = -1;
  for (const auto& move : solved.report["moves"]) {
    if (move["kind"] == "try_narrow" && move["inside"] == true) kept.push_back(move);
    if (move["kind"] == "measure" && move["held_out"] == true) last_held_out = number(move["gap"]);
    if (move["kind"] != "undo") continue;
    ++undone;
    EXPECT_GT(last_held_out, threshold) << move.dump();  // undone because the held-out gap was above
    ASSERT_FALSE(kept.empty()) << move.dump();
    EXPECT_EQ(move["value"], kept.back()["value"]) << move.dump();  // the last kept step first
    EXPECT_EQ(move["from"], kept.back()["to"]);
    EXPECT_EQ(move["to"], kept.back()["from"]);
    kept.pop_back();
  }
  EXPECT_GT(undone, 0) << solved.output;
  EXPECT_LE(last_held_out, threshold);
  EXPECT_LE(number(solved.report["gap"]["held_out"]["absolute"]), threshold);
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
