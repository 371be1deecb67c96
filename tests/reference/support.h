// Helpers of the reference interpreter's tests: running a program on host inputs and
// comparing MPFR results with values computed independently at higher precision.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <functional>
#include <string>
#include <vector>

#include "common/error_code.h"
#include "exec/reference/interpreter.h"
#include "reference/builder.h"

namespace presk::testing {

using MpfrValue = reference::Value<reference::MpfrArith>;
using BallValue = reference::Value<reference::BallArith>;

inline reference::HostTensor real_input(std::vector<int64_t> shape, std::vector<double> values) {
  reference::HostTensor host;
  host.type = real_type(std::move(shape));
  host.reals = std::move(values);
  return host;
}

inline reference::HostTensor int_input(std::vector<int64_t> shape, std::vector<int64_t> values,
                                       ir::ElemKind kind = ir::ElemKind::Int) {
  reference::HostTensor host;
  host.type = ir::Type{kind, std::move(shape), {}, {}};
  host.integers = std::move(values);
  return host;
}

// Runs the entry `entry` of `program` at `options.bits` in the arithmetic A.
template <class A>
std::vector<reference::Value<A>> run(const ir::Program& program,
                                     const std::vector<reference::HostTensor>& inputs,
                                     const reference::RunOptions& options = {},
                                     const reference::ParameterStore& params = {},
                                     const std::string& entry = "f") {
  A arith(options.bits);
  std::vector<reference::Value<A>> arguments;
  for (const reference::HostTensor& input : inputs) arguments.push_back(reference::to_value(arith, input));
  return reference::run_function<A>(program, reference::find_entry(program, entry), params,
                                    arguments, options);
}

inline std::vector<MpfrValue> run_mpfr(const ir::Program& program,
                                       const std::vector<reference::HostTensor>& inputs,
                                       long bits = 256) {
  reference::RunOptions options;
  options.bits = bits;
  return run<reference::MpfrArith>(program, inputs, options);
}

// An MPFR number at `bits`, freed at scope exit.
class Exact {
 public:
  explicit Exact(long bits = 1024) { mpfr_init2(value_, bits); }
  ~Exact() { mpfr_clear(value_); }
  Exact(const Exact&) = delete;
  Exact& operator=(const Exact&) = delete;
  mpfr_ptr get() { return value_; }
  mpfr_srcptr get() const { return value_; }
  operator mpfr_ptr() { return value_; }

 private:
  mpfr_t value_;
};

// log2 of |got − expected| / |expected| (or of |got − expected| when expected is 0); −∞ if equal.
inline double relative_error_log2(mpfr_srcptr got, mpfr_srcptr expected) {
  Exact difference(2048);
  mpfr_sub(difference, got, expected, MPFR_RNDN);
  if (mpfr_zero_p(difference)) return -1e9;
  mpfr_abs(difference, difference, MPFR_RNDN);
  if (!mpfr_zero_p(expected)) mpfr_div(difference, difference, expected, MPFR_RNDN);
  mpfr_abs(difference, difference, MPFR_RNDN);
  long exponent = 0;
  double mantissa = mpfr_get_d_2exp(&exponent, difference, MPFR_RNDN);
  return static_cast<double>(exponent) + std::log2(mantissa);
}

}  // namespace presk::testing
