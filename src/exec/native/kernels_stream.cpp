// The memory-bound contraction: few rows of A (M <= kStreamMaxRows) against a large B, which
// is read once, contiguously, in its storage type and converted in registers (f32 as is; bf16
// widened by a shift; int8 and int4 as f32(q·s), the product rounded to f32 first), so that the
// weights cross the memory bus at their own width.
//
// Each thread owns a contiguous range of columns and walks k ascending over whole rows of that
// range; the range's C accumulators (M rows) live in a cache-resident buffer and are carried in
// registers across kStreamK consecutive terms. Every C element is still c = +0, then
// c = fma(a_ik, b_kj, c) for k ascending (docs/semantics.md, the sequential order): the same
// chain, hence the same bits, as contract_f32's scalar path, for any thread count.
//
// int4 (two per byte, low nibble first): L bytes become L even and L odd columns, so the
// accumulators (and per-column scales) of a group of 2L columns are kept de-interleaved —
// slot v·L + i holds column 2i + v — and are interleaved once, when C is written.
//
// Group scales over K (llama.cpp's Q8_0/Q4_0 layout: one scale per G rows of a column) stream
// too when every block of kStreamK terms lies in one group (G and the first term multiples of
// kStreamK, terms consecutive): the column scales are those of the block's group, loaded (int4:
// de-interleaved) again when a block enters the next group. Groups over N take the panel path.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exec/native/kernels_stream.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>

#include "exec/native/contract_driver.h"
#include "exec/native/kernels.h"
#include "exec/native/simd_ops-inl.h"

#ifndef PRESK_NATIVE_KERNELS_STREAM_ONCE
#define PRESK_NATIVE_KERNELS_STREAM_ONCE
namespace presk::exec::native::stream {

// B's storage and where its scales apply, as one switch for the kernels.
enum class Format : uint8_t { f32, bf16, i8_column, i8_row, i4_column, i4_row };

// Consecutive terms of B a block holds (kStreamK of the SIMD code; stream_applies' group rule).
inline constexpr size_t kBlockTerms = 8;

// One thread's share: columns [j0, j0 + cols) of every row of C.
struct Job {
  const ContractionShape* s = nullptr;
  const float* a = nullptr;
  const BSource* b = nullptr;
  float* c = nullptr;
  Format format = Format::f32;
  size_t j0 = 0, cols = 0;
  float* acc = nullptr;      // s->m rows × ld, 64-byte aligned
  size_t ld = 0;
  float* scales = nullptr;   // cols floats of scratch (int4 per-column scales, de-interleaved)
};

}  // namespace presk::exec::native::stream
#endif

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {

#if PRESK_HWY_FMA
using stream::Format;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

constexpr size_t kStreamK = stream::kBlockTerms;  // consecutive terms carried in registers
constexpr size_t kRowGroup = 4;    // C rows per register pass (8 accumulators)
// How far ahead along its own row an f32 row is prefetched, in bytes. The other formats
// prefetch the same columns of the next block, kStreamK rows × the range's width ahead; for f32
// (4 bytes a column) that is 128 KiB on one thread at N = 4096, more than the caches keep for
// it. 2 KiB ahead streamed f32 17-26 % faster at M = 1 and 6-11 % at M = 4 (same-run pairs);
// for bf16, int8 and int4 it made no difference, so they keep the next block.
constexpr size_t kF32AheadBytes = 2048;

// The kStreamK rows of B of one k-block: where column j0 of each starts, its scale (per-row
// formats), its int4 table f32(q·s_k) by nibble (16-lane targets), and A's terms, packed.
struct BlockRows {
  const uint8_t* row[kStreamK];
  const float* column_scales;     // i8_column: the block's scales at column j0 (its group's, if grouped)
  const uint8_t* next[kStreamK];  // the same rows of the next block (prefetched), or nullptr
  size_t group_bytes;
  float scale[kStreamK];
  HWY_ALIGN float table[kStreamK][16];
  float a[kStreamK][kStreamMaxRows];
};

// Nibbles (one per lane, in the low 4 bits; higher bits ignored on 16-lane targets) as the
// f32 values of table (16 lanes: table[nibble]); elsewhere `signed_nibbles` holds the signed
// values already and only converts.
template <class VI>
HWY_INLINE VF nibble_lookup(VF table, VI lanes) {
#if HWY_TARGET <= HWY_AVX3
  return hn::TableLookupLanes(table, hn::Indices512<float>{lanes.raw});
#else
  (void)table;
  return hn::ConvertTo(DF(), lanes);
#endif
}

// The 2L columns of group g of row u, as f32 values in slot order.
template <Format F>
HWY_INLINE void load_group(const BlockRows& x, size_t u, size_t g, const VF* cs, VF qtable, VF& b0, VF& b1) {
  const DF d;
  const size_t lanes = hn::Lanes(d);
  if constexpr (F == Format::f32) {
    const float* p = reinterpret_cast<const float*>(x.row[u]) + g * 2 * lanes;
    b0 = hn::LoadU(d, p);
    b1 = hn::LoadU(d, p + lanes);
  } else if constexpr (F == Format::bf16) {
    const hn::Rebind<uint16_t, DF> d16;
    const hn::RebindToUnsigned<DF> du;
    const uint16_t* p = reinterpret_cast<const uint16_t*>(x.row[u]) + g * 2 * lanes;
    b0 = hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, p))));
    b1 = hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, p + lanes))));
  } else if constexpr (F == Format::i8_column || F == Format::i8_row) {
    const hn::Rebind<int8_t, DF> d8;
    const hn::RebindToSigned<DF> di;
    const int8_t* p = reinterpret_cast<const int8_t*>(x.row[u]) + g * 2 * lanes;
    const VF q0 = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, p)));
    const VF q1 = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, p + lanes)));
    const VF s0 = F == Format::i8_column ? cs[0] : hn::Set(d, x.scale[u]);
    const VF s1 = F == Format::i8_column ? cs[1] : s0;
    b0 = hn::Mul(q0, s0);
    b1 = hn::Mul(q1, s1);
  } else {
    const int8_t* p = reinterpret_cast<const int8_t*>(x.row[u]) + g * lanes;
    const hn::RebindToSigned<DF> di;
    const auto bytes = hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, DF>(), p));
