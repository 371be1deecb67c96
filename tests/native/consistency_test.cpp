// Consistency harness: one case per primitive and type (f64, f32, bf16). The native result is
// compared with the exact reference (MPFR at 256 bits) on random and hard inputs (large
// magnitudes, cancellation, subnormals, ±Inf, NaN), within a tolerance derived from the type's
// unit roundoff u: correctly rounded ops u·|r|; transcendentals (stated ulps)·2u·|r|; sums of
// n terms (n−1)·u·Σ|t| (contractions with fma: n·u·Σ|a·b|; bf16 sites accumulate in f32).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "exec/native/executor.h"
#include "exec/native/kernels.h"
#include "exec/native/kernels_rows.h"
#include "exec/reference/interpreter.h"

namespace presk::exec::native {
namespace {

constexpr int64_t kN = 48;

ir::Type real(std::vector<int64_t> shape) {
  ir::Type type;
  type.kind = ir::ElemKind::Real;
  type.shape = std::move(shape);
  return type;
}

// A program with one entry `f` of one let `op` over its arguments.
ir::Program one_op(ir::Op op, std::vector<ir::Type> arguments, ir::Type result, ir::Attrs attrs = {}) {
  ir::Function f;
  f.name = "f";
  f.is_entry = true;
  ir::Let let;
  let.op = op;
  let.type = std::move(result);
  let.attrs = std::move(attrs);
  for (uint32_t i = 0; i < arguments.size(); ++i) {
    f.argument_names.push_back("x" + std::to_string(i));
    let.operands.push_back(ir::ValueRef::argument(i));
  }
  f.argument_types = std::move(arguments);
  f.lets.push_back(let);
  f.results.push_back(ir::ValueRef::let(0));
  ir::Program program;
  program.functions.push_back(f);
  return program;
}

double round_into(double x, RealType type) { return round_to(x, element_type_of(type)); }

// Random values with hard ones first: signed zeros, subnormals, huge, ±Inf, NaN, near-equal pairs.
std::vector<double> values(size_t count, uint64_t seed, RealType type, bool hard) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 2.0);
  std::vector<double> out(count);
  for (double& v : out) v = round_into(normal(rng), type);
  if (hard) {
    const double special[] = {0.0, -0.0, 1e-310, -3e-39, 1e-42, 3e38, -1e300, INFINITY, -INFINITY, NAN,
                              1.0 + 0x1p-7, 1.0, 1e20, -1e20, 700.5, -800.25};
    for (size_t i = 0; i < std::size(special) && i < count; ++i) out[i] = round_into(special[i], type);
  }
  return out;
}

Tensor tensor_of(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  Tensor t(ElementType::f64, shape);
  for (size_t i = 0; i < v.size(); ++i) t.set(i, v[i]);
  return t;
}

std::vector<double> exact(const ir::Program& program, const std::vector<std::vector<double>>& args) {
  reference::MpfrArith arith(256);
  std::vector<reference::Value<reference::MpfrArith>> arguments;
  for (size_t i = 0; i < args.size(); ++i) {
    reference::HostTensor host{program.functions[0].argument_types[i], args[i], {}};
    arguments.push_back(reference::to_value(arith, host));
  }
  reference::ParameterStore none;
  reference::RunOptions options;
  auto results = reference::run_function(program, program.functions[0], none, arguments, options);
  std::vector<double> out;
  for (int64_t i = 0; i < results[0].size(); ++i) out.push_back(arith.to_double(results[0].real(i)));
  return out;
}

std::vector<double> native(const ir::Program& program, const std::vector<std::vector<double>>& args, RealType type,
                           bool force_scalar = false) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < args.size(); ++i) inputs.push_back(tensor_of(args[i], program.functions[0].argument_types[i].shape));
  const Realization realization = uniform_realization(type);
  const PreparedParameters none;
  const std::vector<Tensor> out = execute(program, "f", realization, inputs, none, {1, force_scalar});
  std::vector<double> values;
  for (uint64_t i = 0; i < out[0].element_count(); ++i) values.push_back(out[0].get(i));
  return values;
}

// y against exact r: NaN for NaN; overflow to ±Inf beyond the type's range; else |y − r| <= bound.
void expect_close(double y, double r, double bound, RealType type, const std::string& what) {
  const double max = facts(element_type_of(type)).highest;
  if (std::isnan(r)) {
    EXPECT_TRUE(std::isnan(y)) << what << ": exact NaN, native " << y;
  } else if (std::fabs(r) > max) {
    EXPECT_TRUE(std::isinf(y) || std::fabs(y) >= max) << what << ": exact " << r << " overflows, native " << y;
  } else {
    EXPECT_LE(std::fabs(y - r), bound) << what << ": exact " << r << ", native " << y;
  }
}

struct UnaryCase {
  ir::Op op;
  double ulps;  // 0: exact; 0.5: correctly rounded
};

