// convert.h's SIMD loops against numeric.h's scalar definitions: round_to_bf16 on all 2^32 f32
// inputs (NaNs included) on the dispatched target; round_to_bf16 and round_through_bf16 (the
// same per-lane code) on every bf16 boundary pattern and 10^6 random inputs on every compiled
// target this CPU runs; widen_bf16 on all 2^16 patterns; tails and unaligned starts.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "exec/native/convert.h"
#include "exec/native/numeric.h"

namespace presk::exec::native {
namespace {

// The first index where round_to_bf16 differs from to_bf16 on the inputs bits = first + i,
// i < n (n if none).
size_t first_mismatch(uint32_t first, size_t n, std::vector<float>& in, std::vector<uint16_t>& out) {
  for (size_t i = 0; i < n; ++i) in[i] = std::bit_cast<float>(static_cast<uint32_t>(first + i));
  round_to_bf16(in.data(), out.data(), n);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += out[i] != to_bf16(in[i]);
  if (bad == 0) return n;
  for (size_t i = 0; i < n; ++i) {
    if (out[i] != to_bf16(in[i])) return i;
  }
  return n;
}

TEST(Convert, RoundsEveryF32LikeTheScalarDefinition) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<float> in(kChunk);
  std::vector<uint16_t> out(kChunk);
#ifdef NDEBUG
  constexpr uint64_t kStride = kChunk;  // every input (about 10 s)
#else
  constexpr uint64_t kStride = kChunk * 61;  // unoptimized builds: every 61st block of 2^20
#endif
  for (uint64_t first = 0; first < (uint64_t{1} << 32); first += kStride) {
    const size_t at = first_mismatch(static_cast<uint32_t>(first), kChunk, in, out);
    ASSERT_EQ(at, kChunk) << std::hex << "input bits " << first + at << ": got " << out[at] << ", want "
                          << to_bf16(in[at]);
  }
}

// Edge patterns and random ones on each target Highway compiled and this CPU runs.
TEST(Convert, EveryTargetRoundsAndWidensTheSame) {
  std::vector<float> in;
  for (uint32_t high = 0; high < 65536; ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      in.push_back(std::bit_cast<float>(high << 16 | low));
    }
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 1'000'000; ++i) in.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  std::vector<uint16_t> patterns(65536);
  for (size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<uint16_t>(i);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    std::vector<uint16_t> out(in.size());
    std::vector<float> through(in.size()), wide(patterns.size());
    round_to_bf16(in.data(), out.data(), in.size());
    round_through_bf16(in.data(), through.data(), in.size());
    widen_bf16(patterns.data(), wide.data(), patterns.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const uint32_t bits = std::bit_cast<uint32_t>(in[i]);
      ASSERT_EQ(out[i], to_bf16(in[i])) << hwy::TargetName(target) << std::hex << " input " << bits;
      ASSERT_EQ(std::bit_cast<uint32_t>(through[i]), std::bit_cast<uint32_t>(round_bf16(in[i])))
          << hwy::TargetName(target) << std::hex << " input " << bits;
    }
    for (size_t i = 0; i < patterns.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(from_bf16(patterns[i])))
          << hwy::TargetName(target) << std::hex << " pattern " << i;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Lengths 0 … 70 from unaligned starts: the vector body, the scalar tail, no write past n,
// and round_through_bf16 in place.
TEST(Convert, TailsAndOffsets) {
  std::mt19937 rng(7);
  for (size_t offset = 0; offset < 4; ++offset) {
    for (size_t n = 0; n <= 70; ++n) {
      std::vector<float> in(offset + n + 1);
      for (float& x : in) x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
      std::vector<uint16_t> out(offset + n + 1, 0xabcd);
      round_to_bf16(in.data() + offset, out.data() + offset, n);
      std::vector<float> wide(offset + n + 1, 7.0f);
      widen_bf16(out.data() + offset, wide.data() + offset, n);
      std::vector<float> same = in;
      round_through_bf16(same.data() + offset, same.data() + offset, n);
      for (size_t i = 0; i < n; ++i) {
        const float x = in[offset + i];
        ASSERT_EQ(out[offset + i], to_bf16(x)) << n << " " << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(wide[offset + i]), static_cast<uint32_t>(to_bf16(x)) << 16);
        ASSERT_EQ(std::bit_cast<uint32_t>(same[offset + i]), static_cast<uint32_t>(to_bf16(x)) << 16);
      }
      EXPECT_EQ(out[offset + n], 0xabcd);
      EXPECT_EQ(wide[offset + n], 7.0f);
      EXPECT_EQ(std::bit_cast<uint32_t>(same[offset + n]), std::bit_cast<uint32_t>(in[offset + n]));
    }
  }
}

}  // namespace
}  // namespace presk::exec::native
