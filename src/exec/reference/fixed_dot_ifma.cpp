// fixed_dot_ifma.h: each row's W·U summed in columns of 52-bit partial products (the low and
// high halves of digit products landing in columns c and c + 1), flushed into the rows' sums
// before a column can overflow; positive and negative W apart, then the 2^192 that U adds to
// each ±X taken out again: Σ ±W·U − 2^192·Σ ±W = Σ ±W·(±X). A weight in binades is one digit
// W < 2^52; an entry of a row of 3 limbs is four (W < 2^192).
#include "exec/reference/fixed_dot_ifma.h"

#include <immintrin.h>

#include <algorithm>

#include "exec/reference/limbs.h"
#include "support/diagnostics.h"

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

// sum ± v, both N limbs (two's complement).
template <int N>
void add_limbs(uint64_t* sum, const uint64_t* v, bool negative) {
  unsigned char c = 0;
  for (int i = 0; i < N; ++i) {
    unsigned long long r = 0;
    c = negative ? _subborrow_u64(c, sum[i], v[i], &r) : _addcarry_u64(c, sum[i], v[i], &r);
    sum[i] = r;
  }
}

// sum (N limbs, two's complement) ± v·2^shift mod 2^(64N), v < 2^64, shift < 64N.
template <int N>
void add_at(uint64_t* sum, uint64_t v, int shift, bool negative) {
  uint64_t part[N] = {};
  const int q = shift / 64, s = shift % 64;
  part[q] = v << s;
  if (s != 0 && q + 1 < N) part[q + 1] = v >> (64 - s);
  add_limbs<N>(sum, part, negative);
}

// sum (N limbs) ± 2^192·Σ_c digit_sums[c]·2^(52c): the 2^192 of each U, times Σ W.
template <int N, int C>
void add_offset(uint64_t* sum, const limbs::Wide* digit_sums, bool negative) {
  for (int c = 0; c < C; ++c) {
    add_at<N>(sum, static_cast<uint64_t>(digit_sums[c]), 192 + 52 * c, negative);
    add_at<N>(sum, static_cast<uint64_t>(digit_sums[c] >> 64), 256 + 52 * c, negative);
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
      add_limbs<5>(lanes[j].data(), value, negative);
    }
    e = stop;
  }
}

// An entry of a row of 3 limbs into one set of columns: lo[s − 2] (h = 0) and hi[s − 2] (h = 1)
// take the low and high halves of the digit products U_a·W_b with a + b = s, column s + h;
// left out: a + b < 2, and the low halves at a + b = 2 (lo[0] stays 0).
__attribute__((target("avx512f,avx512ifma"), always_inline)) inline void row_entry(const uint64_t* digits, const DigitEntry& e,
                                                                                  __m512i* lo, __m512i* hi) {
  const uint64_t* d = digits + e.k * 4 * kRows;
  __m512i u[4];
  for (int a = 0; a < 4; ++a) u[a] = _mm512_loadu_si512(d + a * kRows);
  for (int b = 0; b < 4; ++b) {
    const __m512i w = _mm512_set1_epi64(static_cast<long long>(e.digit[b]));
    for (int a = std::max(0, 2 - b); a < 4; ++a) {
      if (a + b > 2) lo[a + b - 2] = _mm512_madd52lo_epu64(lo[a + b - 2], u[a], w);
      hi[a + b - 2] = _mm512_madd52hi_epu64(hi[a + b - 2], u[a], w);
    }
  }
}

