// The gradient of a program with dropout in training mode: its vjp, run by the exact reference
// at 512 bits with a dropout key, against central differences of the same entry under the
// same key (the mask depends on the key, never on x or θ, so the entry is smooth in both).
// Real arguments move by h = 2⁻¹⁰⁰ (exact at 512 bits); parameters, held in binary64, are
// rounded to a 2⁻²⁰ grid, moved by 2⁻³⁰ and 2⁻²⁹ and Richardson-extrapolated.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <memory>
#include <random>

#include "ad/vjp.h"
#include "exec/reference/interpreter.h"
#include "lang/frontend.h"

namespace presk {
namespace {

using reference::MpfrArith;
using MpfrValue = reference::Value<MpfrArith>;
constexpr long kBits = 512;

constexpr const char* kProgram = R"(
const D = 4
dim T
module Layer {
  param w : R[D, D] = normal(0.5)
  fn apply(x : R[T, D]) -> R[T, D] = x + dropout(tanh(x @ w), 0.5)
}
module Net {
  param layers : stack{2} Layer
  param out : R[D] = normal(1)
  fn apply(x : R[T, D]) -> R[T, D] = dropout(fold layers over x, 0.25) * out
}
entry loss(p : Net, x : R[T, D]) -> R {
  let y = p.apply(x)
  sum(y * y)
}
)";

struct Number {
  mpfr_t v;
  Number() {
    mpfr_init2(v, kBits);
    mpfr_set_zero(v, 1);
  }
  ~Number() { mpfr_clear(v); }
  Number(const Number&) = delete;
  Number& operator=(const Number&) = delete;
};

struct Case {
  ir::Program program;
  reference::ParameterStore params;
  std::vector<double> x, x_direction;
  std::map<std::string, std::vector<double>> param_directions;
  random::DropoutKey key{5, 2, 1};
};

Case make_case() {
  lang::FrontendOptions options;
  options.dims = {{"T", 3}};
  options.training = true;
  Case c{lang::compile(std::make_shared<SourceFile>(SourceFile{"g.psk", kProgram}), options),
         {},
         {},
         {},
         {}};
  std::mt19937_64 random(3);
  auto direction = [&] { return static_cast<double>(static_cast<int64_t>(random() % 17) - 8) / 8; };
  auto grid = [](double x) { return std::ldexp(std::round(std::ldexp(x, 20)), -20); };
  reference::ParameterStore fresh = reference::synthesize_parameters(c.program, 3, 1);
  for (const ir::Param& param : c.program.params) {
    std::vector<double> values = *fresh.find(param.path);
    std::vector<double>& d = c.param_directions[param.path];
    for (double& v : values) {
      v = grid(v);
      d.push_back(direction());
    }
    c.params.set(param.path, std::move(values));
  }
  for (int i = 0; i < 12; ++i) {
    c.x.push_back(grid(std::sin(1.0 + i)));
    c.x_direction.push_back(direction());
  }
  return c;
}

// x moved by sign·2^h_log2·d, exactly (sign 0: unmoved).
MpfrValue x_value(const MpfrArith& arith, const Case& c, int sign, long h_log2) {
  reference::HostTensor host{ir::Type{ir::ElemKind::Real, {3, 4}, {}}, c.x, {}};
  MpfrValue value = reference::to_value(arith, host);
  Number delta;
  for (size_t i = 0; i < c.x_direction.size() && sign != 0; ++i) {
    mpfr_set_d(delta.v, sign * c.x_direction[i], MPFR_RNDN);
    mpfr_mul_2si(delta.v, delta.v, h_log2, MPFR_RNDN);
    mpfr_add(value.real(static_cast<int64_t>(i)), value.real(static_cast<int64_t>(i)), delta.v,
             MPFR_RNDN);
  }
  return value;
}

// The loss under the case's dropout key at x moved by sign·2^h_log2·d, with `params`.
void loss_at(const Case& c, const reference::ParameterStore& params, int sign, long h_log2,
             mpfr_t out) {
  MpfrArith arith(kBits);
  std::vector<MpfrValue> arguments;
  arguments.push_back(x_value(arith, c, sign, h_log2));
  reference::RunOptions options;
  options.bits = kBits;
  options.training = c.key;
  std::vector<MpfrValue> results = reference::run_function<MpfrArith>(
      c.program, *c.program.find_function("loss"), params, arguments, options);
  mpfr_set(out, results.at(0).real(0), MPFR_RNDN);
}

reference::ParameterStore moved(const Case& c, int step_log2, int sign) {
  reference::ParameterStore out;
  for (const auto& [path, d] : c.param_directions) {
    std::vector<double> values = *c.params.find(path);
    for (size_t i = 0; i < values.size(); ++i) values[i] += sign * std::ldexp(d[i], step_log2);
    out.set(path, std::move(values));
  }
  return out;
}

void param_quotient(const Case& c, int step_log2, mpfr_t out) {
  Number plus, minus;
  loss_at(c, moved(c, step_log2, 1), 0, 0, plus.v);
  loss_at(c, moved(c, step_log2, -1), 0, 0, minus.v);
  mpfr_sub(out, plus.v, minus.v, MPFR_RNDN);
  mpfr_mul_2si(out, out, -(step_log2 + 1), MPFR_RNDN);
}

double digits(mpfr_t got, mpfr_t expected) {
  Number difference;
  mpfr_sub(difference.v, got, expected, MPFR_RNDN);
  if (mpfr_zero_p(difference.v)) return 99;
  return -std::log10(
      std::fabs(mpfr_get_d(difference.v, MPFR_RNDN) / mpfr_get_d(expected, MPFR_RNDN)));
}

TEST(DropoutGradient, TrainingMaskAgreesWithCentralDifferences) {
  const Case c = make_case();
  const ir::Program with_vjps = ad::add_vjps(c.program);
  MpfrArith arith(kBits);
  std::vector<MpfrValue> arguments;
  arguments.push_back(x_value(arith, c, 0, 0));
  arguments.push_back(reference::to_value(
      arith, reference::HostTensor{ir::Type{ir::ElemKind::Real, {}, {}}, {1.0}, {}}));
  reference::RunOptions options;
  options.bits = kBits;
  options.training = c.key;
  const ir::Function& vjp = *with_vjps.find_function("loss.vjp");
  std::vector<MpfrValue> cotangents =
      reference::run_function<MpfrArith>(with_vjps, vjp, c.params, arguments, options);
  Number vjp_x, vjp_params, term;
  for (size_t k = 0; k < cotangents.size(); ++k) {
    const bool argument = vjp.result_names[k].starts_with("$");
    const std::vector<double>& d =
        argument ? c.x_direction : c.param_directions.at(vjp.result_names[k]);
    mpfr_ptr total = argument ? vjp_x.v : vjp_params.v;
    for (size_t i = 0; i < d.size(); ++i) {
      mpfr_mul_d(term.v, cotangents[k].real(static_cast<int64_t>(i)), d[i], MPFR_RNDN);
      mpfr_add(total, total, term.v, MPFR_RNDN);
    }
  }
  Number plus, minus, fd_x, fd_h, fd_2h;
  loss_at(c, c.params, 1, -100, plus.v);
  loss_at(c, c.params, -1, -100, minus.v);
  mpfr_sub(fd_x.v, plus.v, minus.v, MPFR_RNDN);
  mpfr_mul_2si(fd_x.v, fd_x.v, 99, MPFR_RNDN);  // / 2h
  param_quotient(c, -30, fd_h.v);
  param_quotient(c, -29, fd_2h.v);
  mpfr_mul_2si(fd_h.v, fd_h.v, 2, MPFR_RNDN);  // (4·D(h) − D(2h)) / 3
  mpfr_sub(fd_h.v, fd_h.v, fd_2h.v, MPFR_RNDN);
  mpfr_div_ui(fd_h.v, fd_h.v, 3, MPFR_RNDN);
  EXPECT_GE(digits(vjp_x.v, fd_x.v), 25)
      << mpfr_get_d(vjp_x.v, MPFR_RNDN) << " vs " << mpfr_get_d(fd_x.v, MPFR_RNDN);
  EXPECT_GE(digits(vjp_params.v, fd_h.v), 25)
      << mpfr_get_d(vjp_params.v, MPFR_RNDN) << " vs " << mpfr_get_d(fd_h.v, MPFR_RNDN);
  // Without the key the vjp is the identity's, another gradient: the adjoint did use the mask.
  options.training.reset();
  std::vector<MpfrValue> plain =
      reference::run_function<MpfrArith>(with_vjps, vjp, c.params, arguments, options);
  EXPECT_NE(mpfr_cmp(plain.at(0).real(0), cotangents.at(0).real(0)), 0);
}

}  // namespace
}  // namespace presk
