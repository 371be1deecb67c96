// The contraction driver shared by the f64 and f32 families: splits C into independent
// output tiles (threads take whole tiles, so no sum is ever split between threads), walks K in
// blocks of kKBlock terms (each C element's fma chain is stored in a tile buffer and continued:
// blocking changes no addition's order), loads each B panel converted to T, and runs a panel
// kernel (scalar or SIMD; both compute the same chains).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <hwy/aligned_allocator.h>

#include "exec/native/kernels.h"
#include "exec/native/workers.h"

namespace presk::exec::native {

template <typename T>
using PanelKernelFn = void (*)(const T* a, size_t lda, size_t astep, size_t rows, const T* bp,
                               size_t kc, const PanelChains<T>& c);

// The defining loop: every chain c[r][j] continues c = fma(a[r][u], b[u][j], c), u ascending.
// bp is a packed panel of kc rows in strips of kPanelStrip<T> columns (kernels.h).
template <typename T>
void panel_kernel_scalar(const T* a, size_t lda, size_t astep, size_t rows, const T* bp,
                         size_t kc, const PanelChains<T>& c) {
  constexpr size_t S = kPanelStrip<T>;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < c.cols; ++j) {
      const T* b = bp + (j / S) * kc * S + j % S;
      T acc = c.in ? c.in[r * c.in_ld + j] : T(0);
      for (size_t u = 0; u < kc; ++u) acc = std::fma(a[r * lda + u * astep], b[u * S], acc);
      c.out[r * c.out_ld + j] = acc;
    }
  }
}

inline constexpr size_t kKBlock = 256;   // terms per B panel
inline constexpr size_t kRowBlock = 64;    // rows of C per kernel call
inline constexpr size_t kGroupRows = 512;  // rows of C per task, at most

// Runs f(task) for task < count on the calling thread and up to `threads` − 1 workers of the
// executor's pool (workers.h; serially for <= 1).
template <typename F>
void for_each_task(size_t count, int threads, const F& f) {
  run_tasks(count, threads, [](const void* context, size_t task) { (*static_cast<const F*>(context))(task); }, &f);
}

// C in tasks of (a group of rows, a column tile). Each task loads every B panel of its column
// tile once and runs the kernel over all its rows, in strips; groups are as few as keep the
// workers busy (B panels are the costly load at these sizes) and at most kGroupRows rows. The
// first panel starts every chain at +0 and the last stores the chains into C; a tile holds
// them in between (none is needed when K fits one panel).
template <typename T>
void contract_tiles(const ContractionShape& s, const T* a, const BSource& b, T* c, int threads,
                    PanelKernelFn<T> kernel) {
  const size_t col_block = 1024 / sizeof(T);                 // 256 f32 / 128 f64 columns
  const size_t align = kPanelStrip<T>;                       // two 64-byte vectors
  const size_t col_tiles = (s.n + col_block - 1) / col_block;
  const size_t workers = static_cast<size_t>(std::max(threads, 1));
  size_t groups = std::max<size_t>((workers + col_tiles - 1) / col_tiles, (s.m + kGroupRows - 1) / kGroupRows);
  groups = std::max<size_t>(1, std::min(groups, (s.m + kRowBlock - 1) / kRowBlock));
  const size_t group_rows = ((s.m + groups - 1) / groups + 7) / 8 * 8;
  for_each_task(groups * col_tiles, threads, [&](size_t task) {
    const size_t i0 = (task / col_tiles) * group_rows;
    if (i0 >= s.m) return;
    const size_t rows = std::min(group_rows, s.m - i0);
    const size_t j0 = (task % col_tiles) * col_block, cols = std::min(col_block, s.n - j0);
    if (s.terms == 0) {  // no terms: every chain is its +0
      for (size_t r = 0; r < rows; ++r) std::fill(c + (i0 + r) * s.n + j0, c + (i0 + r) * s.n + j0 + cols, T(0));
      return;
    }
    const size_t ld = (cols + align - 1) / align * align;
    hwy::AlignedFreeUniquePtr<T[]> tile;  // (Highway refuses a 0-byte allocation)
    if (s.terms > kKBlock) tile = hwy::AllocateAligned<T>(rows * ld);
    hwy::AlignedFreeUniquePtr<T[]> panel = hwy::AllocateAligned<T>(std::min(kKBlock, s.terms) * ld);
    for (size_t t0 = 0; t0 < s.terms; t0 += kKBlock) {
      const size_t kc = std::min(kKBlock, s.terms - t0);
      const bool first = t0 == 0, last = t0 + kc == s.terms;
      load_b_panel(b, s, t0, kc, j0, cols, panel.get(), ld);
      for (size_t r0 = 0; r0 < rows; r0 += kRowBlock) {
        PanelChains<T> chains{first ? nullptr : tile.get() + r0 * ld, ld,
                              last ? c + (i0 + r0) * s.n + j0 : tile.get() + r0 * ld, last ? s.n : ld,
                              last ? cols : ld};
        // The first row block brings the next panel's B into L2: the task's next panel, or on
        // one thread (tasks in order) the next task's first.
        if (r0 == 0 && !last) {
          chains.next = b_panel_source(b, s, t0 + kc, std::min(kKBlock, s.terms - t0 - kc), j0, cols);
        } else if (r0 == 0 && threads <= 1 && j0 + cols < s.n) {
          chains.next = b_panel_source(b, s, 0, std::min(kKBlock, s.terms), j0 + cols, std::min(col_block, s.n - j0 - cols));
        }
        kernel(a + (i0 + r0) * s.lda + s.k_first + t0 * s.k_step, s.lda, s.k_step, std::min(kRowBlock, rows - r0),
               panel.get(), kc, chains);
      }
    }
  });
}

}  // namespace presk::exec::native
