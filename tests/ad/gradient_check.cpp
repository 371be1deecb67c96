// The gradient check (gradient_check.h).
#include "ad/gradient_check.h"  // tests/ad/

#include <mpfr.h>

#include <cmath>
#include <memory>
#include <random>

#include "ad/vjp.h"
#include "exec/reference/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace presk::testing {
namespace {

using reference::MpfrArith;
using Value = reference::Value<MpfrArith>;
constexpr long kBits = 512;

// One exact number at kBits, freed at scope exit.
struct Number {
  mpfr_t v;
  Number() { mpfr_init2(v, kBits); mpfr_set_zero(v, 1); }
  ~Number() { mpfr_clear(v); }
  Number(const Number&) = delete;
  Number& operator=(const Number&) = delete;
};

// A random direction entry k/8, k ∈ [−8, 8].
double direction_entry(std::mt19937_64& random) {
  return static_cast<double>(static_cast<int64_t>(random() % 17) - 8) / 8;
}

struct Setup {
  const ir::Function* entry = nullptr;
  std::vector<Value> arguments;
  std::vector<std::vector<double>> argument_directions;  // per argument (empty for Z/B)
  reference::ParameterStore params;
  std::vector<std::pair<std::string, std::vector<double>>> param_directions;
  std::vector<double> seed;  // the cotangent c (all ones for a scalar result)
};

Setup make_setup(const ir::Program& program, const std::string& name, uint64_t seed) {
  MpfrArith arith(kBits);
  std::mt19937_64 random(seed);
  Setup setup;
  setup.entry = &reference::find_entry(program, name);
  int64_t range = 0;
  for (const ir::Type& type : setup.entry->argument_types)
    if (type.kind == ir::ElemKind::Int) range = reference::default_token_range(program);
  for (reference::HostTensor& host : reference::synthesize_inputs(*setup.entry, seed, range)) {
    std::vector<double> direction;
    if (host.type.kind == ir::ElemKind::Real) {
      // (unnamed arguments draw the same stream: an offset keeps them apart, and off ties)
      for (double& x : host.reals)
        x = std::ldexp(std::round(std::ldexp(x, 20)), -20) + std::ldexp(direction_entry(random), -2);
      for (size_t i = 0; i < host.reals.size(); ++i) direction.push_back(direction_entry(random));
    }
    setup.arguments.push_back(reference::to_value(arith, host));
    setup.argument_directions.push_back(std::move(direction));
  }
  reference::ParameterStore synthesized = reference::synthesize_parameters(program, seed, 1);
  for (const ir::Param& param : program.params) {
    std::vector<double> values = *synthesized.find(param.path);
    std::vector<double> direction;
    for (double& x : values) {
      x = std::ldexp(std::round(std::ldexp(x, 20)), -20) + std::ldexp(direction_entry(random), -4);
      direction.push_back(direction_entry(random));
    }
    setup.params.set(param.path, std::move(values));
    setup.param_directions.emplace_back(param.path, std::move(direction));
  }
  const ir::Type& result = setup.entry->type_of(setup.entry->results.at(0));
  for (int64_t i = 0; i < result.element_count(); ++i)
    setup.seed.push_back(result.rank() == 0 ? 1.0 : direction_entry(random));
  return setup;
}

// ⟨c, f(arguments)⟩ at kBits, into `out`.
void objective(const ir::Program& program, const Setup& setup, const std::vector<Value>& arguments,
               const reference::ParameterStore& params, mpfr_t out) {
  reference::RunOptions options;
  options.bits = kBits;
  std::vector<Value> results = reference::run_function<MpfrArith>(program, *setup.entry, params, arguments, options);
  Number term;
  mpfr_set_zero(out, 1);
  for (int64_t i = 0; i < results[0].size(); ++i) {
    mpfr_mul_d(term.v, results[0].real(i), setup.seed[static_cast<size_t>(i)], MPFR_RNDN);
    mpfr_add(out, out, term.v, MPFR_RNDN);
  }
}

// The arguments moved by `step`·direction (exactly, in MPFR).
std::vector<Value> moved_arguments(const Setup& setup, double step_log2, int sign) {
  MpfrArith arith(kBits);
  std::vector<Value> moved;
  for (size_t k = 0; k < setup.arguments.size(); ++k) {
    moved.push_back(reference::copy_value(arith, setup.arguments[k]));
    for (size_t i = 0; i < setup.argument_directions[k].size(); ++i) {
      Number delta;
      mpfr_set_d(delta.v, sign * setup.argument_directions[k][i], MPFR_RNDN);
      mpfr_mul_2si(delta.v, delta.v, static_cast<long>(step_log2), MPFR_RNDN);
      mpfr_add(moved.back().real(static_cast<int64_t>(i)), moved.back().real(static_cast<int64_t>(i)), delta.v, MPFR_RNDN);
    }
  }
  return moved;
}

// The parameters moved by sign·2^step_log2·direction (exact in binary64 by construction).
reference::ParameterStore moved_params(const Setup& setup, int step_log2, int sign) {
  reference::ParameterStore moved;
  for (const auto& [path, direction] : setup.param_directions) {
    std::vector<double> values = *setup.params.find(path);
    for (size_t i = 0; i < values.size(); ++i) values[i] += sign * std::ldexp(direction[i], step_log2);
    moved.set(path, std::move(values));
  }
  return moved;
}

// (F(+h) − F(−h))/2h for the argument or the parameter direction.
void difference_quotient(const ir::Program& program, const Setup& setup, bool params, int step_log2,
                         mpfr_t out) {
  Number plus, minus;
  if (params) {
    objective(program, setup, setup.arguments, moved_params(setup, step_log2, 1), plus.v);
    objective(program, setup, setup.arguments, moved_params(setup, step_log2, -1), minus.v);
  } else {
    objective(program, setup, moved_arguments(setup, step_log2, 1), setup.params, plus.v);
    objective(program, setup, moved_arguments(setup, step_log2, -1), setup.params, minus.v);
  }
  mpfr_sub(out, plus.v, minus.v, MPFR_RNDN);
  mpfr_mul_2si(out, out, -(step_log2 + 1), MPFR_RNDN);
}

// Σ ⟨cotangent, direction⟩ over values of `results` named by `name_of`.
void inner_product(const std::vector<double>& direction, const Value& cotangent, mpfr_t total) {
  Number term;
  for (size_t i = 0; i < direction.size(); ++i) {
    mpfr_mul_d(term.v, cotangent.real(static_cast<int64_t>(i)), direction[i], MPFR_RNDN);
    mpfr_add(total, total, term.v, MPFR_RNDN);
  }
}

double agreement_digits(mpfr_t got, mpfr_t expected) {
  Number difference;
  mpfr_sub(difference.v, got, expected, MPFR_RNDN);
  if (mpfr_zero_p(difference.v)) return 99;
  double scale = std::max(std::fabs(mpfr_get_d(expected, MPFR_RNDN)), 1e-300);
  if (mpfr_zero_p(expected)) return -std::log10(std::fabs(mpfr_get_d(difference.v, MPFR_RNDN)));
  return -std::log10(std::fabs(mpfr_get_d(difference.v, MPFR_RNDN)) / scale);
}

}  // namespace