// Row j's signed digits total[t][j] ± Σ U·W over [e, end), position 52·(t + 2), t < 7: a
// chunk's columns summed two entries at a time into two sets (latency), then added position by
// position with their carries into 52-bit digits (vector shifts, eight rows at once). A
// position takes at most 7 halves (< 2^52) an entry, so 2^9 entries keep its sum and the carry
// below 2^64; a total changes by less than 2^52 a chunk, so it stays within int64_t for the
// 2^20 entries ifma_row_sums allows.
constexpr int64_t kRowChunk = 512;
__attribute__((target("avx512f,avx512ifma"))) void add_row_digits(const uint64_t* digits, const DigitEntry* e,
                                                                  const DigitEntry* end, bool negative, __m512i* total) {
  const __m512i mask = _mm512_set1_epi64((int64_t{1} << 52) - 1);
  while (e != end) {
    const DigitEntry* stop = e + std::min<int64_t>(kRowChunk, end - e);
    __m512i lo[2][5], hi[2][5];
    for (int u = 0; u < 2; ++u) {
      for (int c = 0; c < 5; ++c) lo[u][c] = hi[u][c] = _mm512_setzero_si512();
    }
    for (; stop - e >= 2; e += 2) {
      row_entry(digits, e[0], lo[0], hi[0]);
      row_entry(digits, e[1], lo[1], hi[1]);
    }
    if (e != stop) row_entry(digits, *e++, lo[0], hi[0]);
    __m512i carry = _mm512_setzero_si512();
    for (int t = 0; t < 7; ++t) {
      __m512i v = carry;
      if (t < 5) v = _mm512_add_epi64(v, _mm512_add_epi64(lo[0][t], lo[1][t]));
      if (t >= 1 && t <= 5) v = _mm512_add_epi64(v, _mm512_add_epi64(hi[0][t - 1], hi[1][t - 1]));
      const __m512i digit = _mm512_and_si512(v, mask);
      total[t] = negative ? _mm512_sub_epi64(total[t], digit) : _mm512_add_epi64(total[t], digit);
      carry = _mm512_maskz_srli_epi64(0xff, v, 52);  // (maskz: GCC 12 warns of srli's undefined source)
    }
  }
}

// out[t][j]: row j's Σ ±W·U over the positive and negative entries in signed digits at 52·(t + 2).
__attribute__((target("avx512f,avx512ifma"))) void row_digits(const uint64_t* digits, const DigitEntry* positive,
                                                              const DigitEntry* positive_end, const DigitEntry* negative,
                                                              const DigitEntry* negative_end, int64_t (*out)[kRows]) {
  __m512i total[7];
  for (int t = 0; t < 7; ++t) total[t] = _mm512_setzero_si512();
  add_row_digits(digits, positive, positive_end, false, total);
  add_row_digits(digits, negative, negative_end, true, total);
  for (int t = 0; t < 7; ++t) _mm512_storeu_si512(out[t], total[t]);
}

__extension__ typedef __int128 SignedWide;

// sum (7 limbs, two's complement, mod 2^448) = Σ_t digits[t][j]·2^(52(t + 2)), each signed.
void signed_gather(const int64_t (*digits)[kRows], int j, uint64_t* sum) {
  SignedWide limb[8] = {};  // each |·| < 2 · 2^126
  for (int t = 0; t < 7; ++t) {
    const int offset = 52 * (t + 2);
    limb[offset / 64] += static_cast<SignedWide>(digits[t][j]) << (offset % 64);
  }
  for (int i = 0; i < 7; ++i) {  // carry each limb's excess (signed) into the next
    sum[i] = static_cast<uint64_t>(limb[i]);
    limb[i + 1] += limb[i] >> 64;
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
  add_offset<5, 1>(shift, &positive, false);
  add_offset<5, 1>(shift, &negative, true);
  for (int j = 0; j < kRows; ++j) add_limbs<5>(lanes[j].data(), shift, true);
}

void ifma_row_sums(const uint64_t* digits, const DigitEntry* positive, const DigitEntry* positive_end,
                   const DigitEntry* negative, const DigitEntry* negative_end, std::array<uint64_t, 7>* lanes) {
  internal_assert(positive_end - positive < (int64_t{1} << 20) && negative_end - negative < (int64_t{1} << 20));
  int64_t signed_digits[7][kRows];
  row_digits(digits, positive, positive_end, negative, negative_end, signed_digits);
  for (int j = 0; j < kRows; ++j) signed_gather(signed_digits, j, lanes[j].data());
  limbs::Wide sums[2][4] = {};  // Σ W of each part, digit by digit (< 2^(52 + 63))
  for (const DigitEntry* p = positive; p != positive_end; ++p) {
    for (int c = 0; c < 4; ++c) sums[0][c] += p->digit[c];
  }
  for (const DigitEntry* p = negative; p != negative_end; ++p) {
    for (int c = 0; c < 4; ++c) sums[1][c] += p->digit[c];
  }
  uint64_t shift[7] = {};  // 2^192·(Σ W⁺ − Σ W⁻), taken from each row's sum
  add_offset<7, 4>(shift, sums[0], false);
  add_offset<7, 4>(shift, sums[1], true);
  for (int j = 0; j < kRows; ++j) add_limbs<7>(lanes[j].data(), shift, true);
}

}  // namespace presk::reference
