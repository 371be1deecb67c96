// The ceiling of the sequential-order contraction kernel on this machine (docs/performance.md,
// "The kernel's ceiling, again"; docs/performance-history.md, "The contraction kernel is at
// this VM's ceiling"): per round, the zmm FMA peak (12 independent register chains) beside
// register tiles of MR rows × NV zmm vectors, each chain
// c = fma(a_ik, b_kj, c) for k ascending, over a packed B strip and A rows read from L2 — the
// panel kernel's loop order (src/exec/native/kernels-inl.h). Prints GFLOP/s (medians of 200
// passes); a benchmark, not a test.
//   ninja -C build/ci tile_probe && build/ci/bench/tile_probe [M N K] [rounds]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// 12 independent chains of zmm FMAs, kept in registers: the core's FMA rate.
__attribute__((target("avx512f"))) float fma_peak(long iters) {
  __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2), c3 = _mm512_set1_ps(3),
         c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5), c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7),
         c8 = _mm512_set1_ps(8), c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long t = 0; t < iters; ++t) {
    c0 = _mm512_fmadd_ps(c0, a, b), c1 = _mm512_fmadd_ps(c1, a, b), c2 = _mm512_fmadd_ps(c2, a, b);
    c3 = _mm512_fmadd_ps(c3, a, b), c4 = _mm512_fmadd_ps(c4, a, b), c5 = _mm512_fmadd_ps(c5, a, b);
    c6 = _mm512_fmadd_ps(c6, a, b), c7 = _mm512_fmadd_ps(c7, a, b), c8 = _mm512_fmadd_ps(c8, a, b);
    c9 = _mm512_fmadd_ps(c9, a, b), c10 = _mm512_fmadd_ps(c10, a, b), c11 = _mm512_fmadd_ps(c11, a, b);
    __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7), "+v"(c8),
                     "+v"(c9), "+v"(c10), "+v"(c11));  // the chains stay in registers, none is merged
  }
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                                   _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)),
                                                 _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11))));
  alignas(64) float lanes[16];  // (not _mm512_reduce_add_ps: GCC 12's header warns in it)
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

// One MR × (16·NV) block: the chains over kc terms of a packed strip (rows 16·NV floats apart).
template <int MR, int NV>
__attribute__((target("avx512f"), noinline)) void block(const float* a, size_t lda, const float* b, size_t kc, float* c,
                                                        size_t ldc) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (size_t u = 0; u < kc; ++u) {
    __m512 bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + u * 16 * NV + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + u]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(c + r * ldc + 16 * v, acc[r][v]);
}

// The median GFLOP/s of `passes` passes over C (strips outermost, as the panel kernel walks).
template <int MR, int NV>
double tile_rate(size_t m, size_t n, size_t k, const float* a, const float* bp, float* c, int passes) {
  const size_t strip = 16 * NV, rows = m / MR * MR, cols = n / strip * strip;
  std::vector<double> rates;
  for (int pass = 0; pass < passes; ++pass) {
    const double t0 = now();
    for (size_t j = 0; j < cols; j += strip) {
      for (size_t r = 0; r < rows; r += MR) block<MR, NV>(a + r * k, k, bp + j * k, k, c + r * n + j, n);
    }
    rates.push_back(2.0 * static_cast<double>(rows * cols * k) / (now() - t0) * 1e-9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t m = argc > 3 ? std::strtoul(argv[1], nullptr, 10) : 256, n = argc > 3 ? std::strtoul(argv[2], nullptr, 10) : 384,
               k = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 256;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : argc == 2 ? std::atoi(argv[1]) : 4;
  if (!__builtin_cpu_supports("avx512f")) {
    std::fprintf(stderr, "tile_probe: this CPU has no AVX-512F\n");
    return 1;
  }
  std::vector<float> a(m * k), c(m * n);
  std::vector<float> packed(n * k + 16);
  float* bp = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(packed.data()) + 63) / 64 * 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f + static_cast<float>(i % 7) * 0.01f;
  for (size_t i = 0; i + 16 <= packed.size(); ++i) bp[i] = 0.25f + static_cast<float>(i % 5) * 0.01f;
  std::printf("M %zu N %zu K %zu, GFLOP/s (1 thread): FMA peak, then MRxNV register tiles of zmm\n", m, n, k);
  const long iters = 20000000;
  for (int round = 0; round < rounds; ++round) {
    const double t0 = now();
    const float sink = fma_peak(iters);
    const double peak = static_cast<double>(iters) * 12 * 32 / (now() - t0) * 1e-9;
    std::printf("round %d  peak %4.0f  8x2 %4.0f  4x4 %4.0f  6x4 %4.0f  12x2 %4.0f  14x2 %4.0f  4x3 %4.0f  8x3 %4.0f%s\n", round + 1,
                peak, tile_rate<8, 2>(m, n, k, a.data(), bp, c.data(), 200), tile_rate<4, 4>(m, n, k, a.data(), bp, c.data(), 200),
                tile_rate<6, 4>(m, n, k, a.data(), bp, c.data(), 200), tile_rate<12, 2>(m, n, k, a.data(), bp, c.data(), 200),
                tile_rate<14, 2>(m, n, k, a.data(), bp, c.data(), 200), tile_rate<4, 3>(m, n, k, a.data(), bp, c.data(), 200),
                tile_rate<8, 3>(m, n, k, a.data(), bp, c.data(), 200), sink == 0.5f ? " " : "");
  }
  return 0;
}
