// Z → R in the native executor: integer_to_float rounds an int64 once (RNE) to f32's or bf16's
// precision, checked against the exact rational rounding of support/exact_real.h on random
// int64s of every width, the extremes and the ties just beside them.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "exec/native/value.h"
#include "support/exact_real.h"

namespace presk::exec::native {
namespace {

void expect_rounded_once(int64_t z) {
  const ExactReal exact(static_cast<long>(z));
  EXPECT_EQ(integer_to_float(z, 24), round_exact(exact, kBinary32)) << z;
  EXPECT_EQ(integer_to_float(z, 8), round_exact(exact, kBfloat16)) << z;
}

TEST(IntegerToFloat, RoundsOnceLikeTheExactRounding) {
  std::mt19937_64 random(53);
  for (int i = 0; i < 200000; ++i) {
    const int shift = static_cast<int>(random() % 64);
    expect_rounded_once(static_cast<int64_t>(random()) >> shift);
  }
  for (int64_t z : {int64_t{0}, int64_t{1}, int64_t{-1}, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                    int64_t{16842753}, int64_t{-16842753}, int64_t{9007199791611905}, int64_t{255},
                    int64_t{257}, int64_t{16777217}}) {
    expect_rounded_once(z);
  }
  for (int bits = 9; bits < 63; ++bits) {  // ties and their neighbours at every width
    const int64_t tie = (int64_t{1} << bits) + (int64_t{1} << (bits - 8));
    for (int64_t z : {tie - 1, tie, tie + 1, -tie, -tie - 1}) expect_rounded_once(z);
  }
}

// The two cases int64 → double → float → bf16 got wrong.
TEST(IntegerToFloat, NeverRoundsTwice) {
  EXPECT_EQ(integer_to_float(16842753, 8), 16908288.0f);                   // 2^24 + 2^16 + 1
  EXPECT_EQ(integer_to_float(9007199791611905, 24), 9007200328482816.0f);  // 2^53 + 2^29 + 1
}

}  // namespace
}  // namespace presk::exec::native
