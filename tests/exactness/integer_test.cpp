// Item 3 of issue 19: Z arithmetic is exact or a coded error. An overflow at run time is
// E0550 in the reference and E0670 natively (it wrapped in the reference and differed from
// native); a Z literal beyond 64 bits is E0343 at compile time (it was a `stoll` internal
// error natively and saturated silently in the reference).
#include "exactness_util.h"

namespace presk::exactness {
namespace {

// t is synthesized in [0, 10) (--token-range 10): t = 0 never occurs for seed 0, N = 3.
const char* kProgram = R"(
dim N
entry add(t : Z[N]) -> Z[N] = t + 9223372036854775807
entry sub(t : Z[N]) -> Z[N] = 0 - t - 9223372036854775807 - 9223372036854775807
entry mul(t : Z[N]) -> Z[N] = (t + 1) * 4611686018427387904
entry neg(t : Z[N]) -> Z[N] = -(t * 0 - 9223372036854775807 - 1)
entry partial(t : Z[N]) -> Z = sum(t * 0 + 4611686018427387904)
entry fits(t : Z[N]) -> Z[N] = t * 0 + 9007199254740993
entry total(t : Z[N]) -> Z = sum(t * 0 + 3074457345618258602)
)";

TEST(IntegerOverflow, IsACodedErrorInBothExecutors) {
  Program program(kProgram);
  for (const char* entry : {"add", "sub", "mul", "neg", "partial"}) {
    SCOPED_TRACE(entry);
    const std::string run = std::string("run --entry ") + entry + " --dim N=3 --token-range 10 ";
    expect_user_error(program.run(run + "--exact"), "E0550");
    expect_user_error(program.run(run + "--realize f64"), "E0670");
    expect_user_error(program.run(run + "--realize bf16 --scalar"), "E0670");
  }
}

// Values that fit stay exact, beyond 2^53 too, and both executors agree.
TEST(IntegerOverflow, ValuesWithinRangeAreExact) {
  Program program(kProgram);
  const std::string run = "run --dim N=3 --token-range 10 ";
  EXPECT_EQ(json_values(program, run + "--entry fits --exact"),
            (std::vector<std::string>{"9007199254740993", "9007199254740993", "9007199254740993"}));
  EXPECT_EQ(json_values(program, run + "--entry fits --realize f32"),
            (std::vector<std::string>{"9007199254740993", "9007199254740993", "9007199254740993"}));
  EXPECT_EQ(json_values(program, run + "--entry total --exact"),
            std::vector<std::string>{"9223372036854775806"});
  EXPECT_EQ(json_values(program, run + "--entry total --realize f64"),
            std::vector<std::string>{"9223372036854775806"});
  Outcome both = program.run(run + "--entry fits --exact --realize f64");
  expect_success(both);
  EXPECT_NE(both.output.find("gap   0 absolute"), std::string::npos) << both.output;
}

// The compile-time half: a Z literal that does not fit in 64 bits.
TEST(IntegerOverflow, LiteralsBeyond64BitsAreRefusedAtCompileTime) {
  Program program("dim N\nentry f(t : Z[N]) -> Z[N] = t + 99999999999999999999\n");
  for (const char* mode : {"--exact", "--realize f64"}) {
    SCOPED_TRACE(mode);
    expect_user_error(program.run(std::string("run --entry f --dim N=3 --token-range 10 ") + mode),
                      "E0343");
  }
  expect_user_error(program.run("dump --stage ir --dim N=3"), "E0343");
  // In printed IR the verifier refuses it (the executors' parse of it can then not fail).
  Program printed(R"(entry f ($0 t : Z[2]) -> Z[2] {
  %0 = literal "99999999999999999999" : Z
  %1 = add($0, %0) : Z[2]
  return %1
}
)",
                  "program.pir");
  expect_user_error(printed.run("dump --stage ir"), "E0457");
}

}  // namespace
}  // namespace presk::exactness
