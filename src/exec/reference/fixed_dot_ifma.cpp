// fixed_dot_ifma.h: each row's W·U summed in columns of 52-bit partial products (the low and
// high halves of digit c times W land in columns c and c + 1), flushed into the rows' 5-limb
// sums before a column can overflow; positive and negative weights apart, then the 2^192 that
// U adds to each ±X taken out again: Σ ±W·U − 2^192·Σ ±W = Σ ±W·(±X).
#include "exec/reference/fixed_dot_ifma.h"

#include <immintrin.h>

#include <algorithm>

#include "exec/reference/limbs.h"

namespace presk::reference {

bool has_ifma() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
  return yes;
}

namespace {

constexpr int kRows = FixedRows::kGroup;
// Entries a chunk: each column of a half gets one product half (< 2^52) an entry, so 2^11
// entries keep every column below 2^63.
constexpr int64_t kChunk = 2048;

// sum (5 limbs, two's complement) ± v·2^shift, v < 2^64, shift ≤ 256.
void add_at(uint64_t* sum, uint64_t v, int shift, bool negative) {
  uint64_t part[5] = {};
  const int q = shift / 64, s = shift % 64;
  part[q] = v << s;
  if (s != 0 && q + 1 < 5) part[q + 1] = v >> (64 - s);
  unsigned char c = 0;
  for (int i = 0; i < 5; ++i) {
    unsigned long long r = 0;
    c = negative ? _subborrow_u64(c, sum[i], part[i], &r) : _addcarry_u64(c, sum[i], part[i], &r);
    sum[i] = r;
  }
}

// columns[h][c][j]: for row j, Σ over [e, end) of the low (h = 0) or high (h = 1) 52 bits of
// digit c × W, two entries at a time into two sets (latency), added together at the end.
__attribute__((target("avx512f,avx512ifma"))) void columns(const uint64_t* digits, const BinadeEntry* e,
                                                           const BinadeEntry* end, uint64_t (*out)[4][kRows]) {
  __m512i lo[2][4], hi[2][4];
  for (int u = 0; u < 2; ++u) {
    for (int c = 0; c < 4; ++c) lo[u][c] = hi[u][c] = _mm512_setzero_si512();
  }
  for (; e != end; ++e) {
    const int u = static_cast<int>((end - e) & 1);  // two sets, entry by entry in turn
    const uint64_t* d = digits + e->k * 4 * kRows;
    const __m512i w = _mm512_set1_epi64(static_cast<long long>(e->w));
    for (int c = 0; c < 4; ++c) {
      const __m512i x = _mm512_loadu_si512(d + c * kRows);
      lo[u][c] = _mm512_madd52lo_epu64(lo[u][c], x, w);
      hi[u][c] = _mm512_madd52hi_epu64(hi[u][c], x, w);
    }
  }
  for (int c = 0; c < 4; ++c) {
    _mm512_storeu_si512(out[0][c], _mm512_add_epi64(lo[0][c], lo[1][c]));
    _mm512_storeu_si512(out[1][c], _mm512_add_epi64(hi[0][c], hi[1][c]));
  }
}

// The columns of row j as one number, sum (5 limbs) = Σ_c out[0][c][j]·2^(52c) +
// out[1][c][j]·2^(52(c + 1)) (< 2^272: it wraps to 5 limbs, as every sum here does).
void gather(const uint64_t (*out)[4][kRows], int j, uint64_t* sum) {
  limbs::Wide limb[6] = {};
  for (int h = 0; h < 2; ++h) {
    for (int c = 0; c < 4; ++c) {
      const uint64_t v = out[h][c][j];
      const int offset = 52 * (c + h), q = offset / 64, r = offset % 64;
      limb[q] += static_cast<limbs::Wide>(static_cast<uint64_t>(v << r));
      if (r != 0) limb[q + 1] += v >> (64 - r);
    }
  }
  for (int i = 0; i < 5; ++i) {  // carry each limb's excess into the next
    sum[i] = static_cast<uint64_t>(limb[i]);
    limb[i + 1] += limb[i] >> 64;
  }
}

// sum ± v, both 5 limbs (two's complement).
void add5(uint64_t* sum, const uint64_t* v, bool negative) {
  unsigned char c = 0;
  for (int i = 0; i < 5; ++i) {
    unsigned long long r = 0;
    c = negative ? _subborrow_u64(c, sum[i], v[i], &r) : _addcarry_u64(c, sum[i], v[i], &r);
    sum[i] = r;
  }
}

// Each row's sum ± Σ W·U over [e, end), a chunk at a time.
void add_products(const uint64_t* digits, const BinadeEntry* e, const BinadeEntry* end, bool negative,
                  std::array<uint64_t, 5>* lanes) {
  uint64_t out[2][4][kRows];
  for (; e != end;) {
    const BinadeEntry* stop = e + std::min<int64_t>(kChunk, end - e);
    columns(digits, e, stop, out);
    for (int j = 0; j < kRows; ++j) {
      uint64_t value[5];
      gather(out, j, value);
      add5(lanes[j].data(), value, negative);
    }
    e = stop;
  }
}

}  // namespace

void ifma_bucket_sums(const uint64_t* digits, const BinadeEntry* e, const BinadeEntry* split,
                      const BinadeEntry* end, std::array<uint64_t, 5>* lanes) {
  for (int j = 0; j < kRows; ++j) lanes[j].fill(0);
  add_products(digits, e, split, false, lanes);
  add_products(digits, split, end, true, lanes);
  limbs::Wide positive = 0, negative = 0;  // Σ W of each part, < 2^(52 + 14)
  for (const BinadeEntry* p = e; p != end; ++p) (p < split ? positive : negative) += p->w;
  uint64_t shift[5] = {0, 0, 0, 0, 0};  // 2^192·(Σ W⁺ − Σ W⁻), taken from each row's sum
  add_at(shift, static_cast<uint64_t>(positive), 192, false);
  add_at(shift, static_cast<uint64_t>(positive >> 64), 256, false);
  add_at(shift, static_cast<uint64_t>(negative), 192, true);
  add_at(shift, static_cast<uint64_t>(negative >> 64), 256, true);
  for (int j = 0; j < kRows; ++j) add5(lanes[j].data(), shift, true);
}

}  // namespace presk::reference
