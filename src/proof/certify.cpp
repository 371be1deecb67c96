// certify.h: the ball run, and per element |x − m| + r bounded above in Arb.
#include "proof/certify.h"

#include <arb.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "exec/reference/arith_ball.h"
#include "exec/reference/interpreter.h"
#include "support/diagnostics.h"

namespace presk::proof {
namespace {

using Ball = reference::Value<reference::BallArith>;
using Point = reference::Value<reference::MpfrArith>;

// A bound on |x − denotation| where the denotation lies in `ball`.
double distance_bound(const arb_struct* ball, const __mpfr_struct* x, long bits) {
  const bool ball_finite = arf_is_finite(arb_midref(ball)) && mag_is_finite(arb_radref(ball));
  if (!mpfr_number_p(x) || !ball_finite) {
    if (mpfr_inf_p(x) && arf_is_inf(arb_midref(ball)) &&
        (mpfr_sgn(x) > 0) == (arf_sgn(arb_midref(ball)) > 0)) {
      return 0;  // the same infinity
    }
    return std::numeric_limits<double>::infinity();
  }
  arb_t point, difference;
  arb_init(point);
  arb_init(difference);
  arf_set_mpfr(arb_midref(point), x);
  arb_sub(difference, ball, point, bits + 64);
  arf_t upper;
  arf_init(upper);
  arb_get_abs_ubound_arf(upper, difference, bits + 64);
  const double bound = arf_get_d(upper, ARF_RND_UP);
  arf_clear(upper);
  arb_clear(difference);
  arb_clear(point);
  return bound;
}

}  // namespace

CertifiedReference certify_reference(const ir::Program& program, const ir::Function& entry,
                                     const reference::ParameterStore& parameters, int64_t count,
                                     const precision::SampleInputs& inputs,
                                     const precision::ExactOutputs& exact, int threads) {
  const auto start = std::chrono::steady_clock::now();
  reference::RunOptions options;
  options.bits = exact.bits;
  options.threads = threads;
  reference::SampleArguments<reference::BallArith> arguments_of =
      [&](const reference::BallArith& arith, int64_t k) {
        std::vector<Ball> arguments;
        for (const reference::HostTensor& input : inputs(k))
          arguments.push_back(reference::to_value(arith, input));
        return arguments;
      };
  const std::vector<std::vector<Ball>> balls = reference::run_samples<reference::BallArith>(
      program, entry, parameters, count, arguments_of, options);
  CertifiedReference certified;
  certified.samples = count;
  for (int64_t k = 0; k < count; ++k) {
    for (size_t r = 0; r < balls[k].size(); ++r) {
      const Ball& ball = balls[k][r];
      const Point& point = exact.samples.at(k).at(r);
      if (!ball.is_real()) continue;  // integers are exact
      for (int64_t i = 0; i < reference::element_count(ball.shape); ++i) {
        certified.radius =
            std::max(certified.radius, distance_bound(ball.real(i), point.real(i), exact.bits));
      }
    }
  }
  certified.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return certified;
}

}  // namespace presk::proof