const RealType kTypes[] = {RealType::f64, RealType::f32, RealType::bf16};

TEST(Consistency, UnaryPrimitives) {
  const UnaryCase cases[] = {{ir::Op::neg, 0},   {ir::Op::abs, 0},      {ir::Op::relu, 0},  {ir::Op::sqrt, 0.5},
                             {ir::Op::exp, 1},   {ir::Op::log, 1},      {ir::Op::tanh, 3},  {ir::Op::rsqrt, 1.5},
                             {ir::Op::gelu_erf, 64}, {ir::Op::gelu_tanh, 400},
                             {ir::Op::erf, 8},   {ir::Op::sin, 1},      {ir::Op::cos, 1},      {ir::Op::atan, 1},
                             {ir::Op::round, 0}, {ir::Op::floor, 0},    {ir::Op::ceil, 0},
                             {ir::Op::round_f16, 0}, {ir::Op::round_bf16, 0}};
  for (RealType type : kTypes) {
    const double u = real_unit_roundoff(type);
    const double tiny = std::ldexp(1.0, std::numeric_limits<double>::min_exponent - 53);
    for (const UnaryCase& c : cases) {
      const ir::Program program = one_op(c.op, {real({kN})}, real({kN}));
      for (bool hard : {false, true}) {
        std::vector<double> x = values(kN, 11, type, hard);
        if (c.op == ir::Op::log || c.op == ir::Op::sqrt || c.op == ir::Op::rsqrt) {
          for (size_t i = hard ? 16 : 0; i < x.size(); ++i) x[i] = std::fabs(x[i]);
        }
        const std::vector<double> r = exact(program, {x}), y = native(program, {x}, type);
        // bf16 transcendentals: the f32 kernel's error, then one bf16 rounding.
        const double rel = type == RealType::bf16 ? u + c.ulps * 2 * 0x1p-24 : c.ulps * 2 * u;
        const double abs_floor = type == RealType::f64 ? tiny : type == RealType::f32 ? 0x1p-149 : 0x1p-133;  // subnormal spacing
        for (size_t i = 0; i < x.size(); ++i) {
          expect_close(y[i], r[i], rel * std::fabs(r[i]) + abs_floor,
                       type, std::string(ir::op_name(c.op)) + " " + real_type_name(type) + " x=" + std::to_string(x[i]));
        }
      }
    }
  }
}

TEST(Consistency, BinaryPrimitives) {
  for (RealType type : kTypes) {
    const double u = real_unit_roundoff(type);
    for (ir::Op op : {ir::Op::add, ir::Op::sub, ir::Op::mul, ir::Op::div, ir::Op::max, ir::Op::min}) {
      const ir::Program program = one_op(op, {real({kN}), real({kN})}, real({kN}));
      for (bool hard : {false, true}) {
        const std::vector<double> x = values(kN, 5, type, hard), z = values(kN, 6, type, false);
        std::vector<double> y = z;
        if (hard) y[10] = round_into(1.0, type), y[11] = round_into(1.0 + 0x1p-7, type);  // cancellation
        const std::vector<double> r = exact(program, {x, y}), w = native(program, {x, y}, type);
        const double exact_op = op == ir::Op::max || op == ir::Op::min ? 0 : u;
        for (size_t i = 0; i < x.size(); ++i) {
          const double floor = type == RealType::f64 ? 0x1p-1074 : type == RealType::f32 ? 0x1p-149 : 0x1p-133;
          expect_close(w[i], r[i], exact_op * std::fabs(r[i]) + floor,
                       type, std::string(ir::op_name(op)) + " " + real_type_name(type));
        }
      }
    }
  }
}

// Sums: (n−1)·u·Σ|t| (+ u·|r| for a final rounding to bf16 after f32 accumulation).
TEST(Consistency, ReductionsAndContraction) {
  for (RealType type : kTypes) {
    const double u = real_unit_roundoff(type), ua = type == RealType::bf16 ? 0x1p-24 : u;
    ir::Attrs axis1;
    axis1.axes = {1};
    const ir::Program sum = one_op(ir::Op::sum, {real({4, kN})}, real({4, 1}), axis1);
    const std::vector<double> x = values(4 * kN, 9, type, false);
    std::vector<double> r = exact(sum, {x}), y = native(sum, {x}, type);
    for (size_t row = 0; row < 4; ++row) {
      double magnitude = 0;
      for (int64_t k = 0; k < kN; ++k) magnitude += std::fabs(x[row * kN + k]);
      expect_close(y[row], r[row], (kN - 1) * ua * magnitude + u * std::fabs(r[row]), type, "sum");
    }
    ir::Attrs spec;
    spec.spec = "ij,jk->ik";
    const ir::Program matmul = one_op(ir::Op::contract, {real({3, kN}), real({kN, 5})}, real({3, 5}), spec);
    const std::vector<double> a = values(3 * kN, 1, type, false), b = values(kN * 5, 2, type, false);
    r = exact(matmul, {a, b});
    y = native(matmul, {a, b}, type);
    for (size_t i = 0; i < 3; ++i) {
      for (size_t j = 0; j < 5; ++j) {
        double magnitude = 0;
        for (int64_t k = 0; k < kN; ++k) magnitude += std::fabs(a[i * kN + k] * b[k * 5 + j]);
        expect_close(y[i * 5 + j], r[i * 5 + j], kN * ua * magnitude + u * std::fabs(r[i * 5 + j]), type, "contract");
      }
    }
  }
}

