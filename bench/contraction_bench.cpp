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

}  // namespace

int main() {
  std::printf("M x N x K (f32, presk sequential order vs OpenBLAS sgemm; ratio = presk speed / OpenBLAS speed)\n");
  for (int threads : {1, 2}) {
    run(64, 1024, 4096, threads);
    run(1024, 1024, 1024, threads);
  }
  return 0;
}
