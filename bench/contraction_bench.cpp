// f32 contraction under presk's sequential order (the native kernel, bits defined by the
// scalar fma chain) against OpenBLAS sgemm, same shapes, same thread counts, same run.
// Prints GFLOP/s and the ratio presk / OpenBLAS per round (medians of 5 calls after a warm-up).
//   cmake --build build/ci --target bench_contraction && build/ci/bench/bench_contraction
//   build/ci/bench/bench_contraction --gemm [--rounds R]     (only the sgemm lines)
//   build/ci/bench/bench_contraction --memory-bound [--rows]   (only the memory-bound lines)
//   build/ci/bench/bench_contraction --causal [--rounds R]     (att @ v with causal zeros, q @ kT lower-only)
//   build/ci/bench/bench_contraction --wake [--rounds R]       (how long a sleeping worker takes to join)
// Debian's OpenBLAS misdetects this VM's CPU and runs SSE3 kernels (4-5x slower) unless
// OPENBLAS_CORETYPE names it, e.g. OPENBLAS_CORETYPE=SkylakeX where the CPU has AVX-512.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <random>
#include <vector>

#include "exec/native/kernels.h"
#include "exec/native/workers.h"

namespace {

extern "C" void openblas_set_num_threads(int);

template <typename F>
double median_seconds(const F& f, int runs) {
  f();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Both sides' worker threads spin for a while after a parallel call (OpenBLAS's for about
// 2^28 cycles, presk's for 1 ms): on a 2-core machine they would steal the other side's cores.
// Each side is timed after a pause in which the other side's workers go to sleep.
void let_workers_sleep() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// B: an f32 row-major [K, n] in `b`.
presk::exec::native::BSource f32_rows(const std::vector<float>& b, size_t n) {
  presk::exec::native::BSource source;
  source.kind = presk::exec::native::BSource::Kind::f32;
  source.data = b.data();
  source.ldb = n;
  return source;
}

// Same-run rounds: in each, presk then OpenBLAS (medians of 5 calls each, after a pause);
// prints every round's GFLOP/s and ratio, then the median ratio of the rounds.
void run(size_t m, size_t n, size_t k, int threads, int rounds) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t lda = k;
  std::vector<float> a(m * lda), b(k * n), c(m * n), c_blas(m * n);
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  using namespace presk::exec::native;
  const BSource source = f32_rows(b, n);
  const ContractionShape shape{m, n, 0, 1, k, lda};
  const double flops = 2.0 * static_cast<double>(m) * n * k;
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    let_workers_sleep();
    const double presk_s = median_seconds([&] { contract_f32(shape, a.data(), source, c.data(), threads, false); }, 5);
    let_workers_sleep();
    openblas_set_num_threads(threads);
    const double blas_s = median_seconds([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), 1.0f, a.data(), static_cast<int>(lda), b.data(), static_cast<int>(n), 0.0f,
                  c_blas.data(), static_cast<int>(n));
    }, 5);
    ratios.push_back(blas_s / presk_s);
    std::printf("%5zu x %5zu x %5zu  threads %d  round %d  presk %6.1f GFLOP/s  OpenBLAS %6.1f GFLOP/s  ratio %.2f\n",
                m, n, k, threads, round + 1, flops / presk_s * 1e-9, flops / blas_s * 1e-9, blas_s / presk_s);
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%5zu x %5zu x %5zu  threads %d  median ratio of %d rounds %.2f (range %.2f-%.2f)\n", m, n, k, threads,
              rounds, ratios[ratios.size() / 2], ratios.front(), ratios.back());
  std::fflush(stdout);
}

// Causal attention's att @ v (T = 256 rows of attention weights, zero after the diagonal,
// against v of 256 × 128): presk on the causal A (zero terms skipped where exact,
// docs/semantics.md), presk on a dense A of the same shape, and OpenBLAS on the causal A, in
// same-run rounds. Prints milliseconds and the time ratios.
void run_causal(int threads, int rounds) {
  const size_t m = 256, k = 256, n = 128;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> causal(m * k), dense(m * k), b(k * n), c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t t = 0; t < k; ++t) dense[i * k + t] = uniform(rng), causal[i * k + t] = t <= i ? dense[i * k + t] : 0.0f;
  }
  for (float& x : b) x = uniform(rng) - 0.5f;
  using namespace presk::exec::native;
  const BSource source = f32_rows(b, n);
  const ContractionShape shape{m, n, 0, 1, k, k};
  for (int round = 0; round < rounds; ++round) {
    let_workers_sleep();
    const double skipped = median_seconds([&] { contract_f32(shape, causal.data(), source, c.data(), threads, false); }, 21);
    const double full = median_seconds([&] { contract_f32(shape, dense.data(), source, c.data(), threads, false); }, 21);
    let_workers_sleep();
    openblas_set_num_threads(threads);
    const double blas = median_seconds([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                  1.0f, causal.data(), static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    }, 21);
    std::printf("causal att @ v %zux%zux%zu  threads %d  round %d  presk causal %.3f ms  presk dense %.3f ms  OpenBLAS causal "
                "%.3f ms  dense/causal %.2f  OpenBLAS/presk %.2f\n",
                m, n, k, threads, round + 1, skipped * 1e3, full * 1e3, blas * 1e3, full / skipped, blas / skipped);
  }
  // The scores before the mask, q · kᵀ (256 × 256, 128 terms): only j <= i wanted
  // (ContractionShape::lower_only, what the executor asks for when a causal mask follows).
  const size_t t = 256, e = 128;
  std::vector<float> q(t * e), kt(e * t), s(t * t);
  for (float& x : q) x = uniform(rng) - 0.5f;
  for (float& x : kt) x = uniform(rng) - 0.5f;
  const BSource keys = f32_rows(kt, t);
  ContractionShape scores{t, t, 0, 1, e, e};
  for (int round = 0; round < rounds; ++round) {
    let_workers_sleep();
    scores.lower_only = false;
    const double full = median_seconds([&] { contract_f32(scores, q.data(), keys, s.data(), threads, false); }, 21);
    scores.lower_only = true;
    const double lower = median_seconds([&] { contract_f32(scores, q.data(), keys, s.data(), threads, false); }, 21);
    std::printf("causal q @ kT %zux%zux%zu  threads %d  round %d  presk lower-only %.3f ms  presk full %.3f ms  full/lower %.2f\n",
                t, t, e, threads, round + 1, lower * 1e3, full * 1e3, full / lower);
  }
  std::fflush(stdout);
}

