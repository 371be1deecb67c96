// Timing in alternating rounds, the protocol of every time presk reports (bench --vs,
// calibrate --step): each round runs every job in turn — the first of the round rotating — `runs`
// times, and keeps the median of those runs; a job's time is the median of its round medians,
// with their least and greatest as the spread.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace presk {

struct RoundTimes {
  std::vector<double> rounds;  // seconds: the median of each round's runs
  double median = 0, least = 0, greatest = 0;
};

double median_of(std::vector<double> values);

// `run(job)` runs job 0 … count − 1 once; `after_round(r)` (may be empty) is called after round r.
std::vector<RoundTimes> time_in_alternation(size_t count, int rounds, int runs,
                                            const std::function<void(size_t)>& run,
                                            const std::function<void(int)>& after_round = {});

}  // namespace presk
