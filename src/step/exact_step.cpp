// The exact training step (exact_step.h): the reference's vjp per window, the mean, and AdamW
// over the reals, all in MPFR at the step's bits.
#include "step/exact_step.h"

#include <mpfr.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "exec/reference/interpreter.h"
#include "precision/exact_cache.h"
#include "support/diagnostics.h"
#include "support/ranks.h"

namespace presk::step {
namespace {

using reference::MpfrArith;
using Exact = reference::Value<MpfrArith>;

// One MPFR number at a given precision (a scalar of the step, or a scratch value).
class Real {
 public:
  explicit Real(long bits) { mpfr_init2(x_, bits); }
  Real(long bits, double value) : Real(bits) { mpfr_set_d(x_, value, MPFR_RNDN); }
  ~Real() { mpfr_clear(x_); }
  Real(const Real&) = delete;
  Real& operator=(const Real&) = delete;
  mpfr_ptr get() { return x_; }
  mpfr_srcptr get() const { return x_; }

 private:
  mpfr_t x_;
};

// A token window (or any argument) as the reference's value: floats exactly, integers as they are.
Exact argument_of(const MpfrArith& arith, const Tensor& row) {
  if (facts(row.type()).is_float) {
    Exact value = Exact::make_real(arith, row.shape());
    for (int64_t i = 0; i < value.size(); ++i) arith.set_double(value.real(i), row.get(static_cast<uint64_t>(i)));
    return value;
  }
  Exact value = Exact::make_integer(row.type() == ElementType::boolean ? ir::ElemKind::Bool : ir::ElemKind::Int, row.shape());
  for (size_t i = 0; i < value.integers.size(); ++i) value.integers[i] = row.get_integer(i);
  return value;
}

// Every window's cotangents by `E.vjp` (cotangent 1) on the reference, window b with the key
// (seed, step, b); up to `threads` windows at once, each on one thread.
std::vector<std::vector<Exact>> window_gradients(const train::GradientProgram& gradient,
                                                 const reference::ParameterStore& parameters,
                                                 const StepInput& input, const MpfrArith& arith, long bits,
                                                 int threads, const WindowProgress& progress) {
  const ir::Function& vjp = reference::find_entry(gradient.program, gradient.vjp);
  const size_t count = input.rows.size();
  std::vector<std::vector<Exact>> cotangents(count);
  std::atomic<int64_t> done{0};
  std::mutex report;
  auto window = [&](size_t b) {
    reference::RunOptions options;
    options.bits = bits;
    options.threads = 1;
    options.training = random::DropoutKey{input.seed, static_cast<uint64_t>(input.step), static_cast<uint64_t>(b)};
    std::vector<Exact> arguments;
    arguments.push_back(argument_of(arith, input.rows[b]));
    arguments.push_back(reference::to_value(arith, reference::HostTensor{ir::Type{}, {1.0}, {}}));
    cotangents[b] = reference::run_function<MpfrArith>(gradient.program, vjp, parameters, arguments, options);
    const int64_t finished = ++done;
    if (progress) {
      std::lock_guard<std::mutex> lock(report);
      progress(finished, static_cast<int64_t>(count));
    }
  };
  // The windows split across the ranks of a distributed run (support/ranks.h), if any.
  ranks::SampleShare share("calibrate --step: the exact step's windows", static_cast<int64_t>(count));
  const std::vector<int64_t>& mine = share.mine();
  if (threads <= 1 || mine.size() <= 1) {
    for (int64_t b : mine) window(static_cast<size_t>(b));
  } else {
    tbb::task_arena arena(threads);
    arena.execute([&] { tbb::parallel_for(size_t{0}, mine.size(), [&](size_t i) { window(static_cast<size_t>(mine[i])); }); });
  }
  share.exchange([&](int64_t b) { return precision::encode_exact_sample(cotangents[b], bits); },
                 [&](int64_t b, std::string_view bytes) { cotangents[b] = precision::decode_exact_sample(bytes, bits); });
  return cotangents;
}

// AdamW's scalars of step t over the reals, at `bits`.
struct ExactScalars {
  explicit ExactScalars(long bits)
      : b1(bits), c1(bits), b2(bits), c2(bits), eps(bits), shrink(bits), step_size(bits), root_correction(bits) {}
  Real b1, c1, b2, c2, eps, shrink, step_size, root_correction;
};

void set_scalars(ExactScalars& s, const train::AdamWOptions& o, double rate, int64_t t, long bits) {
  mpfr_set_d(s.b1.get(), o.beta1, MPFR_RNDN);
  mpfr_ui_sub(s.c1.get(), 1, s.b1.get(), MPFR_RNDN);
  mpfr_set_d(s.b2.get(), o.beta2, MPFR_RNDN);
  mpfr_ui_sub(s.c2.get(), 1, s.b2.get(), MPFR_RNDN);
  mpfr_set_d(s.eps.get(), o.epsilon, MPFR_RNDN);
  mpfr_set_d(s.shrink.get(), rate, MPFR_RNDN);
  mpfr_mul_d(s.shrink.get(), s.shrink.get(), o.weight_decay, MPFR_RNDN);
  mpfr_ui_sub(s.shrink.get(), 1, s.shrink.get(), MPFR_RNDN);
  Real power(bits);
  mpfr_pow_si(power.get(), s.b1.get(), static_cast<long>(t), MPFR_RNDN);
  mpfr_ui_sub(power.get(), 1, power.get(), MPFR_RNDN);
  mpfr_d_div(s.step_size.get(), rate, power.get(), MPFR_RNDN);
  mpfr_pow_si(power.get(), s.b2.get(), static_cast<long>(t), MPFR_RNDN);
  mpfr_ui_sub(power.get(), 1, power.get(), MPFR_RNDN);
  mpfr_sqrt(s.root_correction.get(), power.get(), MPFR_RNDN);
}

// Running sums of squares: ‖θ‖², ‖Δ‖², ‖g‖², and ‖round_T(θ′) − θ′‖² for f64, f32, bf16.
struct Squares {
  explicit Squares(long bits) : theta(bits), update(bits), gradient(bits), f64(bits), f32(bits), bf16(bits), term(bits) {
    for (Real* r : {&theta, &update, &gradient, &f64, &f32, &bf16}) mpfr_set_zero(r->get(), 1);
  }
  void add(Real& sum, mpfr_srcptr x) {
    mpfr_sqr(term.get(), x, MPFR_RNDN);
    mpfr_add(sum.get(), sum.get(), term.get(), MPFR_RNDN);
  }
  Real theta, update, gradient, f64, f32, bf16, term;
};

// round_T(x) − x into `out`, T of `significand` bits (f64 53, f32 24, bf16 8; θ′ lies in the
// types' normal range, where rounding to the significand is rounding to the type).
void storage_error(mpfr_ptr out, mpfr_srcptr x, mpfr_prec_t significand) {
  mpfr_t rounded;
  mpfr_init2(rounded, significand);
  mpfr_set(rounded, x, MPFR_RNDN);
  mpfr_sub(out, rounded, x, MPFR_RNDN);
  mpfr_clear(rounded);
}

double root(Real& squares) {
  mpfr_sqrt(squares.get(), squares.get(), MPFR_RNDN);
  return mpfr_get_d(squares.get(), MPFR_RNDN);
}

// θ′ of one parameter from its exact mean gradient `g` (n numbers), with Δ, g in binary64 and
// the sums of squares.
void update_parameter(const train::ParameterState& p, const ExactScalars& s, bool decay, const mpfr_srcptr* g,
                      long bits, ExactStep& out, Squares& squares) {
  const size_t n = p.theta.size();
  reference::MpfrBuffer next(static_cast<int64_t>(n), bits);
  std::vector<double>& update = out.update.emplace_back(n);
  std::vector<double>& gradient = out.gradient.emplace_back(n);
  Real m(bits), v(bits), t(bits), denominator(bits), delta(bits);
  for (size_t i = 0; i < n; ++i) {
    mpfr_mul_d(m.get(), s.b1.get(), p.m[i], MPFR_RNDN);
    mpfr_fma(m.get(), s.c1.get(), g[i], m.get(), MPFR_RNDN);  // m′ = β₁m + (1 − β₁)g
    mpfr_sqr(t.get(), g[i], MPFR_RNDN);
    mpfr_mul(t.get(), t.get(), s.c2.get(), MPFR_RNDN);
    mpfr_mul_d(v.get(), s.b2.get(), p.v[i], MPFR_RNDN);
    mpfr_add(v.get(), v.get(), t.get(), MPFR_RNDN);  // v′ = β₂v + (1 − β₂)g²
    mpfr_sqrt(denominator.get(), v.get(), MPFR_RNDN);
    mpfr_div(denominator.get(), denominator.get(), s.root_correction.get(), MPFR_RNDN);
    mpfr_add(denominator.get(), denominator.get(), s.eps.get(), MPFR_RNDN);
    mpfr_div(t.get(), m.get(), denominator.get(), MPFR_RNDN);
    mpfr_mul(t.get(), t.get(), s.step_size.get(), MPFR_RNDN);  // η/(1 − β₁ᵗ) · m′/(√v′/√(1 − β₂ᵗ) + ε)
    mpfr_ptr theta = next.data() + i;
    mpfr_set_d(theta, p.theta[i], MPFR_RNDN);
    if (decay) mpfr_mul(theta, theta, s.shrink.get(), MPFR_RNDN);
    mpfr_sub(theta, theta, t.get(), MPFR_RNDN);
    mpfr_sub_d(delta.get(), theta, p.theta[i], MPFR_RNDN);
    update[i] = mpfr_get_d(delta.get(), MPFR_RNDN);
    gradient[i] = mpfr_get_d(g[i], MPFR_RNDN);
    mpfr_set_d(t.get(), p.theta[i], MPFR_RNDN);
    squares.add(squares.theta, t.get());
    squares.add(squares.update, delta.get());
    squares.add(squares.gradient, g[i]);
    storage_error(t.get(), theta, 53);
    squares.add(squares.f64, t.get());
    storage_error(t.get(), theta, 24);
    squares.add(squares.f32, t.get());
    storage_error(t.get(), theta, 8);
    squares.add(squares.bf16, t.get());
  }
  out.theta_next.push_back(std::move(next));
}

}  // namespace

ExactStep exact_step(const train::GradientProgram& gradient, const train::TrainState& state,
                     const StepInput& input, long bits, int threads, const WindowProgress& progress) {
  internal_assert(gradient.fwd.empty() && !input.rows.empty() &&
                  gradient.result_of_parameter.size() == state.parameters.size());
  const auto start = std::chrono::steady_clock::now();
  const MpfrArith arith(bits);
  reference::ParameterStore parameters;
  for (const train::ParameterState& p : state.parameters) parameters.set(p.path, p.theta);
  std::vector<std::vector<Exact>> windows =
      window_gradients(gradient, parameters, input, arith, bits, threads, progress);
  ExactScalars scalars(bits);
  set_scalars(scalars, input.adamw, input.learning_rate, state.step + 1, bits);
  ExactStep out;
  out.bits = bits;
  Squares squares(bits);
  const auto batch = static_cast<long>(windows.size());
  for (size_t k = 0; k < state.parameters.size(); ++k) {
    const train::ParameterState& p = state.parameters[k];
    const int result = gradient.result_of_parameter[k];
    reference::MpfrBuffer mean(static_cast<int64_t>(p.theta.size()), bits);
    std::vector<mpfr_srcptr> g(p.theta.size());
    for (size_t i = 0; i < p.theta.size(); ++i) {
      mpfr_ptr sum = mean.data() + i;
      mpfr_set_zero(sum, 1);
      for (const std::vector<Exact>& window : windows) {  // window order
        if (result >= 0) mpfr_add(sum, sum, window.at(static_cast<size_t>(result)).real(static_cast<int64_t>(i)), MPFR_RNDN);
      }
      mpfr_div_si(sum, sum, batch, MPFR_RNDN);
      g[i] = sum;
    }
    const bool decay = train::decays(static_cast<int64_t>(p.shape.size()), p.stack_depth);
    update_parameter(p, scalars, decay, g.data(), bits, out, squares);
  }
  out.theta_norm = root(squares.theta);
  out.update_norm = root(squares.update);
  out.gradient_norm = root(squares.gradient);
  const double update_norm = out.update_norm;
  auto floor = [&](Real& sum) { return update_norm == 0 ? 0.0 : root(sum) / update_norm; };
  out.floors = {floor(squares.f64), floor(squares.f32), floor(squares.bf16)};
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace presk::step
