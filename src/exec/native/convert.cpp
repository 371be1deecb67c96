// f32 <-> bf16 over arrays (convert.h): per-target Highway code, dynamic dispatch. Every lane
// runs numeric.h's bit arithmetic: rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16, or
// (bits >> 16) | 0x40 for a NaN; widening is a 16-bit left shift. Tails use numeric.h itself.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exec/native/convert.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "exec/native/convert.h"
#include "exec/native/numeric.h"

HWY_BEFORE_NAMESPACE();
namespace presk::exec::native::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The f32 pattern whose upper 16 bits are to_bf16 of the lanes of x (lower bits: garbage).
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> rounded_high(DF df, hn::Vec<DF> x) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, x);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(hn::Add(bits, hn::Set(du, 0x7fffu)), lsb);
  // (bits & 0x7fffffff) > 0x7f800000: both sides non-negative, so a signed compare is exact.
  const auto magnitude = hn::And(hn::BitCast(di, bits), hn::Set(di, 0x7fffffff));
  const auto nan = hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7f800000)));
  (void)df;
  return hn::IfThenElse(nan, hn::Or(bits, hn::Set(du, 0x00400000u)), rounded);
}

void round_to_bf16_simd(const float* from, uint16_t* to, size_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto high = hn::ShiftRight<16>(rounded_high(df, hn::LoadU(df, from + i)));
    // high <= 0xffff, so the saturating demotion is exact.
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, high)), d16, to + i);
  }
  for (; i < n; ++i) to[i] = to_bf16(from[i]);
}

void widen_bf16_simd(const uint16_t* from, float* to, size_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto bits = hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, from + i)));
    hn::StoreU(hn::BitCast(df, bits), df, to + i);
  }
  for (; i < n; ++i) to[i] = from_bf16(from[i]);
}

void round_through_bf16_simd(const float* from, float* to, size_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t lanes = hn::Lanes(df);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto high = hn::And(rounded_high(df, hn::LoadU(df, from + i)), hn::Set(du, 0xffff0000u));
    hn::StoreU(hn::BitCast(df, high), df, to + i);
  }
  for (; i < n; ++i) to[i] = round_bf16(from[i]);
}

}  // namespace presk::exec::native::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace presk::exec::native {

HWY_EXPORT(round_to_bf16_simd);
HWY_EXPORT(widen_bf16_simd);
HWY_EXPORT(round_through_bf16_simd);

void round_to_bf16(const float* from, uint16_t* to, size_t n) {
  HWY_DYNAMIC_DISPATCH(round_to_bf16_simd)(from, to, n);
}

void widen_bf16(const uint16_t* from, float* to, size_t n) {
  HWY_DYNAMIC_DISPATCH(widen_bf16_simd)(from, to, n);
}

void round_through_bf16(const float* from, float* to, size_t n) {
  HWY_DYNAMIC_DISPATCH(round_through_bf16_simd)(from, to, n);
}

}  // namespace presk::exec::native
#endif  // HWY_ONCE
