// Item 2 of issue 19: a comparison with a NaN operand follows IEEE 754 in the reference as in
// the native executor (false, except ≠), in run, run --grad and calibrate; it used to be an
// internal error of the reference.
#include "exactness_util.h"

namespace presk::exactness {
namespace {

// x < 10 for the synthesized inputs: log(x − 10) is NaN, the comparison false, `where` picks
// its third operand; NaN ≠ NaN holds.
const char* kProgram = R"(
dim N
entry pick(x : R[N]) -> R[N] = where(log(x - 10) > 0, x, 2 + 0 * x)
entry differs(x : R[N]) -> R[N] = where(log(x - 10) != log(x - 10), 1 + 0 * x, 0 * x)
entry loss(x : R[N]) -> R = sum(relu(log(x - 10)) + max(log(x - 10), x) + abs(log(x - 10)) * 0)
entry clean(x : R[N]) -> R = sum(relu(log(x - 10)) + min(x, log(x - 10)) + max(log(x - 10), x))
)";

std::vector<double> numbers(const std::vector<std::string>& values) {
  std::vector<double> out;
  for (const std::string& value : values) out.push_back(std::stod(value));
  return out;
}

TEST(NanComparisons, TheReferenceFollowsIeee) {
  Program program(kProgram);
  expect_success(program.run("run --entry pick --dim N=3 --exact"));
  EXPECT_EQ(numbers(json_values(program, "run --entry pick --dim N=3 --exact")),
            (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(numbers(json_values(program, "run --entry differs --dim N=3 --exact")),
            (std::vector<double>{1, 1, 1}));
}

TEST(NanComparisons, BothExecutorsAgree) {
  Program program(kProgram);
  for (const char* type : {"f64", "f32", "bf16"}) {
    SCOPED_TRACE(type);
    const std::string arguments =
        std::string("run --entry pick --dim N=3 --exact --realize ") + type;
    Outcome outcome = program.run(arguments);
    expect_success(outcome);
    EXPECT_NE(outcome.output.find("gap   0 absolute"), std::string::npos) << outcome.output;
    EXPECT_EQ(json_values(program, std::string("run --entry differs --dim N=3 --realize ") + type),
              (std::vector<std::string>{"1", "1", "1"}));
  }
}

TEST(NanComparisons, BallArithmeticToo) {
  Program program(kProgram);
  expect_success(program.run("run --entry pick --dim N=3 --exact --arith ball"));
}

// The adjoints of relu, max and abs are built from comparisons; reached by a NaN they run.
TEST(NanComparisons, GradientsReachedByANan) {
  Program program(kProgram);
  expect_success(program.run("run --entry loss --dim N=3 --exact --realize f64 --grad"));
}

// max and min are maxNum/minNum: max(NaN, x) = x, so its derivative in x is 1 (it was 0:
// neither operand won). clean(x) = Σ 0 + x + x: every cotangent is 2, in both executors.
TEST(NanComparisons, MaxAndMinHandTheCotangentToTheOperandBesideANan) {
  Program program(kProgram);
  for (const char* type : {"f64", "bf16"}) {
    SCOPED_TRACE(type);
    testing::CommandResult result = testing::run_command(
        testing::presk() + " run --entry clean --dim N=3 --exact --grad --json --realize " + type +
            " '" + program.path() + "'",
        false);
    ASSERT_EQ(result.status, 0) << result.output;
    nlohmann::json cotangent = nlohmann::json::parse(result.output)["cotangents"][0];
    EXPECT_EQ(cotangent["values"], nlohmann::json::array({"2", "2", "2"})) << result.output;
    EXPECT_EQ(cotangent["gap_absolute"], 0.0) << result.output;
  }
}

TEST(NanComparisons, Calibrate) {
  Program program(kProgram);
  for (const char* entry : {"pick", "loss"}) {
    SCOPED_TRACE(entry);
    expect_success(program.run(std::string("calibrate --precision --entry ") + entry +
                               " --dim N=3 --samples 2 --bits 64 --quiet --out '" +
                               program.file(std::string(entry) + ".json") + "'"));
  }
}

}  // namespace
}  // namespace presk::exactness
