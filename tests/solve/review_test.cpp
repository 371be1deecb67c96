// The review's fixes of the solver (issue 31, "Wrong results"), each checked end to end on
// examples/mlp.psk: the exhaustive optimum's moves carry their terms and explain says why a value
// stays at f64; --quant is outside the rules and prints each estimate in its own unit; the rules
// line prices the menu's narrowest float rung; refusals come before the exact reference runs.
#include "solve/solve_fixture.h"

#include <regex>

namespace presk::solve_testing {
namespace {

bool integer_rung(const std::string& type) { return type.rfind("int", 0) == 0; }

// --exhaustive records its optimum as steps from f64, each with the term it adds on that path:
// the terms of the narrowings are not all 0, and they add up to the estimate they lead to.
// explain never says an offered f64 value is "at the menu's narrowest type".
TEST(SolveReview, ExhaustiveMovesCarryTheirTerms) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const std::string out = folder.file("best.json");
  const Solved best = solve(mlp, envelope, "--budget 1e-7 --exhaustive", out);
  ASSERT_EQ(best.status, 0) << best.output;
  double largest = 0, last = -1;
  int narrowed = 0;
  for (const auto& move : best.report["moves"]) {
    if (move["kind"] != "narrow") continue;
    ++narrowed;
    const double term = number(move["term"]), estimate = number(move["estimate"]);
    EXPECT_GE(term, 0);
    if (last >= 0) {
      EXPECT_NEAR(estimate, last + term, 1e-12 * estimate);
    }
    EXPECT_LE(estimate, number(best.report["target"]) * (1 + 1e-12));
    largest = std::max(largest, term);
    last = estimate;
  }
  ASSERT_GT(narrowed, 0);
  EXPECT_GT(largest, 0) << "the optimum's moves are recorded without terms";
  const testing::CommandResult explained = testing::run_command(testing::presk() + " explain " + out + " --json", false);
  ASSERT_EQ(explained.status, 0) << explained.output;
  int kept = 0;
  for (const auto& e : nlohmann::json::parse(explained.output)) {
    for (const auto& reason : e["reasons"]) {
      const std::string text = reason;
      EXPECT_EQ(text.find("menu's narrowest type"), std::string::npos) << e.dump();
      kept += text.find("the exhaustive optimum") != std::string::npos;
    }
  }
  EXPECT_GT(kept, 0) << "at 1e-7 the optimum leaves some offered value at f64, and says so";
}

// --quant offers every matrix its integer rungs, whatever rule 2 says: with θ = 0.9 nothing is
// offered to the float solve, and the pass still quantizes the MLP's two matrices.
TEST(SolveReview, QuantIsOutsideTheRules) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 3");
  const std::string out = folder.file("q.json");
  const Solved solved = solve(mlp, envelope, "--budget 1e-2 --quant --min-gain 0.9", out);
  ASSERT_EQ(solved.status, 0) << solved.output;
  for (const auto& value : solved.report["values"]) EXPECT_NE(value["offered"], "offered") << value.dump();
  const nlohmann::json file = nlohmann::json::parse(read_file(out));
  EXPECT_TRUE(file["quant"].contains("hidden.w")) << file["quant"].dump();
  EXPECT_TRUE(file["quant"].contains("out")) << file["quant"].dump();
  EXPECT_LE(number(solved.report["gap"]["in_sample"]["absolute"]), number(solved.report["budget"]["absolute"]));
  const testing::CommandResult explained = testing::run_command(testing::presk() + " explain " + out + " --value out", false);
  EXPECT_NE(explained.output.find("whatever rule 2"), std::string::npos) << explained.output;
}

