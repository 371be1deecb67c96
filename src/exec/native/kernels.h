// The native kernels' entry points, one implementation file per type family
// (kernels_f64.cpp, kernels_f32.cpp, kernels_bf16.cpp, kernels_int.cpp). Each has a scalar
// path that defines the bits and Highway SIMD paths (AVX2/AVX-512 with FMA, dynamic dispatch)
// that reproduce them; `force_scalar` selects the scalar path (tests compare the two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace presk::exec::native {

// The elementwise functions with kernels of their own (docs/semantics.md, "Transcendentals").
enum class UnaryFn : uint8_t { exp, log, tanh, gelu_tanh, gelu_erf, rsqrt, sqrt, gelu_tanh_grad, gelu_erf_grad, erf, erf_grad };
const char* unary_fn_name(UnaryFn fn);

// The scalar definitions (one value).
double unary_scalar(UnaryFn fn, double x);
float unary_scalar(UnaryFn fn, float x);

// y[i] = fn(x[i]) for i < n; x and y may alias.
void unary_f64(UnaryFn fn, const double* x, double* y, size_t n, bool force_scalar);
void unary_f32(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar);
// bf16 site: computed in f32, then rounded once to bf16 (values are bf16 held in f32).
void unary_bf16(UnaryFn fn, const float* x, float* y, size_t n, bool force_scalar);

// Where the SIMD path (force_scalar false) of the f64 and the f32 family dispatches now: the
// Highway target (HWY_TARGET, e.g. HWY_AVX2) whose code runs, and whether it runs the SIMD
// kernels (an FMA target) or the scalar definition (a target without FMA). Tests use it to
// show that a path under test is the FMA kernel of the target they asked for.
struct SimdPath {
  int64_t target = 0;
  bool fma = false;
};
SimdPath simd_path_f64();
SimdPath simd_path_f32();

// Where B of a contraction comes from: its storage, converted (exactly, or for int weights as
// f32(q·s)) to the compute type while a panel is loaded. Element (k, n) at first + k·ldb + n·ldn:
// row-major [K, N] (ldn = 1), or for f64, f32 or bf16 storage a transposed [N, K] read in
// place (ldb = 1, ldn = K; reverse mode's dY · Wᵀ, attention's q · kᵀ).
struct BSource {
  enum class Kind : uint8_t { f64, f32, bf16, i8, i4 };
  Kind kind = Kind::f32;
  const void* data = nullptr;
  size_t first = 0;                 // element index of (0, 0) in data
  size_t ldb = 0;                   // elements between rows k and k+1
  size_t ldn = 1;                   // elements between columns n and n+1
  const float* scales = nullptr;    // i8/i4: f32 scales
  bool scale_per_column = true;     // scales[n] (quantized over K) or scales[k] (over N), relative to (0, 0)
  size_t group = 0;                 // i8/i4 with group scales: G elements along the scaled axis share one
  size_t scale_ld = 0;              // group: scales per row k (over K: N; over N: N / G)
  const float* scale_row(size_t k) const;  // i8/i4: the scales of row k (index n over K, n / G or 0 over N)
  double value(size_t k, size_t n) const;  // element (k, n) in the compute type's value
};

// One contraction C[M, N] = Σ_k A[M, K] · B[K, N] in the compute type T (double or float):
// A's element (i, k) at a[i·lda + k·a_col] (row-major: a_col = 1; a transposed A, stored
// [K, M] and read in place: lda = 1, a_col = M); the k of term t is k_first + t·k_step,
// t < terms. Each C element: c = +0, then c = fma(a_ik, b_kj, c) for t ascending (the
// sequential order).
struct ContractionShape {
  size_t m = 0, n = 0;
  size_t k_first = 0, k_step = 1, terms = 0;
  size_t lda = 0;
  size_t a_col = 1;
  // Only C(i, j) with j <= i is wanted (the rest feeds a causal mask, which overwrites it):
  // a SIMD panel kernel may then store +0 in place of a row block's columns past its last row.
  bool lower_only = false;
  // An epilogue: each C(i, j) is then c + bias[j] in the compute type, one IEEE addition
  // (bias[j] + c when `bias_first`: the order of the `add` whose work this is). nullptr: none.
  const void* bias = nullptr;
  bool bias_first = false;
};