#if HWY_TARGET <= HWY_AVX3
    const VF table = F == Format::i4_row ? hn::Load(d, x.table[u]) : qtable;
    b0 = nibble_lookup(table, bytes);
    b1 = nibble_lookup(table, hn::ShiftRight<4>(bytes));
    if constexpr (F == Format::i4_column) b0 = hn::Mul(b0, cs[0]), b1 = hn::Mul(b1, cs[1]);
#else
    const VF lo = nibble_lookup(qtable, hn::ShiftRight<28>(hn::ShiftLeft<28>(bytes)));
    const VF hi = nibble_lookup(qtable, hn::ShiftRight<4>(bytes));  // the byte's sign is the nibble's
    const VF s0 = F == Format::i4_column ? cs[0] : hn::Set(d, x.scale[u]);
    const VF s1 = F == Format::i4_column ? cs[1] : s0;
    b0 = hn::Mul(lo, s0);
    b1 = hn::Mul(hi, s1);
#endif
  }
}

// Prefetches the lines [from, to) of the block's rows (`range` bytes each), `ahead` bytes
// further along each row (past the range's end: in the same row of the next block).
inline void prefetch_ahead(const BlockRows& x, size_t u0, size_t kb, size_t from, size_t to, size_t ahead,
                           size_t range) {
  for (size_t at = from; at < to; at += 64) {
    for (size_t u = u0; u < u0 + kb; ++u) {
      if (at + ahead < range) hwy::Prefetch(x.row[u] + at + ahead);
      else if (x.next[u] != nullptr) hwy::Prefetch(x.next[u] + at + ahead - range);
    }
  }
}