// This CPU's L3 (260 MiB here) holds a 64 MiB weight between runs: to time DRAM, read 512 MiB
// of other data first (read, not written: dirty lines would cost the timed run write-backs).
void evict_caches() {
  static std::vector<char> junk(size_t{512} << 20, 1);
  static std::atomic<long> sink{0};
  long sum = 0;
  for (size_t i = 0; i < junk.size(); i += 64) sum += junk[i];
  sink.fetch_add(sum, std::memory_order_relaxed);
}

// One DRAM read of a 1 GiB array, in seconds: each of `threads` threads sums its share as 8
// concurrent sequential streams (the streaming kernel reads 8 rows of B at a time; one stream
// alone gets less), 16 independent lanes, so the loop is bound by memory. Each stream is
// prefetched 1 KiB ahead, as the kernel prefetches its rows: 4-9 % more GB/s than without, in
// same-run pairs (the f32 stream can still show a little over 100 %).
double dram_read_seconds(int threads) {
  const size_t count = (size_t{1} << 30) / sizeof(float);
  static std::vector<float> big(count, 1.0f);
  std::vector<float> sums(static_cast<size_t>(threads) * 16);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const size_t part = count / threads / 8, begin = part * 8 * t;
      float lanes[16] = {};
      const size_t ahead = 1024 / sizeof(float);
      for (size_t i = 0; i < part; i += 16) {
        for (size_t s = 0; s < 8; ++s) {
          __builtin_prefetch(&big[begin + s * part + std::min(i + ahead, part - 1)]);
          for (size_t l = 0; l < 16; ++l) lanes[l] += big[begin + s * part + i + l];
        }
      }
      std::copy(lanes, lanes + 16, sums.begin() + 16 * t);
    });
  }
  for (std::thread& thread : pool) thread.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// A memory-bound contraction: M rows against a 4096 × 4096 weight (64 MiB in f32), with the
