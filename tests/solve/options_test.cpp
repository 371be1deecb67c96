// What the solve's options promise, each checked against the record (issue 31, item 18):
// --estimate rss is the root-sum-square of the record's terms aimed at budget/k for any
// --margin k, --estimate sum their sum; an integer rung's term is s·max|ŵ − w| at least; and
// the option errors E1113.
#include "solve/solve_fixture.h"

#include <cmath>

namespace presk::solve_testing {
namespace {

double sum_of(const nlohmann::json& record, bool squares) {
  double total = 0;
  for (const auto& value : record["values"]) total += squares ? std::pow(number(value["term"]), 2) : number(value["term"]);
  return squares ? std::sqrt(total) : total;
}

TEST(SolveOptions, EstimateFormsAndTheMargin) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const Solved sum = solve(mlp, envelope, "--budget 1e-3", folder.file("sum.json"));
  ASSERT_EQ(sum.status, 0) << sum.output;
  EXPECT_NEAR(number(sum.report["estimate"]), sum_of(sum.report, false), 1e-12 * number(sum.report["estimate"]));
  EXPECT_EQ(number(sum.report["target"]), number(sum.report["budget"]["absolute"]));
  for (const char* margin : {"2.5", "4", "1"}) {
    const Solved rss = solve(mlp, envelope, std::string("--budget 1e-3 --estimate rss --margin ") + margin, folder.file("rss.json"));
    ASSERT_EQ(rss.status, 0) << rss.output;
    const double estimate = number(rss.report["estimate"]);
    EXPECT_NEAR(estimate, sum_of(rss.report, true), 1e-12 * estimate) << margin;
    EXPECT_LT(estimate, sum_of(rss.report, false)) << "√Σt² is below Σt where two terms are not 0";
    EXPECT_NEAR(number(rss.report["target"]), number(rss.report["budget"]["absolute"]) / std::stod(margin),
                1e-15 * number(rss.report["target"]))
        << margin;
    EXPECT_EQ(number(rss.report["options"]["margin"]), std::stod(margin));
  }
}

// A parameter at an integer rung adds s·max|ŵ − w| (or its narrowest reader's rounding, where
// larger): the record's term is at least its sensitivity times the move it records.
TEST(SolveOptions, AnIntegerRungsTermIsTheSensitivityTimesTheMove) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  const Solved solved = solve(mlp, envelope, "--budget 1e-2 --menu f64,f32,bf16,int8,int4", folder.file("q.json"));
  ASSERT_EQ(solved.status, 0) << solved.output;
  int integers = 0, exact = 0;
  for (const auto& value : solved.report["values"]) {
    const std::string type = value["final"];
    if (type.rfind("int", 0) != 0) continue;
    ++integers;
    const double product = number(value["sensitivity"]) * number(value["move"]);
    EXPECT_GT(number(value["move"]), 0) << value.dump();
    EXPECT_GE(number(value["term"]), product * (1 - 1e-12)) << value.dump();
    exact += std::fabs(number(value["term"]) - product) <= 1e-12 * product;
  }
  ASSERT_GT(integers, 0);
  EXPECT_GT(exact, 0) << "a matrix read in f32 or wider has exactly s·max|ŵ − w|";
}

TEST(SolveOptions, MarginAndMinGainErrors) {
  testing_support::TempFolder folder;
  const std::string mlp = example("mlp.psk");
  const std::string envelope = calibrate(folder, mlp, "loss", "--dim B=4 --samples 2");
  for (const char* args : {"--margin 0", "--margin -1", "--min-gain -0.5"}) {
    const testing::CommandResult result = testing::run_command(testing::presk() + " solve " + mlp + " --precision " +
                                                               envelope + " --budget 1e-3 " + args + " --out " +
                                                               folder.file("never.json"));
    EXPECT_EQ(result.status, 1) << args << "\n" << result.output;
    EXPECT_NE(result.output.find("E1113"), std::string::npos) << args << "\n" << result.output;
    EXPECT_EQ(result.output.find("exact reference"), std::string::npos) << args;
  }
}

}  // namespace
}  // namespace presk::solve_testing