// Rows r0 … r0+MR−1 of group g continue their chains over terms u0 … u0+KB−1 of the block.
template <Format F, size_t MR, size_t KB>
HWY_INLINE void block_pass(const BlockRows& x, size_t u0, size_t r0, size_t g, const VF* cs, VF qtable,
                           float* acc, size_t ld) {
  const DF d;
  const size_t lanes = hn::Lanes(d);
  float* base = acc + r0 * ld + g * 2 * lanes;
  VF c0[MR], c1[MR];
  for (size_t r = 0; r < MR; ++r) c0[r] = hn::Load(d, base + r * ld), c1[r] = hn::Load(d, base + r * ld + lanes);
  for (size_t u = u0; u < u0 + KB; ++u) {
    VF b0, b1;
    load_group<F>(x, u, g, cs, qtable, b0, b1);
    for (size_t r = 0; r < MR; ++r) {
      const VF av = hn::Set(d, x.a[u][r0 + r]);
      c0[r] = hn::MulAdd(av, b0, c0[r]);
      c1[r] = hn::MulAdd(av, b1, c1[r]);
    }
  }
  for (size_t r = 0; r < MR; ++r) hn::Store(c0[r], d, base + r * ld), hn::Store(c1[r], d, base + r * ld + lanes);
}

// Every group of the range and every row of C over terms u0 … u0+KB−1 of the block.
template <Format F, size_t KB>
HWY_NOINLINE void block_all(const stream::Job& job, const BlockRows& x, size_t u0, size_t groups, VF qtable) {
  const DF d;
  const size_t lanes = hn::Lanes(d), m = job.s->m;
  const float* column_scales = F == Format::i8_column ? x.column_scales : job.scales;
  const size_t range = groups * x.group_bytes;
  for (size_t g = 0; g < groups; ++g) {
    const size_t from = (g * x.group_bytes + 63) / 64 * 64, to = (g + 1) * x.group_bytes;
    if constexpr (F == Format::f32) {
      prefetch_ahead(x, u0, KB, from, to, std::min(kF32AheadBytes, range), range);
    } else {  // the next block's rows at the same columns
      for (size_t at = from; at < to; at += 64) {
        for (size_t u = 0; u < KB; ++u) {
          if (x.next[u0 + u] != nullptr) hwy::Prefetch(x.next[u0 + u] + at);
        }
      }
    }
    VF cs[2] = {hn::Zero(d), hn::Zero(d)};
    if constexpr (F == Format::i8_column || F == Format::i4_column) {
      cs[0] = hn::LoadU(d, column_scales + g * 2 * lanes);
      cs[1] = hn::LoadU(d, column_scales + g * 2 * lanes + lanes);
    }
    for (size_t r0 = 0; r0 < m; r0 += kRowGroup) {
      switch (std::min(kRowGroup, m - r0)) {
        case 1: block_pass<F, 1, KB>(x, u0, r0, g, cs, qtable, job.acc, job.ld); break;
        case 2: block_pass<F, 2, KB>(x, u0, r0, g, cs, qtable, job.acc, job.ld); break;
        case 3: block_pass<F, 3, KB>(x, u0, r0, g, cs, qtable, job.acc, job.ld); break;
        default: block_pass<F, 4, KB>(x, u0, r0, g, cs, qtable, job.acc, job.ld); break;
      }
    }
  }
}

// The rows of B, scales and A terms of block t0 (kb terms).
inline void fill_block(const stream::Job& job, Format format, size_t t0, size_t kb, BlockRows& x) {
  const ContractionShape& s = *job.s;
  const BSource& b = *job.b;
  const size_t width = format == Format::f32 ? 4 : format == Format::bf16 ? 2 : 1;
  const auto* bytes = static_cast<const uint8_t*>(b.data);
  const bool nibbles = format == Format::i4_column || format == Format::i4_row;
  x.group_bytes = nibbles ? hn::Lanes(DF()) : 2 * hn::Lanes(DF()) * width;
  for (size_t u = 0; u < kb; ++u) {
    const size_t k = s.k_first + (t0 + u) * s.k_step, element = b.first + k * b.ldb + job.j0;
    x.row[u] = nibbles ? bytes + element / 2 : bytes + element * width;
    x.next[u] = nullptr;
    if (t0 + kStreamK + u < s.terms) {
      const size_t next = element + kStreamK * s.k_step * b.ldb;
      x.next[u] = nibbles ? bytes + next / 2 : bytes + next * width;
    }
    x.scale[u] = format == Format::i8_row || format == Format::i4_row ? b.scales[k] : 0.0f;
    if (format == Format::i4_row) {
      for (int n = 0; n < 16; ++n) x.table[u][n] = static_cast<float>(n < 8 ? n : n - 16) * x.scale[u];
    }
    for (size_t r = 0; r < s.m; ++r) x.a[u][r] = job.a[r * s.lda + k * s.a_col];
  }
  // One group per block (stream_applies), so one scale row.
  x.column_scales = format == Format::i8_column ? b.scale_row(s.k_first + t0 * s.k_step) + job.j0 : nullptr;
}