// `threads`: how many threads (the caller and pool workers, workers.h) may split the output
// tiles (<= 1: the calling thread).
void contract_f64(const ContractionShape& shape, const double* a, const BSource& b, double* c,
                  int threads, bool force_scalar);
void contract_f32(const ContractionShape& shape, const float* a, const BSource& b, float* c,
                  int threads, bool force_scalar);

// The memory-bound contraction (kernels_stream.cpp), for few rows of A against a large B:
// B is read once, contiguously, in its storage type (each thread a contiguous range of
// columns) and converted in registers. Same chains and bits as contract_f32's scalar path;
// `force_scalar` runs the same traversal with the scalar loop.
inline constexpr size_t kStreamMaxRows = 8;
bool stream_applies(const ContractionShape& shape, const BSource& b);
void contract_stream(const ContractionShape& shape, const float* a, const BSource& b, float* c, int threads,
                     bool force_scalar);

// A packed B panel holds its columns in strips of kPanelStrip<T> (128 bytes): strip s is
// rows × kPanelStrip contiguous values at dst + s·rows·kPanelStrip, row after row. A kernel's
// strip then lies in consecutive cache lines (rows of a row-major panel 1 KiB apart would all
// fall into a few L1 sets and evict each other).
template <typename T>
inline constexpr size_t kPanelStrip = 128 / sizeof(T);

// Bytes of B the next panel will be loaded from: `rows` runs of `row_bytes` bytes, `stride`
// bytes apart. A panel kernel prefetches their cache lines into L2 while it computes, spread
// over its row blocks, so the next load_b_panel reads from L2 (no effect on any value).
struct PanelPrefetch {
  const char* first = nullptr;
  size_t rows = 0, row_bytes = 0, stride = 0;
};
PanelPrefetch b_panel_source(const BSource& b, const ContractionShape& shape, size_t t0, size_t rows, size_t j0,
                             size_t cols);

// Where a panel kernel's fma chains come from and go: `in` holds the running chains (row
// stride in_ld; nullptr: every chain starts at +0, the first panel), `out` takes them (row
// stride out_ld: the task's tile between panels, C itself after the last), `cols` columns of
// each row stored (the columns past them are the panel's zero padding). `next`: the source
// of the panel after this one, to prefetch (none: rows == 0).
template <typename T>
struct PanelChains {
  const T* in;
  size_t in_ld;
  T* out;
  size_t out_ld;
  size_t cols;
  PanelPrefetch next{};
  // ContractionShape::lower_only: C's row and column of (in, out)'s (0, 0), where wanted.
  bool lower_only = false;
  size_t row0 = 0, col0 = 0;
  // ContractionShape::bias at `out`'s column 0, when `out` is C (the last panel); else nullptr.
  const T* bias = nullptr;
  bool bias_first = false;
};

// Loads panel rows t0 … t0+rows−1 (k = k_first + t·k_step) and columns j0 … j0+cols−1 of B
// into dst, packed in strips (above; columns zero-padded to ld, a multiple of the strip),
// converted to T.
void load_b_panel(const BSource& b, const ContractionShape& shape, size_t t0, size_t rows,
                  size_t j0, size_t cols, double* dst, size_t ld);
void load_b_panel(const BSource& b, const ContractionShape& shape, size_t t0, size_t rows,
                  size_t j0, size_t cols, float* dst, size_t ld);

// Integer weights (docs/semantics.md, "Integer weights"). `values` row-major over `shape`;
// scales: one per index of every axis but `over` (row-major over the remaining axes) or, with a
// group G, one per G consecutive elements along `over` (row-major over the shape with axis
// `over` of extent shape[over] / G).
struct QuantizedWeights {
  int bits = 8;
  std::vector<int64_t> shape;
  int64_t over = 0;                // normalized, 0 <= over < rank
  int64_t group = 0;               // 0: the whole axis; else divides shape[over]
  std::vector<uint8_t> q;          // i8: one per byte; i4: two per byte, low nibble first
  std::vector<float> scales;
  int64_t q_at(size_t index) const;
  // f32(q·s) of element `index` (row-major).
  float value(size_t index) const;
  size_t scale_index(size_t index) const;
};
QuantizedWeights quantize(const std::vector<double>& values, const std::vector<int64_t>& shape,
                          int bits, int64_t over, bool pow2, int64_t group = 0);

}  // namespace presk::exec::native