// softmax / log_softmax: a few ulps of the exp and log kernels plus the sum's (n−1)·u.
TEST(Consistency, Normalizations) {
  for (RealType type : kTypes) {
    const double u = real_unit_roundoff(type), ua = type == RealType::bf16 ? 0x1p-24 : u;
    for (ir::Op op : {ir::Op::softmax, ir::Op::log_softmax}) {
      ir::Attrs axis;
      axis.axes = {1};
      const ir::Program program = one_op(op, {real({3, kN})}, real({3, kN}), axis);
      const std::vector<double> x = values(3 * kN, 4, type, false);
      const std::vector<double> r = exact(program, {x}), y = native(program, {x}, type);
      for (size_t i = 0; i < r.size(); ++i) {
        const double scale = op == ir::Op::softmax ? std::fabs(r[i]) : 1.0 + std::fabs(r[i]);
        expect_close(y[i], r[i], (kN + 8) * ua * scale + u * std::fabs(r[i]), type, ir::op_name(op));
      }
    }
  }
}

// softmax / log_softmax rows ending in a run of −∞ (a causal mask's): bit for bit the
// definition over the whole row (m = maxNum, d = x − m, e = exp(d), s = e₀ + e₁ + …
// sequentially, y = e / s or d − log s), for tails of every length, all-−∞ rows, and NaN, +∞
// or −∞ before the tail; f64 and f32, SIMD and scalar. (Filling such a tail in instead of
// computing it was tried and measured no faster; this pins the bits any such change must keep.)
template <typename C>
void expect_definition_bits(ir::Op op, const std::vector<double>& x, int64_t n, const std::vector<double>& y) {
  for (size_t r0 = 0; r0 < x.size(); r0 += static_cast<size_t>(n)) {
    std::vector<C> row(x.begin() + static_cast<long>(r0), x.begin() + static_cast<long>(r0) + n), d(row.size()), e(row.size());
    const C m = max_of_row(row.data(), row.size(), true);
    C s = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      d[i] = row[i] - m, e[i] = unary_scalar(UnaryFn::exp, d[i]);
      s = i == 0 ? e[i] : s + e[i];
    }
    const C log_s = unary_scalar(UnaryFn::log, s);
    for (size_t i = 0; i < row.size(); ++i) {
      const double want = op == ir::Op::softmax ? e[i] / s : d[i] - log_s, got = y[r0 + i];
      ASSERT_TRUE(std::memcmp(&want, &got, 8) == 0 || (want != want && got != got))
          << ir::op_name(op) << " row " << r0 / static_cast<size_t>(n) << " term " << i << ": " << got << " != " << want;
    }
  }
}

TEST(Consistency, NormalizationTailsOfMinusInfinity) {
  const int64_t n = 40;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<double> x;
  auto add_row = [&](size_t tail, size_t at, double special) {
    for (int64_t i = 0; i < n; ++i) x.push_back(static_cast<size_t>(i) + tail >= static_cast<size_t>(n) ? -INFINITY : normal(rng));
    if (at < static_cast<size_t>(n)) x[x.size() - static_cast<size_t>(n) + at] = special;
  };
  for (size_t tail = 0; tail <= static_cast<size_t>(n); ++tail) add_row(tail, n, 0);
  for (double special : {NAN, INFINITY, -INFINITY}) add_row(10, 3, special), add_row(10, 29, special);
  const int64_t rows = static_cast<int64_t>(x.size()) / n;
  for (RealType type : {RealType::f64, RealType::f32}) {
    std::vector<double> typed = x;
    for (double& v : typed) v = round_into(v, type);
    for (ir::Op op : {ir::Op::softmax, ir::Op::log_softmax}) {
      ir::Attrs axis;
      axis.axes = {1};
      const ir::Program program = one_op(op, {real({rows, n})}, real({rows, n}), axis);
      for (bool scalar : {false, true}) {
        SCOPED_TRACE(std::string(real_type_name(type)) + (scalar ? " scalar" : " SIMD"));
        const std::vector<double> y = native(program, {typed}, type, scalar);
        if (type == RealType::f64) expect_definition_bits<double>(op, typed, n, y);
        else expect_definition_bits<float>(op, typed, n, y);
      }
    }
  }
}

}  // namespace
}  // namespace presk::exec::native
