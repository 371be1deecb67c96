// The executor's worker pool (src/exec/native/workers.h): every task runs exactly once for
// any count and thread count, nested and concurrent calls complete (serially), and a task's
// exception reaches the caller and leaves the pool usable.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exec/native/contract_driver.h"

namespace presk::exec::native {
namespace {

TEST(Workers, EveryTaskRunsOnce) {
  for (int threads : {1, 2, 3, 8}) {
    for (size_t count : {0, 1, 2, 3, 7, 64, 1000}) {
      std::vector<std::atomic<int>> runs(count);
      for_each_task(count, threads, [&](size_t t) { runs[t].fetch_add(1); });
      for (size_t t = 0; t < count; ++t) ASSERT_EQ(runs[t].load(), 1) << "task " << t << " of " << count << ", threads " << threads;
    }
  }
}

TEST(Workers, NestedCallsRunInsideTheTask) {
  std::vector<std::atomic<int>> runs(16 * 16);
  for_each_task(16, 2, [&](size_t outer) {
    for_each_task(16, 2, [&](size_t inner) { runs[outer * 16 + inner].fetch_add(1); });
  });
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(Workers, ConcurrentCallersBothFinish) {
  std::vector<std::atomic<long>> sums(4);
  std::vector<std::thread> callers;
  for (size_t c = 0; c < sums.size(); ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 200; ++round) for_each_task(50, 2, [&](size_t t) { sums[c].fetch_add(static_cast<long>(t)); });
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const std::atomic<long>& sum : sums) EXPECT_EQ(sum.load(), 200L * (49 * 50 / 2));
}

TEST(Workers, AnExceptionReachesTheCallerAndThePoolGoesOn) {
  for (int round = 0; round < 20; ++round) {
    EXPECT_THROW(for_each_task(40, 2, [&](size_t t) {
                   if (t == static_cast<size_t>(round)) throw std::runtime_error("task failed");
                 }),
                 std::runtime_error);
  }
  std::atomic<int> runs{0};
  for_each_task(40, 2, [&](size_t) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 40);
}

}  // namespace
}  // namespace presk::exec::native