ir::Program parse_ir(const std::string& text) {
  ir::Program program = ir::parse_program(std::make_shared<SourceFile>(SourceFile{"test.pir", text}));
  ir::verify_program(program, ir::VerifyMode::UserInput);
  return program;
}

GradientAgreement check_gradient(const ir::Program& program, const std::string& entry, uint64_t seed) {
  return check_gradient_of(program, ad::add_vjps(program), entry, seed);
}

GradientAgreement check_gradient_of(const ir::Program& program, const ir::Program& with_vjps, const std::string& entry,
                                    uint64_t seed) {
  Setup setup = make_setup(program, entry, seed);
  MpfrArith arith(kBits);
  std::vector<Value> arguments;
  for (const Value& argument : setup.arguments) arguments.push_back(reference::copy_value(arith, argument));
  const ir::Type& result = setup.entry->type_of(setup.entry->results[0]);
  reference::HostTensor seed_tensor{result, setup.seed, {}};
  arguments.push_back(reference::to_value(arith, seed_tensor));
  reference::RunOptions options;
  options.bits = kBits;
  const ir::Function* vjp = with_vjps.find_function(ad::vjp_name(entry));
  std::vector<Value> cotangents = reference::run_function<MpfrArith>(with_vjps, *vjp, setup.params, arguments, options);
  Number vjp_arguments, vjp_params;
  for (size_t k = 0; k < cotangents.size(); ++k) {
    const std::string& name = vjp->result_names[k];
    if (name.starts_with("$")) {
      inner_product(setup.argument_directions[std::stoul(name.substr(1))], cotangents[k], vjp_arguments.v);
      continue;
    }
    for (const auto& [path, direction] : setup.param_directions)
      if (path == name) inner_product(direction, cotangents[k], vjp_params.v);
  }
  Number fd_arguments, fd_params, fd_params_2h;
  difference_quotient(program, setup, false, -100, fd_arguments.v);
  difference_quotient(program, setup, true, -30, fd_params.v);
  difference_quotient(program, setup, true, -29, fd_params_2h.v);
  mpfr_mul_2si(fd_params.v, fd_params.v, 2, MPFR_RNDN);  // (4·D(h) − D(2h))/3
  mpfr_sub(fd_params.v, fd_params.v, fd_params_2h.v, MPFR_RNDN);
  mpfr_div_ui(fd_params.v, fd_params.v, 3, MPFR_RNDN);
  GradientAgreement agreement;
  agreement.argument_digits = agreement_digits(vjp_arguments.v, fd_arguments.v);
  agreement.param_digits = agreement_digits(vjp_params.v, fd_params.v);
  agreement.detail = "arguments: vjp " + std::to_string(mpfr_get_d(vjp_arguments.v, MPFR_RNDN)) +
                     " vs " + std::to_string(mpfr_get_d(fd_arguments.v, MPFR_RNDN)) +
                     "; params: vjp " + std::to_string(mpfr_get_d(vjp_params.v, MPFR_RNDN)) +
                     " vs " + std::to_string(mpfr_get_d(fd_params.v, MPFR_RNDN));
  return agreement;
}

}  // namespace presk::testing
