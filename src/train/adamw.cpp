// AdamW (adamw.h): the step's scalars by MPFR, the update in the master type's arithmetic.
#include "train/adamw.h"

#include <mpfr.h>

#include <cmath>

#include "support/diagnostics.h"

namespace presk::train {
namespace {

mpfr_prec_t significand_bits(RealType type) {
  switch (type) {
    case RealType::f64:
      return 53;
    case RealType::f32:
      return 24;
    case RealType::bf16:
      return 8;
  }
  return 53;
}

// An MPFR number at 256 bits, rounded once to `type` on the way out (no scalar is near the
// types' subnormal range).
class Exact {
 public:
  Exact() { mpfr_init2(x_, 256); }
  ~Exact() { mpfr_clear(x_); }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;
  mpfr_ptr get() { return x_; }
  double rounded(RealType type) {
    mpfr_prec_round(x_, significand_bits(type), MPFR_RNDN);
    return mpfr_get_d(x_, MPFR_RNDN);  // exact: x_ has at most 53 bits now
  }

 private:
  mpfr_t x_;
};

double one_minus(double beta, RealType type) {
  Exact r;
  mpfr_set_d(r.get(), beta, MPFR_RNDN);
  mpfr_ui_sub(r.get(), 1, r.get(), MPFR_RNDN);  // exact at 256 bits
  return r.rounded(type);
}

double rounded(double x, RealType type) {
  Exact r;
  mpfr_set_d(r.get(), x, MPFR_RNDN);
  return r.rounded(type);
}

// 1 − βᵗ into `out` (βᵗ by MPFR's power at 256 bits).
void one_minus_power(mpfr_ptr out, double beta, int64_t t) {
  mpfr_set_d(out, beta, MPFR_RNDN);
  mpfr_pow_si(out, out, static_cast<long>(t), MPFR_RNDN);
  mpfr_ui_sub(out, 1, out, MPFR_RNDN);
}

template <typename C>
C store(C x, RealType type) {
  if constexpr (std::is_same_v<C, float>) {
    if (type == RealType::bf16) return exec::native::round_bf16(x);
  }
  (void)type;
  return x;
}

template <typename C>
void update(const AdamWScalars& s, RealType type, bool decay, std::span<double> theta,
            std::span<double> m, std::span<double> v, std::span<const double> gradient) {
  const C b1 = C(s.b1), c1 = C(s.c1), b2 = C(s.b2), c2 = C(s.c2), eps = C(s.eps);
  const C shrink = C(s.shrink), step_size = C(s.step_size), root_correction = C(s.root_correction);
  for (size_t i = 0; i < theta.size(); ++i) {
    const C g = C(gradient[i]);
    const C mi = store<C>(b1 * C(m[i]) + c1 * g, type);
    const C vi = store<C>(b2 * C(v[i]) + c2 * (g * g), type);
    C t = C(theta[i]);
    if (decay) t = t * shrink;
    const C denominator = std::sqrt(vi) / root_correction + eps;
    t = store<C>(t - step_size * (mi / denominator), type);
    m[i] = mi;
    v[i] = vi;
    theta[i] = t;
  }
}

}  // namespace

AdamWScalars adamw_scalars(const AdamWOptions& options, double learning_rate, int64_t t,
                           RealType type) {
  internal_assert(t >= 1);
  AdamWScalars s;
  s.b1 = rounded(options.beta1, type);
  s.c1 = one_minus(options.beta1, type);
  s.b2 = rounded(options.beta2, type);
  s.c2 = one_minus(options.beta2, type);
  s.eps = rounded(options.epsilon, type);
  Exact shrink;
  mpfr_set_d(shrink.get(), learning_rate, MPFR_RNDN);
  mpfr_mul_d(shrink.get(), shrink.get(), options.weight_decay, MPFR_RNDN);  // exact at 256 bits
  mpfr_ui_sub(shrink.get(), 1, shrink.get(), MPFR_RNDN);
  s.shrink = shrink.rounded(type);
  Exact step_size;
  one_minus_power(step_size.get(), options.beta1, t);
  mpfr_d_div(step_size.get(), learning_rate, step_size.get(), MPFR_RNDN);
  s.step_size = step_size.rounded(type);
  Exact root;
  one_minus_power(root.get(), options.beta2, t);
  mpfr_sqrt(root.get(), root.get(), MPFR_RNDN);
  s.root_correction = root.rounded(type);
  return s;
}

void adamw_update(const AdamWScalars& scalars, RealType type, bool decay, std::span<double> theta,
                  std::span<double> m, std::span<double> v, std::span<const double> gradient) {
  internal_assert(m.size() == theta.size() && v.size() == theta.size() &&
                  gradient.size() == theta.size());
  if (type == RealType::f64) return update<double>(scalars, type, decay, theta, m, v, gradient);
  update<float>(scalars, type, decay, theta, m, v, gradient);
}

bool decays(int64_t rank, int stack_depth) {
  return rank - stack_depth >= 2;
}

}  // namespace presk::train