// weight in f32, bf16, int8 and int4 (scales per column) and int4/g32 (one scale per 32 rows of a
// column, as llama.cpp's Q4_0; converted in the kernel's load, a group's scales once per 32 rows). The
// caches are evicted before each timed run, so the weights come from DRAM. The DRAM read and
// the four weights take turns within each of 9 rounds (after a warm-up round), so load from
// other processes falls on all alike; medians. GB/s counts the weight bytes; "% DRAM" is that
// against the DRAM read of the same run.
void run_memory_bound(int threads, size_t m) {
  using namespace presk::exec::native;
  const size_t k = 4096, n = 4096;
  std::mt19937 rng(2);
  std::normal_distribution<double> normal(0.0, 0.02);
  std::vector<double> w(k * n);
  for (double& x : w) x = normal(rng);
  std::vector<float> wf(w.begin(), w.end()), a(m * k, 0.5f), c(m * n);
  std::vector<uint16_t> wb(k * n);
  for (size_t i = 0; i < w.size(); ++i) std::memcpy(&wb[i], reinterpret_cast<const char*>(&wf[i]) + 2, 2);
  const QuantizedWeights q8 = quantize(w, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 8, 0, false);
  const QuantizedWeights q4 = quantize(w, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 4, 0, false);
  const QuantizedWeights q4g = quantize(w, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 4, 0, false, 32);
  const ContractionShape shape{m, n, 0, 1, k, k};
  constexpr int kVariants = 5;
  const char* names[] = {"f32", "bf16", "int8", "int4", "int4/g32"};
  const BSource::Kind kinds[] = {BSource::Kind::f32, BSource::Kind::bf16, BSource::Kind::i8, BSource::Kind::i4, BSource::Kind::i4};
  const void* data[] = {wf.data(), wb.data(), q8.q.data(), q4.q.data(), q4g.q.data()};
  const double bytes_per[] = {4.0, 2.0, 1.0, 0.5, 0.5 + 4.0 / 32};
  std::vector<double> dram, times[kVariants];
  for (int round = 0; round < 10; ++round) {
    const double read = dram_read_seconds(threads);
    if (round > 0) dram.push_back(read);
    for (int variant = 0; variant < kVariants; ++variant) {
      BSource b;
      b.ldb = n;
      b.kind = kinds[variant];
      b.data = data[variant];
      b.scales = variant == 2 ? q8.scales.data() : variant == 4 ? q4g.scales.data() : q4.scales.data();
      if (variant == 4) b.group = 32, b.scale_ld = n;
      evict_caches();
      const auto start = std::chrono::steady_clock::now();
      contract_f32(shape, a.data(), b, c.data(), threads, false);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (round > 0) times[variant].push_back(s);
    }
  }
  const double dram_gbs = (size_t{1} << 30) / median(dram) * 1e-9, f32_s = median(times[0]);
  std::printf("DRAM read, %d thread(s), 1 GiB: %.1f GB/s\n", threads, dram_gbs);
  for (int variant = 0; variant < kVariants; ++variant) {
    const double s = median(times[variant]), gbs = bytes_per[variant] * k * n / s * 1e-9;
    std::printf("memory-bound %zu x 4096 x 4096 %-5s threads %d  %7.3f ms  %6.1f GB/s of weights  %3.0f %% DRAM  "
                "speed-up vs f32 %.2f\n",
                m, names[variant], threads, s * 1e3, gbs, 100 * gbs / dram_gbs, f32_s / s);
  }
}

// How long the pool's worker takes to join a call after it fell asleep: a call of 200 tasks of
// 50 µs each (10 ms) on 2 threads after the workers slept 3 ms or 300 ms; prints when a worker
// first started a task (never: it joined after the call). Docs: docs/performance-history.md.
void run_wake(int rounds) {
  struct Call {
    std::chrono::steady_clock::time_point start;
    std::thread::id caller;
    std::atomic<long> first_worker_us{-1};
  };
  for (int round = 0; round < rounds; ++round) {
    for (int pause_ms : {3, 300}) {
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      Call call;
      call.start = std::chrono::steady_clock::now(), call.caller = std::this_thread::get_id();
      presk::exec::native::run_tasks(200, 2, [](const void* context, size_t) {
        Call& c = *static_cast<Call*>(const_cast<void*>(context));
        const auto now = std::chrono::steady_clock::now();
        long expected = -1;
        if (std::this_thread::get_id() != c.caller) {
          c.first_worker_us.compare_exchange_strong(expected, std::chrono::duration_cast<std::chrono::microseconds>(now - c.start).count());
        }
        while (std::chrono::steady_clock::now() - now < std::chrono::microseconds(50)) {}
      }, &call);
      const long us = call.first_worker_us.load();
      std::printf("wake round %d  after %3d ms asleep  worker's first task at %s\n", round + 1, pause_ms,
                  us < 0 ? "never (the call's 10 ms passed)" : (std::to_string(us) + " us").c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // --memory-bound: only the memory-bound section; --gemm: only the sgemm section; --rows: also
  // M = 1, 2, 8 (2 threads); --causal: only att @ v with causal zeros; --rounds R: same-run
  // rounds per sgemm or causal shape (default 3); --wake: how long the pool's worker takes to join
// a call after sleeping.
  bool only_memory = false, only_gemm = false, rows = false, causal = false, wake = false;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--memory-bound") only_memory = true;
    else if (arg == "--gemm") only_gemm = true;
    else if (arg == "--rows") rows = true;
    else if (arg == "--causal") causal = true;
    else if (arg == "--wake") wake = true;
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_contraction [--gemm | --memory-bound | --causal | --wake] [--rows] [--rounds R]\n");
      return 2;
    }
  }
  if (causal) {
    for (int threads : {1, 2}) run_causal(threads, rounds);
    return 0;
  }
  if (wake) {
    run_wake(rounds);
    return 0;
  }
  if (!only_memory && std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    std::fprintf(stderr, "note: OPENBLAS_CORETYPE is not set; Debian's OpenBLAS may run its SSE3 kernels here "
                         "(set OPENBLAS_CORETYPE=SkylakeX on an AVX-512 CPU for a fair peer)\n");
  }
  if (!only_memory) {
    std::printf("M x N x K (f32, presk sequential order vs OpenBLAS sgemm; ratio = presk speed / OpenBLAS speed)\n");
    for (int threads : {1, 2}) {
      run(64, 1024, 4096, threads, rounds);
      run(1024, 1024, 1024, threads, rounds);
    }
  }
  if (only_gemm) return 0;
  for (int threads : {1, 2}) run_memory_bound(threads, 4);
  if (rows) {
    for (size_t m : {1, 2, 8}) run_memory_bound(2, m);
  }
  return 0;
}
