// Item 4 of issue 19: Z → R rounds once into the site's type (docs/semantics.md), never
// int64 → double → float → bf16, in both the scalar and the SIMD paths.
#include "exactness_util.h"

namespace presk::exactness {
namespace {

// 16842753 = 2^24 + 2^16 + 1 is just above the bf16 tie 2^24 + 2^16: once, it rounds up to
// 2^24 + 2^17 = 16908288; through f32 (a tie there, to even: 2^24 + 2^16) it went to 2^24.
// 9007199791611905 = 2^53 + 2^29 + 1 is just above the f32 tie 2^53 + 2^29: once, it rounds
// to 2^53 + 2^30; through f64 (a tie, to even: 2^53 + 2^29) it went to 2^53.
const char* kProgram = R"(
dim N
entry to_bf16(t : Z[N]) -> R[N] = (t * 0 + 16842753) * 1.0
entry to_f32(t : Z[N]) -> R[N] = (t * 0 + 9007199791611905) * 1.0
entry negative(t : Z[N]) -> R[N] = (t * 0 - 16842753) * 1.0
)";

TEST(IntegerToReal, RoundsOnceIntoBf16) {
  Program program(kProgram);
  for (const char* path : {"", " --scalar"}) {
    SCOPED_TRACE(path);
    const std::string run = std::string("run --dim N=20 --token-range 10 --realize bf16") + path;
    EXPECT_EQ(json_values(program, run + " --entry to_bf16"),
              std::vector<std::string>(20, "16908288"));
    EXPECT_EQ(json_values(program, run + " --entry negative"),
              std::vector<std::string>(20, "-16908288"));
  }
}

TEST(IntegerToReal, RoundsOnceIntoF32BeyondTwoToThe53) {
  Program program(kProgram);
  for (const char* path : {"", " --scalar"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(
        json_values(
            program,
            std::string("run --dim N=20 --token-range 10 --realize f32 --entry to_f32") + path),
        std::vector<std::string>(20, "9007200328482816"));
  }
}

// f64 sites round once too (the hardware conversion): 2^53 + 2^29 + 1, a tie, to even.
TEST(IntegerToReal, F64RoundsOnce) {
  Program program(kProgram);
  EXPECT_EQ(json_values(program, "run --dim N=2 --token-range 10 --realize f64 --entry to_f32"),
            std::vector<std::string>(2, "9007199791611904"));
}

}  // namespace
}  // namespace presk::exactness
