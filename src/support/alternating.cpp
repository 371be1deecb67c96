// Timing in alternating rounds (alternating.h).
#include "support/alternating.h"

#include <algorithm>
#include <chrono>

namespace presk {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<RoundTimes> time_in_alternation(size_t count, int rounds, int runs,
                                            const std::function<void(size_t)>& run,
                                            const std::function<void(int)>& after_round) {
  std::vector<RoundTimes> times(count);
  for (int round = 0; round < std::max(1, rounds); ++round) {
    for (size_t k = 0; k < count; ++k) {
      const size_t job = (k + static_cast<size_t>(round)) % count;
      std::vector<double> seconds;
      for (int r = 0; r < std::max(1, runs); ++r) {
        const auto start = std::chrono::steady_clock::now();
        run(job);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      times[job].rounds.push_back(median_of(std::move(seconds)));
    }
    if (after_round) after_round(round);
  }
  for (RoundTimes& t : times) {
    t.median = median_of(t.rounds);
    const auto [low, high] = std::minmax_element(t.rounds.begin(), t.rounds.end());
    t.least = low == t.rounds.end() ? 0 : *low;
    t.greatest = high == t.rounds.end() ? 0 : *high;
  }
  return times;
}

}  // namespace presk
