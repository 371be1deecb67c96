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
      if (c.bias) acc = c.bias_first ? c.bias[j] + acc : acc + c.bias[j];
      c.out[r * c.out_ld + j] = acc;
    }
  }
}

// C[rows, cols] (row stride ldc, C's column j0 first) = C + bias[j0 + j], or bias + C.
template <typename T>
void add_bias(const ContractionShape& s, T* c, size_t rows, size_t cols, size_t ldc, size_t j0) {
  const T* bias = static_cast<const T*>(s.bias) + j0;
  for (size_t r = 0; r < rows; ++r) {
    T* row = c + r * ldc;
    for (size_t j = 0; j < cols; ++j) row[j] = s.bias_first ? bias[j] + row[j] : row[j] + bias[j];
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

// The rows of C a group of a contraction owns: `count` runs of kRowBlock rows (the last maybe
// shorter), run i starting at row first + i·stride. Where every group gets two runs or more,
// groups take every groups-th run (a causal A's zero tails, whose skipped terms make later
// rows dearer, then spread evenly); else one contiguous range each.
struct RowRuns {
  size_t first = 0, stride = 0, count = 0, rows = 0, end = 0;  // rows: in all runs; end: past the last row
  size_t rows_of_run(size_t i) const { return std::min(kRowBlock, end - (first + i * stride)); }
};

inline RowRuns rows_of_group(size_t m, size_t groups, size_t group) {
  const size_t runs = (m + kRowBlock - 1) / kRowBlock;
  RowRuns r;
  if (runs >= 2 * groups) {
    r.first = group * kRowBlock, r.stride = groups * kRowBlock;
    r.count = (runs - group + groups - 1) / groups;
    r.rows = r.count * kRowBlock;
    if ((runs - 1) % groups == group) r.rows -= runs * kRowBlock - m;  // the group of the last run
    r.end = m;
    return r;
  }
  const size_t group_rows = ((m + groups - 1) / groups + 7) / 8 * 8;
  r.first = group * group_rows;
  r.rows = r.first < m ? std::min(group_rows, m - r.first) : 0;
  r.stride = kRowBlock, r.count = (r.rows + kRowBlock - 1) / kRowBlock, r.end = r.first + r.rows;
  return r;
}

// C in tasks of (a group of rows, a column tile). Each task loads every B panel of its column
// tile once and runs the kernel over all its rows, in runs of kRowBlock; groups are as few as
// keep the workers busy (B panels are the costly load at these sizes) and at most kGroupRows
// rows. The first panel starts every chain at +0 and the last stores the chains into C; a
// tile holds them in between (none is needed when K fits one panel).
template <typename T>
void contract_tiles(const ContractionShape& s, const T* a, const BSource& b, T* c, int threads,
                    PanelKernelFn<T> kernel) {
  const size_t col_block = 1024 / sizeof(T);                 // 256 f32 / 128 f64 columns
  const size_t align = kPanelStrip<T>;                       // two 64-byte vectors
  const size_t col_tiles = (s.n + col_block - 1) / col_block;
  const size_t workers = static_cast<size_t>(std::max(threads, 1));
  size_t groups = std::max<size_t>((workers + col_tiles - 1) / col_tiles, (s.m + kGroupRows - 1) / kGroupRows);
  groups = std::max<size_t>(1, std::min(groups, (s.m + kRowBlock - 1) / kRowBlock));
  for_each_task(groups * col_tiles, threads, [&](size_t task) {
    const RowRuns runs = rows_of_group(s.m, groups, task / col_tiles);
    if (runs.rows == 0) return;
    const size_t j0 = (task % col_tiles) * col_block, cols = std::min(col_block, s.n - j0);
    if (s.terms == 0) {  // no terms: every chain is its +0
      for (size_t i = 0; i < runs.count; ++i) {
        const size_t i0 = runs.first + i * runs.stride;
        for (size_t r = 0; r < runs.rows_of_run(i); ++r) std::fill(c + (i0 + r) * s.n + j0, c + (i0 + r) * s.n + j0 + cols, T(0));
        if (s.bias) add_bias(s, c + i0 * s.n + j0, runs.rows_of_run(i), cols, s.n, j0);
      }
      return;
    }
    const size_t ld = (cols + align - 1) / align * align;
    hwy::AlignedFreeUniquePtr<T[]> tile;  // (Highway refuses a 0-byte allocation)
    if (s.terms > kKBlock) tile = hwy::AllocateAligned<T>(runs.count * kRowBlock * ld);
    hwy::AlignedFreeUniquePtr<T[]> panel = hwy::AllocateAligned<T>(std::min(kKBlock, s.terms) * ld);
    hwy::AlignedFreeUniquePtr<T[]> a_packed;
    if (s.lda == 1 && s.a_col != 1) a_packed = hwy::AllocateAligned<T>(std::min(kKBlock, s.terms) * kRowBlock);
    for (size_t t0 = 0; t0 < s.terms; t0 += kKBlock) {
      const size_t kc = std::min(kKBlock, s.terms - t0);
      const bool first = t0 == 0, last = t0 + kc == s.terms;
      load_b_panel(b, s, t0, kc, j0, cols, panel.get(), ld);
      for (size_t i = 0; i < runs.count; ++i) {
        const size_t i0 = runs.first + i * runs.stride;  // run i's first row of C
        T* held = tile.get() + i * kRowBlock * ld;       // its chains between panels
        PanelChains<T> chains{first ? nullptr : held, ld, last ? c + i0 * s.n + j0 : held, last ? s.n : ld,
                              last ? cols : ld};
        chains.lower_only = s.lower_only, chains.row0 = i0, chains.col0 = j0;
        if (last && s.bias) chains.bias = static_cast<const T*>(s.bias) + j0, chains.bias_first = s.bias_first;
        // The first run brings the next panel's B into L2: the task's next panel, or on one
        // thread (tasks in order) the next task's first.
        if (i == 0 && !last) {
          chains.next = b_panel_source(b, s, t0 + kc, std::min(kKBlock, s.terms - t0 - kc), j0, cols);
        } else if (i == 0 && threads <= 1 && j0 + cols < s.n) {
          chains.next = b_panel_source(b, s, 0, std::min(kKBlock, s.terms), j0 + cols, std::min(col_block, s.n - j0 - cols));
        }
        const T* a_run = a + i0 * s.lda + (s.k_first + t0 * s.k_step) * s.a_col;
        const size_t rows = runs.rows_of_run(i);
        if (s.lda == 1 && s.a_col != 1) {
          // A transposed A's run, copied term by term into one stretch (read in place, a row
          // block's terms lie 1–4 KiB apart, often cold: the kernel then waits on each line).
          // A copy changes no value. (Copying it row-major instead cost more than it saved.)
          for (size_t u = 0; u < kc; ++u) std::copy_n(a_run + u * s.k_step * s.a_col, rows, a_packed.get() + u * kRowBlock);
          kernel(a_packed.get(), 1, kRowBlock, rows, panel.get(), kc, chains);
        } else {
          kernel(a_run, s.lda, s.k_step * s.a_col, rows, panel.get(), kc, chains);
        }
      }
    }
  });
}

}  // namespace presk::exec::native
