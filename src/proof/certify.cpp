// certify.h: the ball run, and per element |x − m| + r bounded above in Arb.
#include "proof/certify.h"

#include <arb.h>

#include <fmt/format.h>

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

// A ball whose radius became infinite while its midpoint is finite, or indeterminate (a NaN
// midpoint: a division or a root of a ball about 0): the balls have wrapped past this precision
// (each contraction multiplies the radii by about Σ|w|), so every bound after it is infinite or
// nearly; the run stops there (WrapWatch) instead of running its special cases (MPFR at each
// ball's endpoints) to the end. A program whose MPFR values are themselves NaN somewhere is
// never certified (a NaN output never was; an intermediate one that a `where` discards now is
// not either).
struct Wrapped {
  std::string site;
};

class WrapWatch : public reference::Observer {
 public:
  bool wants_parameters() const override { return false; }
  void on_value(const reference::SiteContext& site, const reference::ValueView& value) override {
    if (value.ball == nullptr) return;
    for (int64_t i = 0; i < value.count; ++i) {
      const arb_struct* ball = value.ball + i;
      if ((mag_is_inf(arb_radref(ball)) && arf_is_finite(arb_midref(ball))) || arf_is_nan(arb_midref(ball))) {
        std::string layers;
        for (int64_t l : site.layers) layers += fmt::format("[{}]", l);
        throw Wrapped{site.module_path + layers + " " + site.site_name()};
      }
    }
  }
};

}  // namespace

CertifiedReference certify_reference(const ir::Program& program, const ir::Function& entry,
                                     const reference::ParameterStore& parameters, int64_t count,
                                     const precision::SampleInputs& inputs,
                                     const precision::ExactOutputs& exact, int threads, long bits) {
  internal_assert(bits >= exact.bits);
  const auto start = std::chrono::steady_clock::now();
  WrapWatch watch;
  reference::RunOptions options;
  options.bits = bits;
  options.threads = threads;
  options.observer = &watch;
  reference::SampleArguments<reference::BallArith> arguments_of =
      [&](const reference::BallArith& arith, int64_t k) {
        std::vector<Ball> arguments;
        for (const reference::HostTensor& input : inputs(k))
          arguments.push_back(reference::to_value(arith, input));
        return arguments;
      };
  CertifiedReference certified;
  certified.samples = count;
  certified.bits = bits;
  std::vector<std::vector<Ball>> balls;
  try {
    balls = reference::run_samples<reference::BallArith>(program, entry, parameters, count, arguments_of, options);
  } catch (const Wrapped& wrapped) {
    certified.radius = std::numeric_limits<double>::infinity();
    certified.wrapped_at = wrapped.site;
    balls.clear();
  }
  for (int64_t k = 0; k < static_cast<int64_t>(balls.size()); ++k) {
    for (size_t r = 0; r < balls[k].size(); ++r) {
      const Ball& ball = balls[k][r];
      const Point& point = exact.samples.at(k).at(r);
      if (!ball.is_real()) continue;  // integers are exact
      for (int64_t i = 0; i < reference::element_count(ball.shape); ++i) {
        certified.radius =
            std::max(certified.radius, distance_bound(ball.real(i), point.real(i), bits));
      }
    }
  }
  certified.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  certified.runs = {{bits, certified.radius, certified.seconds, certified.wrapped_at}};
  return certified;
}

CertifiedReference certify_gap(const ir::Program& program, const ir::Function& entry,
                               const reference::ParameterStore& parameters, int64_t count,
                               const precision::SampleInputs& inputs, const precision::ExactOutputs& exact,
                               int threads, double gap, long max_bits,
                               const std::function<void(const std::string&)>& note) {
  std::vector<BallRun> runs;
  double seconds = 0;
  for (long bits = exact.bits;;) {
    if (note) note(fmt::format("certifying the reference's own gap: Arb balls at {} bits on {} samples", bits, count));
    CertifiedReference certified = certify_reference(program, entry, parameters, count, inputs, exact, threads, bits);
    runs.push_back(certified.runs.front());
    seconds += certified.seconds;
    long next = 2 * bits;  // from an infinite radius
    if (std::isfinite(certified.radius) && certified.radius > 0) {
      const double lost = std::log2(16 * kCertifiedFactor * certified.radius / gap);
      next = (bits + static_cast<long>(std::ceil(lost)) + 63) / 64 * 64;
    }
    // More bits help only while the balls' growth is what bounds it: once the bound is the MPFR
    // reference's own distance |x − m| (it did not fall 4× with the bits), they do not.
    const bool stalled = runs.size() >= 2 && certified.radius > runs[runs.size() - 2].radius / 4;
    if (certifies(certified, gap) || !(gap > 0) || bits >= max_bits || next <= bits || stalled) {
      if (note && !certifies(certified, gap)) {
        note(fmt::format("the reference's own gap is bounded by {:.3e} at {} bits: not certified{}", certified.radius,
                         bits, stalled ? " (more bits do not narrow it: calibrate at more --bits)" : ""));
      }
      certified.runs = std::move(runs);
      certified.seconds = seconds;
      return certified;
    }
    if (note) {
      note(certified.wrapped_at.empty()
               ? fmt::format("the bound {:.3e} at {} bits does not certify the gap {:.3e}: again at {} bits",
                             certified.radius, bits, gap, std::min(next, max_bits))
               : fmt::format("the balls' radius became infinite at {} ({} bits): again at {} bits", certified.wrapped_at,
                             bits, std::min(next, max_bits)));
    }
    bits = std::min(next, max_bits);
  }
}

}  // namespace presk::proof
