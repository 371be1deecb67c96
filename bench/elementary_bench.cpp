// Times one call of exp and tanh at 128 bits, per way the reference can compute it
// (docs/reference.md "exp, log, tanh"): the fixed point (fixed_exp.h), Arb's arb_exp/arb_tanh
// at 152 bits (the Arb path's evaluation alone, without its rounding), MPFR's own, and
// correctly_rounded (ziv.h, what the interpreter calls); then a product of two such numbers,
// the two-limb fast path (arith_mpfr.h) against mpfr_mul. Inputs: 4096
// numbers uniform in (−4, 4) (GELU's and softmax's range), the median of 7 rounds, each in turn.
//   elementary_bench [BITS]     (default 128)
#include <arb.h>
#include <mpfr.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "exec/reference/arith_mpfr.h"
#include "exec/reference/fixed_exp.h"
#include "exec/reference/ziv.h"

using namespace presk::reference;

namespace {

constexpr int kInputs = 4096, kRounds = 7;

double nanoseconds_per_call(const std::function<void(int)>& call) {
  std::vector<double> rounds;
  for (int round = 0; round < kRounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kInputs; ++i) call(i);
    rounds.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kInputs);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[kRounds / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long bits = argc > 1 ? std::atol(argv[1]) : 128;
  MpfrBuffer x(kInputs, bits), r(1, bits);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 1);
  for (int i = 0; i < kInputs; ++i) {
    mpfr_urandomb(x.data() + i, state);
    mpfr_mul_ui(x.data() + i, x.data() + i, 8, MPFR_RNDN);
    mpfr_sub_ui(x.data() + i, x.data() + i, 4, MPFR_RNDN);
  }
  arb_t a, y;
  arb_init(a);
  arb_init(y);
  auto arb_input = [&](int i) {
    arf_set_mpfr(arb_midref(a), x.data() + i);
    mag_zero(arb_radref(a));
  };
  std::printf("ns per call at %ld bits (median of %d rounds of %d inputs in (-4, 4))\n", bits, kRounds, kInputs);
  std::printf("%-28s %8s %8s\n", "way", "exp", "tanh");
  const double fixed_exp = nanoseconds_per_call([&](int i) { exp_decided(r.data(), x.data() + i); });
  const double fixed_tanh = nanoseconds_per_call([&](int i) { tanh_decided(r.data(), x.data() + i); });
  std::printf("%-28s %8.1f %8.1f\n", "fixed point (fixed_exp.h)", fixed_exp, fixed_tanh);
  const double arb_e = nanoseconds_per_call([&](int i) { arb_input(i), arb_exp(y, a, bits + kZivExtraBits); });
  const double arb_t = nanoseconds_per_call([&](int i) { arb_input(i), arb_tanh(y, a, bits + kZivExtraBits); });
  std::printf("%-28s %8.1f %8.1f\n", "arb_exp/arb_tanh at +24 bits", arb_e, arb_t);
  const double mp_e = nanoseconds_per_call([&](int i) { mpfr_exp(r.data(), x.data() + i, MPFR_RNDN); });
  const double mp_t = nanoseconds_per_call([&](int i) { mpfr_tanh(r.data(), x.data() + i, MPFR_RNDN); });
  std::printf("%-28s %8.1f %8.1f\n", "mpfr_exp/mpfr_tanh", mp_e, mp_t);
  const double cr_e = nanoseconds_per_call([&](int i) { correctly_rounded(Elementary::Exp, r.data(), x.data() + i); });
  const double cr_t = nanoseconds_per_call([&](int i) { correctly_rounded(Elementary::Tanh, r.data(), x.data() + i); });
  std::printf("%-28s %8.1f %8.1f\n", "correctly_rounded (ziv.h)", cr_e, cr_t);
  std::printf("Arb / fixed point: exp %.2fx, tanh %.2fx\n", arb_e / fixed_exp, arb_t / fixed_tanh);
  auto next = [](int i) { return (i + 1) % kInputs; };
  const double fast_mul = nanoseconds_per_call([&](int i) { mul_two_limbs(r.data(), x.data() + i, x.data() + next(i)); });
  const double mpfr_mul_ns = nanoseconds_per_call([&](int i) { mpfr_mul(r.data(), x.data() + i, x.data() + next(i), MPFR_RNDN); });
  std::printf("%-28s %8s\n", "", "mul");
  std::printf("%-28s %8.1f\n", "two limbs (arith_mpfr.h)", fast_mul);
  std::printf("%-28s %8.1f\n", "mpfr_mul", mpfr_mul_ns);
  arb_clear(a);
  arb_clear(y);
  gmp_randclear(state);
  return 0;
}
