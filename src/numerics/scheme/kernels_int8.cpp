// int8 × int8 and u8 × int8 dot products in 32-bit integers (kernels.h): the scalar chain is the
// definition; the Highway kernel (dynamic dispatch over every compiled target) widens bytes to
// 16-bit lanes and multiplies them in pairs into 32-bit lanes. Integer sums modulo 2^32 are associative, so every target
// gives the scalar chain's bits, wrapped or not.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/scheme/kernels_int8.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "numerics/scheme/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace presk::numerics::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Bytes widened to 16-bit lanes, multiplied in pairs into 32-bit lanes (vpmaddwd on x86), the
// lanes' sums added at the end: every addition is modulo 2^32, as the scalar chain's.
template <typename TA>
int32_t dot_lanes(const TA* a, const int8_t* b, size_t n) {
#if HWY_TARGET == HWY_SCALAR  // one lane: no pairs to multiply
  uint32_t chain = 0;
  for (size_t i = 0; i < n; ++i) chain += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]));
  return static_cast<int32_t>(chain);
#else
  const hn::ScalableTag<int32_t> d32;
  const hn::Repartition<int16_t, decltype(d32)> d16;
  const hn::Rebind<TA, decltype(d16)> da;
  const hn::Rebind<int8_t, decltype(d16)> db;
  const size_t lanes = hn::Lanes(d16);
  auto sum0 = hn::Zero(d32);
  auto sum1 = hn::Zero(d32);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    sum0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(da, a + i)), hn::PromoteTo(d16, hn::LoadU(db, b + i)),
                                         sum0, sum1);
  }
  uint32_t sum = static_cast<uint32_t>(hn::GetLane(hn::SumOfLanes(d32, hn::RearrangeToOddPlusEven(sum0, sum1))));
  for (; i < n; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]));
  return static_cast<int32_t>(sum);
#endif
}

int32_t dot_i8_simd(const int8_t* a, const int8_t* b, size_t n) { return dot_lanes<int8_t>(a, b, n); }
int32_t dot_u8i8_simd(const uint8_t* a, const int8_t* b, size_t n) { return dot_lanes<uint8_t>(a, b, n); }
int64_t dot_target_here() { return HWY_TARGET; }

}  // namespace presk::numerics::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <vector>

#include "support/diagnostics.h"

namespace presk::numerics {

HWY_EXPORT(dot_i8_simd);
HWY_EXPORT(dot_u8i8_simd);
HWY_EXPORT(dot_target_here);

namespace {

__extension__ typedef __int128 Int128;

// The scalar chain: each product added in turn, modulo 2^32.
template <typename TA>
int32_t dot_scalar(const TA* a, const int8_t* b, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]));
  return static_cast<int32_t>(sum);
}

}  // namespace

int32_t dot_i8(const int8_t* a, const int8_t* b, size_t n, bool simd) {
  return simd ? HWY_DYNAMIC_DISPATCH(dot_i8_simd)(a, b, n) : dot_scalar(a, b, n);
}

int32_t dot_u8i8(const uint8_t* a, const int8_t* b, size_t n, bool simd) {
  return simd ? HWY_DYNAMIC_DISPATCH(dot_u8i8_simd)(a, b, n) : dot_scalar(a, b, n);
}

int64_t dot_target() { return HWY_DYNAMIC_DISPATCH(dot_target_here)(); }

namespace {

// Σ a_i·b_i, i ascending, each partial sum wrapped or saturated to `bits` (held in 128 bits, so
// that wrapping at 64 is as defined as at any other width).
template <typename T>
int64_t accumulated(const T* a, const T* b, size_t n, int bits, Overflow overflow) {
  internal_assert(bits >= 1 && bits <= 64);
  const Int128 modulus = static_cast<Int128>(1) << bits;
  const Int128 high = modulus / 2 - 1, low = -(modulus / 2);
  Int128 sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += static_cast<Int128>(a[i]) * b[i];
    if (overflow == Overflow::saturate) {
      sum = std::clamp(sum, low, high);
    } else {
      sum = ((sum - low) % modulus + modulus) % modulus + low;
    }
  }
  return static_cast<int64_t>(sum);
}

}  // namespace

int64_t dot_i8_accumulated(const int8_t* a, const int8_t* b, size_t n, int bits, Overflow overflow) {
  return accumulated(a, b, n, bits, overflow);
}

int64_t dot_accumulated(const int32_t* a, const int32_t* b, size_t n, int bits, Overflow overflow) {
  return accumulated(a, b, n, bits, overflow);
}