// int4 over K: the column scales of `row` (at column j0) into job.scales, de-interleaved like the
// accumulators, for the range's `done` columns.
inline void deinterleave_scales(const stream::Job& job, const float* row, size_t done) {
  const DF d;
  const size_t lanes = hn::Lanes(d);
  const float* scales = row + job.j0;
  for (size_t g = 0; g < done; g += 2 * lanes) {  // slot i: column 2i (even), slot L + i: column 2i + 1
    const VF lo = hn::LoadU(d, scales + g), hi = hn::LoadU(d, scales + g + lanes);
    hn::Store(hn::ConcatEven(d, hi, lo), d, job.scales + g);
    hn::Store(hn::ConcatOdd(d, hi, lo), d, job.scales + g + lanes);
  }
}

template <Format F>
void stream_blocks(const stream::Job& job, size_t groups) {
  const DF d;
  HWY_ALIGN float nibbles[16];
  for (int n = 0; n < 16; ++n) nibbles[n] = static_cast<float>(n < 8 ? n : n - 16);
  const VF qtable = hn::Load(d, nibbles);  // f32(q) by nibble (16-lane targets)
  BlockRows x;
  const float* scale_row = nullptr;  // int4 over K: the row job.scales holds
  for (size_t t0 = 0; t0 < job.s->terms; t0 += kStreamK) {
    const size_t kb = std::min(kStreamK, job.s->terms - t0);
    fill_block(job, F, t0, kb, x);
    if constexpr (F == Format::i4_column) {
      const float* row = job.b->scale_row(job.s->k_first + t0 * job.s->k_step);
      if (row != scale_row) deinterleave_scales(job, row, groups * 2 * hn::Lanes(d)), scale_row = row;
    }
    if (kb == kStreamK) {
      block_all<F, kStreamK>(job, x, 0, groups, qtable);
    } else {
      for (size_t u = 0; u < kb; ++u) block_all<F, 1>(job, x, u, groups, qtable);
    }
  }
}

// C's columns of the range from the accumulators (slot order: int4 interleaves here).
inline void write_c(const stream::Job& job, size_t done) {
  const ContractionShape& s = *job.s;
  const size_t lanes = hn::Lanes(DF());
  const bool nibbles = job.format == Format::i4_column || job.format == Format::i4_row;
  for (size_t r = 0; r < s.m; ++r) {
    float* out = job.c + r * s.n + job.j0;
    const float* acc = job.acc + r * job.ld;
    if (!nibbles) {
      std::memcpy(out, acc, done * sizeof(float));
      continue;
    }
    for (size_t g = 0; g < done; g += 2 * lanes) {
      for (size_t i = 0; i < lanes; ++i) out[g + 2 * i] = acc[g + i], out[g + 2 * i + 1] = acc[g + lanes + i];
    }
  }
}
#endif  // PRESK_HWY_FMA

