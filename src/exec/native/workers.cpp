// The worker pool of workers.h. A call publishes a job (function, context, task count) under
// the pool's mutex and bumps the generation the idle workers watch; the caller and every
// worker that joins claim task indices with one fetch_add each until none are left. A worker
// joins only while the job is posted (under the mutex) and counts itself in `joined`; the
// caller withdraws the job when it finds no task left and waits until `joined` is back to
// zero, so no worker touches the job (on the caller's stack) after the call returns.
#include "exec/native/workers.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PRESK_PAUSE() _mm_pause()
#else
#define PRESK_PAUSE() std::this_thread::yield()
#endif

namespace presk::exec::native {
namespace {

// How long an idle worker spins before it sleeps: covers the serial stretches between one
// parallel op and the next; a process that stops running parallel ops costs its workers'
// cores this long. After kPauseSpin it yields between looks, so that on a loaded machine the
// spinning gives way to runnable threads.
constexpr auto kPauseSpin = std::chrono::microseconds(50);
constexpr auto kSpin = std::chrono::microseconds(1000);
constexpr size_t kMaxWorkers = 255;

struct Job {
  Job(TaskFn fn_, const void* context_, size_t count_, size_t max_workers_)
      : fn(fn_), context(context_), count(count_), max_workers(max_workers_) {}
  TaskFn fn;
  const void* context;
  size_t count;
  size_t max_workers;
  std::atomic<size_t> next{0};
  std::atomic<size_t> joined{0};
  std::mutex error_mutex;
  std::exception_ptr error;  // the first task's exception, rethrown by the caller
};

// Claims and runs tasks until none are left; an exception stops the claiming.
void run_claimed(Job& job) {
  for (size_t t = job.next.fetch_add(1); t < job.count; t = job.next.fetch_add(1)) {
    try {
      job.fn(job.context, t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
      job.next.store(job.count);
    }
  }
}

thread_local bool inside_task = false;

class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool;  // never destroyed: workers outlive static destruction
    return *pool;
  }

  // False when the pool is in use by another call (the caller then runs serially).
  bool run(size_t count, int threads, TaskFn fn, const void* context) {
    std::unique_lock<std::mutex> caller(caller_mutex_, std::try_to_lock);
    if (!caller.owns_lock()) return false;
    // More threads than cores would only wait for each other (a descheduled worker holding a
    // claimed task delays the whole call): at most one worker per further core.
    static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t wanted = std::min({static_cast<size_t>(threads) - 1, cores - 1, kMaxWorkers});
    if (wanted == 0) return false;
    grow(wanted);
    Job job(fn, context, count, wanted);
    {
      std::lock_guard<std::mutex> lock(job_mutex_);
      job_ = &job;
    }
    generation_.fetch_add(1);
    if (sleeping_.load() > 0) generation_.notify_all();
    inside_task = true;
    run_claimed(job);
    inside_task = false;
    {
      std::lock_guard<std::mutex> lock(job_mutex_);
      job_ = nullptr;  // no worker joins from now on
    }
    while (job.joined.load(std::memory_order_acquire) != 0) PRESK_PAUSE();
    if (job.error) std::rethrow_exception(job.error);
    return true;
  }

 private:
  void grow(size_t wanted) {
    while (workers_.size() < wanted) {
      const size_t index = workers_.size();
      workers_.emplace_back([this, index] { work(index); });
      workers_.back().detach();
    }
  }

  // Waits for a generation other than `seen`: spinning for kSpin, then asleep.
  uint32_t await_job(uint32_t seen) {
    const auto start = std::chrono::steady_clock::now();
    bool yielding = false;
    for (unsigned spins = 0;; ++spins) {
      const uint32_t now = generation_.load();
      if (now != seen) return now;
      if (yielding) {
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() - start > kSpin) break;
      } else {
        PRESK_PAUSE();
        if ((spins & 255) == 255) yielding = std::chrono::steady_clock::now() - start > kPauseSpin;
      }
    }
    sleeping_.fetch_add(1);
    generation_.wait(seen);
    sleeping_.fetch_sub(1);
    return generation_.load();
  }

  void work(size_t index) {
    inside_task = true;
    uint32_t seen = generation_.load();
    for (;;) {
      seen = await_job(seen);
      Job* job = nullptr;
      {
        std::lock_guard<std::mutex> lock(job_mutex_);
        if (job_ != nullptr && index < job_->max_workers) {
          job = job_;
          job->joined.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (job == nullptr) continue;
      run_claimed(*job);
      job->joined.fetch_sub(1, std::memory_order_release);  // the last touch of the job
    }
  }

  std::mutex caller_mutex_;  // one call at a time
  std::mutex job_mutex_;     // guards job_ and the joining
  Job* job_ = nullptr;
  std::atomic<uint32_t> generation_{0};  // 32 bits: a futex word for wait()
  std::atomic<int> sleeping_{0};
  std::vector<std::thread> workers_;
};

}  // namespace

void run_tasks(size_t count, int threads, TaskFn fn, const void* context) {
  if (threads <= 1 || count <= 1 || inside_task || !Pool::instance().run(count, threads, fn, context)) {
    for (size_t t = 0; t < count; ++t) fn(context, t);
  }
}

}  // namespace presk::exec::native
