// Row kernels of the reductions (kernels_rows.cpp): a row's maximum and the sequential sums of
// several rows, each with the bits of its scalar definition.
#pragma once

#include <cstddef>

namespace presk::exec::native {

// The maximum of x[0, n) as the fold m = x0, then m = x_t where m is NaN, x_t > m, or x_t == m
// is +0, NaN terms skipped (maxNum with +0 above −0; all NaN: x0). Vectorized unless
// force_scalar; the same value either way (a maximum rounds nothing).
double max_of_row(const double* x, size_t n, bool force_scalar);
float max_of_row(const float* x, size_t n, bool force_scalar);

// out[r] = the sequential sum s = t0, s += t1, … of row r (x + r·stride, len terms; 0 when
// len = 0), for r < rows: several chains interleaved, each in its own order.
void sequential_row_sums(const double* x, size_t rows, size_t len, size_t stride, double* out);
void sequential_row_sums(const float* x, size_t rows, size_t len, size_t stride, float* out);

}  // namespace presk::exec::native