// After --quant the record's estimate is the floats' (the sum of the terms of the values not in
// integers), and the integers' √Σ(g·δ)² is apart: the two units are not added.
TEST(SolveReview, QuantEstimatesInTheirOwnUnits) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 3");
  const Solved solved = solve(mlp, envelope, "--budget 1e-2 --quant", folder.file("q.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  double floats = 0, integers = 0;
  for (const auto& value : solved.report["values"]) {
    (integer_rung(value["final"]) ? integers : floats) += number(value["term"]);
  }
  ASSERT_GT(integers, 0) << "the test needs a matrix in integers with a term";
  EXPECT_NEAR(number(solved.report["estimate"]), floats, 1e-12 * floats + 1e-300);
  ASSERT_TRUE(solved.report.contains("quant_estimate"));
}

// The rules line forgoes the saving at the menu's narrowest float rung, never an integer one:
// with θ = 0.9 every value is left out by a rule, and each forgoes its f64 → bf16 bytes.
TEST(SolveReview, RulesForgoTheNarrowestFloatSaving) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const std::string args = " --precision " + envelope + " --budget 1e-2 --min-gain 0.9 --menu f64,f32,bf16,int8,int4 --quiet --out ";
  const testing::CommandResult table =
      testing::run_command(testing::presk() + " solve " + mlp + args + folder.file("t.json"), false);
  ASSERT_EQ(table.status, 0) << table.output;
  const Solved solved = solve(mlp, envelope, "--budget 1e-2 --min-gain 0.9 --menu f64,f32,bf16,int8,int4", folder.file("j.json"));
  double forgone = 0;
  for (const auto& value : solved.report["values"]) {
    if (value["offered"] == "rule 1" || value["offered"] == "rule 2") forgone += 6 * number(value["elements"]);
  }
  std::smatch match;
  ASSERT_TRUE(std::regex_search(table.output, match, std::regex("forgo at most ([0-9.e+-]+) B, their bf16 saving")))
      << table.output;
  EXPECT_NEAR(std::stod(match[1]), forgone, 5e-3 * forgone);
}

// Refusals before any work: the exact reference never starts (its progress line is absent).
TEST(SolveReview, RefusalsComeBeforeTheExactReference) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string loss = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const std::string logits = calibrate(folder, mlp, "logits", "--dim B=4 --samples 2", "logits.json");
  const std::string gpt = example("gpt_tiny.psk");
  const std::string gpt_logits = calibrate(folder, gpt, "logits", "--dim T=4 --samples 1", "gpt.json");
  const std::pair<std::string, std::string> cases[] = {
      {mlp + " --precision " + logits + " --budget 1e-2 --quant", "E1120"},
      {gpt + " --precision " + gpt_logits + " --budget-abs 1e-2 --exhaustive --min-gain 0", "E1106"},
      {mlp + " --precision " + loss + " --budget 1e-2 --narrow heldout", "E1122"},  // synthesized: nothing held out
  };
  const std::string out = folder.file("never.json");
  for (const auto& [args, code] : cases) {
    const testing::CommandResult result = testing::run_command(testing::presk() + " solve " + args + " --out " + out);
    EXPECT_EQ(result.status, 1) << args << "\n" << result.output;
    EXPECT_NE(result.output.find(code), std::string::npos) << args << "\n" << result.output;
    EXPECT_EQ(result.output.find("exact reference"), std::string::npos) << args << "\n" << result.output;
    EXPECT_FALSE(std::ifstream(out).good()) << args;
  }
}

// Nothing ranked: an entry whose result is not real has no vjp (every sensitivity unknown), and
// a zero-initialised head leaves most sensitivities 0; the solve says why, in the record and the
// report, and still writes its realization.
TEST(SolveReview, NothingRankedIsSaid) {
  testing_support::TempFolder folder;
  const std::string program = folder.file("positive.psk");
  std::ofstream(program) << "const In = 4\ndim B\nmodule M {\n  param w : R[In, In] = normal(0.5)\n}\n"
                            "entry positive(p : M, x : R[B, In]) -> B[B, In] = (x · p.w) > 0\n";
  const std::string envelope = calibrate(folder, program, "positive", "--dim B=4 --samples 2");
  const Solved integer = solve(program, envelope, "--budget-abs 1e-2", folder.file("i.json"));
  ASSERT_EQ(integer.status, 0) << integer.output;
  ASSERT_EQ(integer.report["warnings"].size(), 1u) << integer.report.dump();
  EXPECT_NE(integer.report["warnings"][0].get<std::string>().find("no vjp"), std::string::npos);
  const std::string gpt = example("gpt_tiny.psk");  // its head is zeros
  const std::string logits = calibrate(folder, gpt, "logits", "--dim T=4 --samples 1", "gpt.json");
  const testing::CommandResult table = testing::run_command(
      testing::presk() + " solve " + gpt + " --precision " + logits + " --budget-abs 1e-2 --quiet --out " + folder.file("z.json"));
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("have sensitivity 0"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("warning     "), std::string::npos) << table.output;  // in the report, not only on stderr
  // A trained-looking MLP ranks: no warning.
  const std::string mlp = example("mlp.psk");
  const Solved ranked = solve(mlp, calibrate(folder, mlp, "loss", "--dim B=4 --samples 2", "mlp.json"), "--budget 1e-3",
                              folder.file("m.json"));
  ASSERT_EQ(ranked.status, 0) << ranked.output;
  EXPECT_FALSE(ranked.report.contains("warnings")) << ranked.report["warnings"].dump();
}

}  // namespace
}  // namespace presk::solve_testing
