// The generator of support/random.h. Normal deviates use MPFR at 64 bits so that no libm
// function (whose last bit differs between platforms) enters a synthesized value.
#include "support/random.h"

#include <mpfr.h>

#include "support/diagnostics.h"

namespace presk::random {

uint64_t stream_of(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t word(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t key = mix(seed ^ mix(stream));
  return mix(key + (index + 1) * 0x9E3779B97F4A7C15ull);
}

double uniform01(uint64_t w) { return static_cast<double>(w >> 11) * 0x1p-53; }

double uniform(uint64_t seed, uint64_t stream, uint64_t index, double low, double high) {
  double u = uniform01(word(seed, stream, index));
  double width = high - low;
  double scaled = width * u;
  return low + scaled;
}

double normal(uint64_t seed, uint64_t stream, uint64_t index, double sigma) {
  // u1 ∈ (0, 1] so that log(u1) is finite; both are exact binary64 numbers.
  double u1 = static_cast<double>((word(seed, stream, 2 * index) >> 11) + 1) * 0x1p-53;
  double u2 = uniform01(word(seed, stream, 2 * index + 1));
  mpfr_t radius, angle;
  mpfr_inits2(64, radius, angle, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(radius, u1, MPFR_RNDN);
  mpfr_log(radius, radius, MPFR_RNDN);       // ln u1 ≤ 0
  mpfr_mul_si(radius, radius, -2, MPFR_RNDN);  // exact
  mpfr_sqrt(radius, radius, MPFR_RNDN);
  mpfr_const_pi(angle, MPFR_RNDN);
  mpfr_mul_2ui(angle, angle, 1, MPFR_RNDN);  // exact
  mpfr_mul_d(angle, angle, u2, MPFR_RNDN);
  mpfr_cos(angle, angle, MPFR_RNDN);
  mpfr_mul(radius, radius, angle, MPFR_RNDN);
  mpfr_mul_d(radius, radius, sigma, MPFR_RNDN);
  double z = mpfr_get_d(radius, MPFR_RNDN);
  mpfr_clears(radius, angle, static_cast<mpfr_ptr>(nullptr));
  return z;
}

int64_t token(uint64_t seed, uint64_t stream, uint64_t index, int64_t range) {
  internal_assert(range > 0);
  return static_cast<int64_t>(word(seed, stream, index) % static_cast<uint64_t>(range));
}

}  // namespace presk::random
