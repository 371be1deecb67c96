// Integer weights in the solve: `--quant` (the two-pass solver, solve/quant_pass.h) and the one
// menu's group rungs (`int8/gG`, `int4/gG`). Each realization runs with the gap it printed, is
// inside its budget, and the same solve writes the same bytes.
#include "solve/solve_fixture.h"

namespace presk::solve_testing {
namespace {

// The two passes quantize the matrices of the MLP (hidden.w, out), never a vector (the biases),
// inside the budget, with the scheme asked, and write the same bytes twice.
TEST(SolveQuant, TwoPassesQuantizeMatricesInsideTheBudget) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 3");
  for (const char* scheme : {"absmax", "pow2"}) {
    const std::string args = std::string("--budget 1e-2 --quant --scheme ") + scheme;
    const Solved first = solve(mlp, envelope, args, folder.file("a.json"));
    ASSERT_EQ(first.status, 0) << first.output;
    EXPECT_TRUE(first.report["inside"]);
    EXPECT_LE(number(first.report["gap"]["in_sample"]["absolute"]), number(first.report["budget"]["absolute"]));
    EXPECT_EQ(first.report["options"]["quant"], true);
    const nlohmann::json file = nlohmann::json::parse(read_file(folder.file("a.json")));
    ASSERT_FALSE(file["quant"].empty()) << file.dump(1);
    for (const auto& [path, spec] : file["quant"].items()) {
      EXPECT_TRUE(path == "hidden.w" || path == "out") << path;
      EXPECT_EQ(spec["over"], -2);
      EXPECT_EQ(spec["scheme"], scheme);
      EXPECT_FALSE(file["params"].contains(path));
    }
    ASSERT_EQ(solve(mlp, envelope, args, folder.file("b.json")).status, 0);
    EXPECT_EQ(read_file(folder.file("a.json")), read_file(folder.file("b.json"))) << scheme;
    // It runs, natively against the exact reference, with the gap it printed.
    EXPECT_EQ(number(first.report["gap"]["in_sample"]["absolute"]),
              run_gap(mlp, "--entry loss --dim B=4 --samples 3", folder.file("a.json")))
        << scheme;
  }
  // A tight budget leaves no room: the floats' solution, with no integer.
  const Solved tight = solve(mlp, envelope, "--budget 1e-9 --quant", folder.file("t.json"));
  ASSERT_EQ(tight.status, 0) << tight.output;
  EXPECT_TRUE(nlohmann::json::parse(read_file(folder.file("t.json")))["quant"].empty());
}

TEST(SolveQuant, Refusals) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string loss = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const std::string logits = calibrate(folder, mlp, "logits", "--dim B=4 --samples 2", "logits.json");
  const std::pair<std::string, std::string> cases[] = {
      {" --precision " + loss + " --budget 1e-2 --quant --menu f64,f32,bf16,int8", "E1121"},
      {" --precision " + logits + " --budget 1e-2 --quant", "E1120"},
      {" --precision " + loss + " --budget 1e-2 --menu f64,f32,int4,int8", "E1101"},
      {" --precision " + loss + " --budget 1e-2 --menu f64,f32,int4/g0", "E1101"},
      {" --precision " + loss + " --budget 1e-2 --menu f64,f32,int3", "E1101"},
      {" --precision " + loss + " --budget 1e-2 --menu f64,f32,int8,int8", "E1101"},
  };
  const std::string out = folder.file("never.json");
  for (const auto& [args, code] : cases) {
    const testing::CommandResult result = testing::run_command(testing::presk() + " solve " + mlp + args + " --quiet --out " + out);
    EXPECT_EQ(result.status, 1) << args << "\n" << result.output;
    EXPECT_NE(result.output.find(code), std::string::npos) << args << "\n" << result.output;
    EXPECT_FALSE(std::ifstream(out).good()) << args;
  }
}

// Group rungs: offered where the group divides the scale's axis (hidden.w: In = 16 along −2;
// out: W = 32), written as `group` in `quant`, run by the executor with the gap the solve printed;
// explain says what the scales are.
TEST(SolveMenu, GroupRungs) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 3");
  const std::string out = folder.file("g.json");
  const Solved solved = solve(mlp, envelope, "--budget 1e-1 --menu f64,f32,bf16,int8/g8,int4/g8,int4/g5 --narrow measured", out);
  ASSERT_EQ(solved.status, 0) << solved.output;
  const nlohmann::json file = nlohmann::json::parse(read_file(out));
  bool grouped = false;
  for (const auto& [path, spec] : file["quant"].items()) {
    if (!spec.contains("group")) continue;
    grouped = true;
    EXPECT_EQ(spec["group"], 8) << path;  // 5 divides neither 16 nor 32: never offered
  }
  EXPECT_TRUE(grouped) << file.dump(1);
  int int4_g8 = 0;
  for (const auto& value : solved.report["values"]) {
    if (value["final"] != "int4/g8") continue;
    ++int4_g8;
    const double bytes = value["key"] == "out" ? 32 * 10 / 2 + 4 * 32 * 10 / 8 : 16 * 32 / 2 + 4 * 16 * 32 / 8;
    EXPECT_EQ(number(value["bytes"]), bytes) << value["key"];
  }
  EXPECT_GT(int4_g8, 0) << "no value at int4/g8: the bytes above were never checked\n" << solved.output;
  EXPECT_EQ(number(solved.report["gap"]["in_sample"]["absolute"]), run_gap(mlp, "--entry loss --dim B=4 --samples 3", out));
  const testing::CommandResult explained = testing::run_command(testing::presk() + " explain " + out, false);
  EXPECT_NE(explained.output.find("consecutive elements along axis -2"), std::string::npos) << explained.output;
}

}  // namespace
}  // namespace presk::solve_testing