// Columns j0 … j0 + done − 1 of the job, done a multiple of the group width (0 on targets
// without FMA, which leave everything to the scalar loop); returns done.
size_t stream_range_simd(const stream::Job& job) {
#if PRESK_HWY_FMA
  const size_t lanes = hn::Lanes(DF()), groups = job.cols / (2 * lanes), done = groups * 2 * lanes;
  if (groups == 0) return 0;
  for (size_t r = 0; r < job.s->m; ++r) std::fill(job.acc + r * job.ld, job.acc + r * job.ld + done, 0.0f);
  switch (job.format) {
    case Format::f32: stream_blocks<Format::f32>(job, groups); break;
    case Format::bf16: stream_blocks<Format::bf16>(job, groups); break;
    case Format::i8_column: stream_blocks<Format::i8_column>(job, groups); break;
    case Format::i8_row: stream_blocks<Format::i8_row>(job, groups); break;
    case Format::i4_column: stream_blocks<Format::i4_column>(job, groups); break;
    case Format::i4_row: stream_blocks<Format::i4_row>(job, groups); break;
  }
  write_c(job, done);
  return done;
#else
  (void)job;
  return 0;
#endif
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace presk::exec::native {

HWY_EXPORT(stream_range_simd);

namespace {

stream::Format format_of(const BSource& b) {
  switch (b.kind) {
    case BSource::Kind::bf16: return stream::Format::bf16;
    case BSource::Kind::i8: return b.scale_per_column ? stream::Format::i8_column : stream::Format::i8_row;
    case BSource::Kind::i4: return b.scale_per_column ? stream::Format::i4_column : stream::Format::i4_row;
    default: return stream::Format::f32;
  }
}

// A growing 64-byte-aligned buffer, one per thread (the accumulators, the int4 scales).
struct Scratch {
  hwy::AlignedFreeUniquePtr<float[]> data;
  size_t size = 0;
  float* get(size_t count) {
    if (count > size) data = hwy::AllocateAligned<float>(count), size = count;
    return data.get();
  }
};

// The definition on columns [j1, j0 + cols) of the job: k outer, so B is read row by row.
void stream_range_scalar(const stream::Job& job, size_t j1) {
  const ContractionShape& s = *job.s;
  const size_t end = job.j0 + job.cols;
  for (size_t r = 0; r < s.m; ++r) std::fill(job.c + r * s.n + j1, job.c + r * s.n + end, 0.0f);
  for (size_t t = 0; t < s.terms; ++t) {
    const size_t k = s.k_first + t * s.k_step;
    for (size_t j = j1; j < end; ++j) {
      const float bk = static_cast<float>(job.b->value(k, j));
      for (size_t r = 0; r < s.m; ++r) job.c[r * s.n + j] = std::fma(job.a[r * s.lda + k * s.a_col], bk, job.c[r * s.n + j]);
    }
  }
}

}  // namespace

bool stream_applies(const ContractionShape& shape, const BSource& b) {
  if (shape.m < 1 || shape.m > kStreamMaxRows || shape.n < 64 || b.ldn != 1) return false;
  // Group scales: over K with every block of kStreamK terms inside one group (the file's head);
  // over N, or groups that blocks would straddle, take the panel path (panel.cpp).
  if (b.group != 0 && (!b.scale_per_column || shape.k_step != 1 || b.group % stream::kBlockTerms != 0 ||
                       shape.k_first % stream::kBlockTerms != 0)) {
    return false;
  }
  switch (b.kind) {
    case BSource::Kind::f32:
    case BSource::Kind::bf16:
    case BSource::Kind::i8: return true;
    case BSource::Kind::i4: return b.first % 2 == 0 && b.ldb % 2 == 0;  // rows start on a byte
    case BSource::Kind::f64: return false;
  }
  return false;
}

void contract_stream(const ContractionShape& shape, const float* a, const BSource& b, float* c, int threads,
                     bool force_scalar) {
  // Contiguous column ranges, 64-column aligned, at least 256 columns each.
  const size_t most = std::max<size_t>(1, shape.n / 256);
  const size_t parts = std::min<size_t>(std::max(threads, 1), most);
  const size_t width = ((shape.n + parts - 1) / parts + 63) / 64 * 64;
  const size_t ranges = (shape.n + width - 1) / width;
  for_each_task(ranges, threads, [&](size_t range) {
    thread_local Scratch accumulators, scales;
    stream::Job job;
    job.s = &shape, job.a = a, job.b = &b, job.c = c, job.format = format_of(b);
    job.j0 = range * width;
    job.cols = std::min(width, shape.n - job.j0);
    job.ld = (job.cols + 63) / 64 * 64;
    job.acc = accumulators.get(shape.m * job.ld);
    job.scales = scales.get(job.ld);
    const size_t done = force_scalar ? 0 : HWY_DYNAMIC_DISPATCH(stream_range_simd)(job);
    if (done < job.cols) stream_range_scalar(job, job.j0 + done);
  });
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