int64_t dot_codes(const uint8_t* a, bool a_unsigned, const int8_t* b, size_t n, int bits, Overflow overflow, bool simd,
                  bool* overflowed) {
  internal_assert(bits >= 1 && bits <= 64);
  // 65536 products of at most 255·128 sum to less than 2^31: each such run's 32-bit sum is exact.
  constexpr size_t kExactRun = 65536;
  int64_t exact = 0;
  for (size_t start = 0; start < n; start += kExactRun) {
    const size_t len = std::min(kExactRun, n - start);
    exact += a_unsigned ? dot_u8i8(a + start, b + start, len, simd)
                        : dot_i8(reinterpret_cast<const int8_t*>(a) + start, b + start, len, simd);
  }
  int64_t result = exact;
  const Int128 modulus = static_cast<Int128>(1) << bits, high = modulus / 2 - 1;
  if (overflow == Overflow::wrap) {
    result = static_cast<int64_t>(((static_cast<Int128>(exact) + modulus / 2) % modulus + modulus) % modulus - modulus / 2);
  } else if (static_cast<Int128>(n) * (a_unsigned ? 255 : 128) * 128 > high) {
    if (a_unsigned) {
      std::vector<int32_t> wide_a(a, a + n), wide_b(b, b + n);
      result = accumulated(wide_a.data(), wide_b.data(), n, bits, overflow);
    } else {
      result = accumulated(reinterpret_cast<const int8_t*>(a), b, n, bits, overflow);
    }
  }
  if (overflowed && result != exact) *overflowed = true;
  return result;
}

namespace {

// The step of word w as a power of two: word w's codes count s·2^−(shift·w).
int word_shift(Words words) { return words == Words::two_code16 ? 8 : 7; }

}  // namespace

double chip_dot(const CodesRow& a, const CodesColumn& w, size_t k, const Scheme& scheme, int bits, Overflow overflow,
                bool simd, bool* overflowed) {
  const size_t run = std::min(a.block, w.group);
  internal_assert(run > 0 && a.block % run == 0 && w.group % run == 0 && k % run == 0);
  const bool is_unsigned = scheme.scale.kind == Scale::Kind::unsigned_pow2;
  const int words = word_count(scheme.words);
  double y = 0;
  for (size_t start = 0; start < k; start += run) {
    const double s_a = a.scales[start / a.block];
    const double s_w = static_cast<double>(w.scales[start / w.group]);
    for (int word = 0; word < words; ++word) {
      const int64_t sum = dot_codes(a.words[word] + start, word == 0 && is_unsigned, w.codes + start, run, bits, overflow,
                                    simd, overflowed);
      y += std::ldexp(static_cast<double>(sum), -word_shift(scheme.words) * word) * s_a * s_w;
    }
  }
  return y;
}

namespace {

// A run's words dotted with int8 codes b, each word's sum in the accumulator (dot_codes), combined
// exactly: Σ_w dot_w·2^(step·(W−1−w)), W words each a 2^−step of the one before.
int64_t combined_words(const uint8_t* const* words, const Scheme& scheme, const int8_t* b, size_t n, int bits,
                       Overflow overflow, bool simd, bool* overflowed) {
  const bool is_unsigned = scheme.scale.kind == Scale::Kind::unsigned_pow2;
  const int count = word_count(scheme.words), step = word_shift(scheme.words);
  int64_t sum = 0;
  for (int w = 0; w < count; ++w) {
    const int64_t part = dot_codes(words[w], w == 0 && is_unsigned, b, n, bits, overflow, simd, overflowed);
    sum += part * (int64_t{1} << (step * (count - 1 - w)));
  }
  return sum;
}

}  // namespace

WordsDot dot_words(const NativeBlock& block, const Scheme& scheme, const int8_t* b, size_t n, bool simd) {
  const uint8_t* words[3] = {nullptr, nullptr, nullptr};
  for (size_t w = 0; w < block.words.size(); ++w) words[w] = block.words[w].data();
  return {combined_words(words, scheme, b, n, 32, Overflow::wrap, simd, nullptr),
          word_shift(scheme.words) * (word_count(scheme.words) - 1)};
}

double attention_dot(const CodesRow& a, const ScaledColumn& b, size_t k, const Scheme& scheme, int bits, Overflow overflow,
                     bool simd, bool* overflowed) {
  const size_t run = std::min(a.block, b.block);
  internal_assert(run > 0 && a.block % run == 0 && b.block % run == 0 && k % run == 0);
  const int shift = word_shift(scheme.words) * (word_count(scheme.words) - 1);
  double y = 0;
  for (size_t start = 0; start < k; start += run) {
    const uint8_t* words[3] = {nullptr, nullptr, nullptr};
    for (int w = 0; w < word_count(scheme.words); ++w) words[w] = a.words[w] + start;
    const int64_t sum = combined_words(words, scheme, b.codes + start, run, bits, overflow, simd, overflowed);
    const double scales = a.scales[start / a.block] * (b.scales ? b.scales[start / b.block] : 1.0);  // exact
    y += std::ldexp(static_cast<double>(sum), -shift) * scales;
  }
  return y;
}

}  // namespace presk::numerics
#endif  // HWY_ONCE
