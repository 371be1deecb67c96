// The seeded generator (support/random.h): pinned values (computed independently, see
// docs/reference.md), ranges, and the statistics of normal deviates.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/reference/parameters.h"
#include "reference/builder.h"
#include "support/random.h"

namespace presk::testing {
namespace {

TEST(ReferenceRandom, PinnedWords) {
  EXPECT_EQ(random::stream_of(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(random::stream_of("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(random::mix(0), 0ull);
  EXPECT_EQ(random::word(0, 0, 0), random::mix(random::mix(0) + 0x9E3779B97F4A7C15ull));
}

TEST(ReferenceRandom, RangesAndMoments) {
  uint64_t stream = random::stream_of("blocks.ff.up.w");
  double sum = 0, squares = 0;
  constexpr int kCount = 20000;
  for (int i = 0; i < kCount; ++i) {
    double z = random::normal(42, stream, i, 1.0);
    sum += z;
    squares += z * z;
    double u = random::uniform(42, stream, i, -0.5, 0.25);
    EXPECT_TRUE(u >= -0.5 && u < 0.25);
    int64_t t = random::token(42, stream, i, 73);
    EXPECT_TRUE(t >= 0 && t < 73);
  }
  EXPECT_NEAR(sum / kCount, 0.0, 0.03);
  EXPECT_NEAR(squares / kCount, 1.0, 0.04);
  EXPECT_EQ(random::normal(42, stream, 5, 0.02), random::normal(42, stream, 5, 0.02));
  EXPECT_NE(random::normal(42, stream, 5, 1.0), random::normal(43, stream, 5, 1.0));
}

TEST(ReferenceRandom, SynthesizedParametersFollowTheirInitializers) {
  ir::Program program;
  program.params = {make_param("g", real_type({4}), 0, {ir::Initializer::Kind::Ones, 0, 0}),
                    make_param("w", real_type({2, 3}), 0, {ir::Initializer::Kind::Normal, 0.02, 0})};
  reference::ParameterStore one = reference::synthesize_parameters(program, 9, 1);
  reference::ParameterStore two = reference::synthesize_parameters(program, 9, 2);
  EXPECT_EQ(*one.find("g"), std::vector<double>(4, 1.0));
  EXPECT_EQ(*one.find("w"), *two.find("w"));
  EXPECT_EQ((*one.find("w"))[4], random::normal(9, random::stream_of("w"), 4, 0.02));
}

}  // namespace
}  // namespace presk::testing
