// Timing in alternating rounds (support/alternating.h): every job runs `runs` times a round, the
// first of each round rotates, a job's rounds are kept in order and its median, least and
// greatest are theirs.
#include "support/alternating.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace presk {
namespace {

TEST(Alternating, RotatesTheFirstJobAndRunsEachRunsTimesARound) {
  std::vector<size_t> order;
  std::vector<int> rounds_seen;
  const std::vector<RoundTimes> times =
      time_in_alternation(3, 4, 2, [&](size_t job) { order.push_back(job); },
                          [&](int round) { rounds_seen.push_back(round); });
  ASSERT_EQ(order.size(), 3u * 4u * 2u);
  // Round r starts with job r mod 3; each job runs twice in a row.
  const std::vector<size_t> expected = {0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1, 0, 0, 1, 1, 2, 2};
  EXPECT_EQ(order, expected);
  EXPECT_EQ(rounds_seen, (std::vector<int>{0, 1, 2, 3}));
  for (const RoundTimes& t : times) {
    EXPECT_EQ(t.rounds.size(), 4u);
    EXPECT_LE(t.least, t.median);
    EXPECT_LE(t.median, t.greatest);
  }
}

TEST(Alternating, TheSlowerJobHasTheLargerMedian) {
  const std::vector<RoundTimes> times = time_in_alternation(2, 5, 1, [](size_t job) {
    std::this_thread::sleep_for(std::chrono::milliseconds(job == 0 ? 1 : 20));
  });
  EXPECT_GT(times[1].median, times[0].median);
  EXPECT_GE(times[1].least, 0.019);
}

TEST(Alternating, MedianOf) {
  EXPECT_EQ(median_of({}), 0);
  EXPECT_EQ(median_of({3, 1, 2}), 2);
  EXPECT_EQ(median_of({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace presk
