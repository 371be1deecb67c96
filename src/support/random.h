// presk's seeded, counter-based, platform-independent generator. Every random number presk
// draws (a fresh parameter, a synthesized input) is a pure function of (seed, stream, index),
// so the reference interpreter and the native executor synthesize bit-identical values, in any
// order and on any number of threads. The definition (docs/reference.md, "The generator"):
//   stream  = FNV-1a-64 of the stream's name (a parameter path, or "input.<argument>")
//   word(seed, stream, i) = mix(mix(seed ⊕ mix(stream)) + (i + 1)·0x9E3779B97F4A7C15)  (mod 2⁶⁴)
//   mix     = the splitmix64 finalizer
//   uniform01(w) = ⌊w / 2¹¹⌋ · 2⁻⁵³ ∈ [0, 1), exact
//   normal(σ) of element i uses words 2i and 2i+1: u₁ = (⌊w₂ᵢ/2¹¹⌋ + 1)·2⁻⁵³ ∈ (0, 1],
//     u₂ = uniform01(w₂ᵢ₊₁); z = σ·√(−2 ln u₁)·cos(2π u₂), each step correctly rounded by MPFR
//     at 64 bits, the result rounded once to binary64 (no libm anywhere)
//   uniform(a, b) of element i: a + (b − a)·uniform01(wᵢ) in binary64, each step rounded to
//     nearest (no fma)
//   token(V) of element i: wᵢ mod V
#pragma once

#include <cstdint>
#include <string_view>

namespace presk::random {

uint64_t stream_of(std::string_view name);  // FNV-1a-64 of the name
// splitmix64's finalizer, a bijection of 64-bit words (inline: masks call it per element)
inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t word(uint64_t seed, uint64_t stream, uint64_t index);

double uniform01(uint64_t w);                                    // [0, 1), a multiple of 2⁻⁵³
double uniform(uint64_t seed, uint64_t stream, uint64_t index, double low, double high);
double normal(uint64_t seed, uint64_t stream, uint64_t index, double sigma);
int64_t token(uint64_t seed, uint64_t stream, uint64_t index, int64_t range);  // [0, range)

}  // namespace presk::random
