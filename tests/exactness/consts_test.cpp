// Item 1 of issue 19: a real const that is not a bare literal is folded exactly (a rational),
// so the reference computes with the real the source denotes and each native type gets its
// correctly rounded value; never a binary64 approximation re-emitted as 17 digits.
#include "exactness_util.h"

namespace presk::exactness {
namespace {

// −1e-5 and 0.5/3 as consts equal the same reals written in the expression (each rounded
// once at 256 bits): the differences are exactly 0. Folded in binary64 they were −6.7e-18.
TEST(ExactConsts, TheReferenceComputesWithTheRealTheSourceDenotes) {
  Program program(R"(
const E = -1e-5
const S = 0.5 / 3
entry f() -> R = (E + 0.00001) + (S - 1.0 / 6)
)");
  expect_success(program.run("run --entry f --exact"));
  EXPECT_EQ(json_values(program, "run --entry f --exact"), std::vector<std::string>{"0"});
}

// 16777217 + 2^-30 is 16777217 in binary64: folded there, the reference lost the 2^-30.
TEST(ExactConsts, NoPartBelowBinary64IsLost) {
  Program program(R"(
const Q = 16777217 + 1.0 / 1073741824
entry f() -> R = Q - 16777217
)");
  EXPECT_EQ(
      json_values(program, "run --entry f --exact"),
      std::vector<std::string>{
          "9.313225746154785156250000000000000000000000000000000000000000000000000000000000e-10"});
}

// One rounding into f32: 16777217 + 2^-30 lies above the tie between 16777216 and 16777218,
// so it is 16777218; through binary64 (16777217, a tie) it became 16777216.
TEST(ExactConsts, TheNativeF32ValueIsRoundedOnce) {
  Program program(R"(
const Q = 16777217 + 1.0 / 1073741824
entry f() -> R = Q
)");
  EXPECT_EQ(json_values(program, "run --entry f --realize f32"),
            std::vector<std::string>{"16777218"});
  EXPECT_EQ(json_values(program, "run --entry f --realize f64"),
            std::vector<std::string>{"16777217"});
}

// One rounding into bf16: 1 + 2^-8 + 2^-60 lies above the tie between 1 and 1 + 2^-7; in
// binary64 it is 1 + 2^-8, the tie, which went to 1.
TEST(ExactConsts, TheNativeBf16ValueIsRoundedOnce) {
  Program program(R"(
const B = 1 + 1.0 / 256 + 1.0 / 1152921504606846976
entry f() -> R = B
)");
  EXPECT_EQ(json_values(program, "run --entry f --realize bf16"),
            std::vector<std::string>{"1.0078125"});
}

// The folded value reaches the IR exactly: a decimal, or N/D.
TEST(ExactConsts, TheIrHoldsTheExactValue) {
  Program program(R"(
const E = -1e-5
const S = 0.5 / 3
entry f(x : R) -> R = x * S + E
)");
  Outcome outcome = program.run("dump --stage ir");
  expect_success(outcome);
  EXPECT_NE(outcome.output.find("literal \"1/6\""), std::string::npos) << outcome.output;
  EXPECT_NE(outcome.output.find("literal \"-0.00001\""), std::string::npos) << outcome.output;
}

// Hostile consts: an exact value that doubles in size at every const, an exponent with no
// exact form of bounded size, a division by zero: coded errors, never a hang or a crash.
TEST(ExactConsts, UnboundedExactValuesAreCodedErrors) {
  std::string squares = "const A0 = 1e-300 / 3\n";
  for (int i = 1; i <= 12; ++i)
    squares += "const A" + std::to_string(i) + " = A" + std::to_string(i - 1) + " * A" +
               std::to_string(i - 1) + "\n";
  Program doubling(squares + "entry f(x : R) -> R = x * A12\n");
  expect_user_error(doubling.run("run --entry f --exact"), "E0342");
  Program exponent("const A = 1e-99999 * 2\nentry f(x : R) -> R = x * A\n");
  expect_user_error(exponent.run("run --entry f --realize f32"), "E0342");
  Program zero("const A = 1.5 / (2 - 2)\nentry f(x : R) -> R = x * A\n");
  expect_user_error(zero.run("run --entry f --exact"), "E0307");
}

}  // namespace
}  // namespace presk::exactness
