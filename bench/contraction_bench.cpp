// f32 contraction under presk's sequential order (the native kernel, bits defined by the
// scalar fma chain) against OpenBLAS sgemm, same shapes, same thread counts, same run.
// Prints GFLOP/s and the ratio presk / OpenBLAS. Median of 9 runs after a warm-up.
//   cmake --build build/native --target bench_contraction && build/native/bench/bench_contraction
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "exec/native/kernels.h"

namespace {

extern "C" void openblas_set_num_threads(int);

template <typename F>
double median_seconds(const F& f) {
  f();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < 9; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void run(size_t m, size_t n, size_t k, int threads) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c(m * n), c_blas(m * n);
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  using namespace presk::exec::native;
  BSource source;
  source.kind = BSource::Kind::f32;
  source.data = b.data();
  source.ldb = n;
  const ContractionShape shape{m, n, 0, 1, k, k};
  const double presk_s = median_seconds([&] { contract_f32(shape, a.data(), source, c.data(), threads, false); });
  openblas_set_num_threads(threads);
  const double blas_s = median_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                1.0f, a.data(), static_cast<int>(k), b.data(), static_cast<int>(n), 0.0f, c_blas.data(), static_cast<int>(n));
  });
  const double flops = 2.0 * static_cast<double>(m) * n * k;
  std::printf("%5zu x %5zu x %5zu  threads %d  presk %7.1f GFLOP/s  OpenBLAS %7.1f GFLOP/s  ratio %.2f\n", m, n, k,
              threads, flops / presk_s * 1e-9, flops / blas_s * 1e-9, blas_s / presk_s);
}

// A memory-bound contraction: M = 4 rows against a 4096 × 4096 weight (64 MiB in f32), with the
// weight in f32, int8 and int4 (dequantized in the kernel's load). GB/s counts the weight bytes.
void run_memory_bound(int threads) {
  using namespace presk::exec::native;
  const size_t m = 4, k = 4096, n = 4096;
  std::mt19937 rng(2);
  std::normal_distribution<double> normal(0.0, 0.02);
  std::vector<double> w(k * n);
  for (double& x : w) x = normal(rng);
  std::vector<float> wf(w.begin(), w.end()), a(m * k, 0.5f), c(m * n);
  const QuantizedWeights q8 = quantize(w, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 8, 0, false);
  const QuantizedWeights q4 = quantize(w, {static_cast<int64_t>(k), static_cast<int64_t>(n)}, 4, 0, false);
  const ContractionShape shape{m, n, 0, 1, k, k};
  double f32_s = 0;
  for (int variant = 0; variant < 3; ++variant) {
    BSource b;
    b.ldb = n;
    b.kind = variant == 0 ? BSource::Kind::f32 : variant == 1 ? BSource::Kind::i8 : BSource::Kind::i4;
    b.data = variant == 0 ? static_cast<const void*>(wf.data()) : variant == 1 ? q8.q.data() : q4.q.data();
    b.scales = variant == 1 ? q8.scales.data() : q4.scales.data();
    const double s = median_seconds([&] { contract_f32(shape, a.data(), b, c.data(), threads, false); });
    if (variant == 0) f32_s = s;
    const double bytes = variant == 0 ? 4.0 * k * n : variant == 1 ? 1.0 * k * n : 0.5 * k * n;
    std::printf("memory-bound 4 x 4096 x 4096 %-5s threads %d  %7.2f ms  %6.1f GB/s of weights  speed-up vs f32 %.2f\n",
                variant == 0 ? "f32" : variant == 1 ? "int8" : "int4", threads, s * 1e3, bytes / s * 1e-9, f32_s / s);
  }
}

}  // namespace

int main() {
  std::printf("M x N x K (f32, presk sequential order vs OpenBLAS sgemm; ratio = presk speed / OpenBLAS speed)\n");
  for (int threads : {1, 2}) {
    run(64, 1024, 4096, threads);
    run(1024, 1024, 1024, threads);
  }
  for (int threads : {1, 2}) run_memory_bound(threads);
  return 0;
}
