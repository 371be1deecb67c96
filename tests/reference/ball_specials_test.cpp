// Ball mode on the special classes (issue 19, item 5; docs/reference.md, "Ball mode: special
// values"): every elementwise op, reduction, normalization, contraction and loss of the
// reference on ±0, ±∞, NaN, subnormals and huge values (alone, in every pair, and in the rows
// of the reductions), run in MPFR and in ball mode at 256 bits. Each ball must agree with the
// MPFR value: NaN where it is NaN, the same infinity where it is ±∞, a finite ball containing
// it (with a radius near 2⁻²⁵⁶ of it) where it is finite. The one documented other answer: a
// ball has no signed zero, so where MPFR's value depends on the sign of a zero operand
// (1/±0 = ±∞) the ball is NaN, the indeterminate ball that contains both.
#include <arb.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "reference/support.h"

namespace presk::testing {
namespace {

using ir::Op;
using reference::BallArith;
using reference::MpfrArith;

constexpr long kBits = 256;
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

// The special classes and two ordinary partners.
const std::vector<double> kClasses = {0.0,
                                      -0.0,
                                      kInf,
                                      -kInf,
                                      kNan,
                                      4.9406564584124654e-324,
                                      -2.2250738585072009e-308,
                                      1.7976931348623157e308,
                                      -1.7976931348623157e308,
                                      1.5,
                                      -0.75};

std::string describe(const std::vector<double>& operands) {
  std::string text;
  for (double x : operands) {
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", x);
    text += (text.empty() ? "" : ", ") + std::string(number);
  }
  return "(" + text + ")";
}

// The inputs with every zero's sign flipped.
std::vector<reference::HostTensor> flip_zeros(std::vector<reference::HostTensor> inputs) {
  for (reference::HostTensor& input : inputs) {
    for (double& x : input.reals) {
      if (x == 0) x = -x;
    }
  }
  return inputs;
}

reference::RunOptions at_bits() {
  reference::RunOptions options;
  options.bits = kBits;
  return options;
}

// Checks every real element of the one result of `program` on `inputs`; `what(i)` names the
// operands of element i.
void check_agreement(const ir::Program& program, const std::vector<reference::HostTensor>& inputs,
                     const std::function<std::string(int64_t)>& what) {
  std::vector<MpfrValue> exact = run<MpfrArith>(program, inputs, at_bits());
  std::vector<MpfrValue> flipped = run<MpfrArith>(program, flip_zeros(inputs), at_bits());
  std::vector<BallValue> balls = run<BallArith>(program, inputs, at_bits());
  ASSERT_EQ(exact.size(), 1u);
  ASSERT_EQ(exact[0].size(), balls[0].size());
  const std::string op = ir::op_name(program.functions.back().lets.back().op);
  for (int64_t i = 0; i < exact[0].size(); ++i) {
    mpfr_srcptr m = exact[0].real(i);
    const arb_struct* b = balls[0].real(i);
    const std::string where = op + what(i) + ": MPFR " + MpfrArith(kBits).to_decimal(m, 6) +
                              ", ball " + BallArith(kBits).to_decimal(b, 6) + " ± " +
                              BallArith(kBits).radius_decimal(b);
    const bool sign_of_zero_matters =
        !mpfr_equal_p(m, flipped[0].real(i)) && !(mpfr_nan_p(m) && mpfr_nan_p(flipped[0].real(i)));
    if (sign_of_zero_matters && arf_is_nan(arb_midref(b))) continue;  // the documented answer
    if (mpfr_nan_p(m)) {
      EXPECT_TRUE(arf_is_nan(arb_midref(b))) << where;
    } else if (mpfr_inf_p(m)) {
      EXPECT_TRUE(arf_is_inf(arb_midref(b)) && arf_sgn(arb_midref(b)) == mpfr_sgn(m)) << where;
    } else {
      EXPECT_TRUE(arf_is_finite(arb_midref(b)) && arb_contains_mpfr(b, m)) << where;
      // A useful enclosure: a radius within 2⁻²⁰⁰ of max(|value|, 1).
      Exact bound(64);
      mpfr_abs(bound, m, MPFR_RNDU);
      if (mpfr_cmp_ui(bound, 1) < 0) mpfr_set_ui(bound, 1, MPFR_RNDU);
      mpfr_mul_2si(bound, bound, -200, MPFR_RNDU);
      arf_t radius;
      arf_init(radius);
      arf_set_mag(radius, arb_radref(b));
      EXPECT_TRUE(arf_cmp_d(radius, mpfr_get_d(bound, MPFR_RNDU)) <= 0 || mpfr_inf_p(bound))
          << where;
      arf_clear(radius);
    }
  }
}

std::vector<double> pairs_first() {
  std::vector<double> out;
  for (double x : kClasses) {
    for (size_t j = 0; j < kClasses.size(); ++j) out.push_back(x);
  }
  return out;
}
std::vector<double> pairs_second() {
  std::vector<double> out;
  for (size_t i = 0; i < kClasses.size(); ++i)
    out.insert(out.end(), kClasses.begin(), kClasses.end());
  return out;
}
std::vector<double> pair_rows() {  // [n², 2]: every ordered pair of classes as a row
  std::vector<double> out, first = pairs_first(), second = pairs_second();
  for (size_t i = 0; i < first.size(); ++i) out.insert(out.end(), {first[i], second[i]});
  return out;
}
std::string pair(int64_t i) {
  const size_t n = kClasses.size();
  return describe({kClasses[static_cast<size_t>(i) / n], kClasses[static_cast<size_t>(i) % n]});
}

TEST(BallSpecials, UnaryOpsAgreeWithMpfr) {
  const auto n = static_cast<int64_t>(kClasses.size());
  for (Op op : {Op::neg, Op::abs, Op::exp, Op::log, Op::sqrt, Op::rsqrt, Op::tanh, Op::relu,
                Op::gelu_tanh, Op::gelu_erf, Op::gelu_tanh_grad, Op::gelu_erf_grad}) {
    ir::Program program = single_op_program(op, {real_type({n})}, real_type({n}));
    check_agreement(program, {real_input({n}, kClasses)},
                    [](int64_t i) { return describe({kClasses[static_cast<size_t>(i)]}); });
  }
}

TEST(BallSpecials, BinaryOpsAgreeWithMpfrOnEveryPair) {
  const auto n = static_cast<int64_t>(kClasses.size() * kClasses.size());
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::max, Op::min}) {
    ir::Program program = single_op_program(op, {real_type({n}), real_type({n})}, real_type({n}));
    check_agreement(program, {real_input({n}, pairs_first()), real_input({n}, pairs_second())},
                    pair);
  }
}

// Comparisons are decided on exact balls, specials included, with MPFR's answers (IEEE: a NaN
// operand is unordered); `where` picks by them.
TEST(BallSpecials, ComparisonsAndWhereAgreeWithMpfr) {
  const auto n = static_cast<int64_t>(kClasses.size() * kClasses.size());
  const std::vector<reference::HostTensor> inputs = {real_input({n}, pairs_first()),
                                                     real_input({n}, pairs_second())};
  for (Op op : {Op::lt, Op::le, Op::gt, Op::ge, Op::eq, Op::ne}) {
    ir::Program program = single_op_program(op, {real_type({n}), real_type({n})}, bool_type({n}));
    std::vector<MpfrValue> exact = run<MpfrArith>(program, inputs, at_bits());
    std::vector<BallValue> balls = run<BallArith>(program, inputs, at_bits());
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(exact[0].integers[i], balls[0].integers[i]) << ir::op_name(op) << pair(i);
    }
  }
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({n}));
  auto y = f.argument("y", real_type({n}));
  f.result(f.let(Op::where, real_type({n}), {f.let(Op::lt, bool_type({n}), {x, y}), x, y}));
  check_agreement(make_program({f.build()}), inputs, pair);
}

// The reductions and normalizations over every pair of classes as a row, a max over
// [NaN, ∞, …] among them; the contraction of each pair with (1, 1) and its square.
TEST(BallSpecials, ReductionsAgreeWithMpfrOnEveryPairRow) {
  const auto n = static_cast<int64_t>(kClasses.size() * kClasses.size());
  const std::vector<reference::HostTensor> rows = {real_input({n, 2}, pair_rows())};
  for (Op op : {Op::sum, Op::mean, Op::reduce_max}) {
    FunctionBuilder f("f", "", true);
    f.result(f.axes_op(op, real_type({n, 1}), f.argument("x", real_type({n, 2})), {1}));
    check_agreement(make_program({f.build()}), rows, pair);
  }
  for (Op op : {Op::softmax, Op::log_softmax}) {
    FunctionBuilder f("f", "", true);
    f.result(f.axes_op(op, real_type({n, 2}), f.argument("x", real_type({n, 2})), {1}));
    check_agreement(make_program({f.build()}), rows, [](int64_t i) { return pair(i / 2); });
  }
  {
    FunctionBuilder f("f", "", true);
    auto x = f.argument("x", real_type({n, 2}));
    f.result(f.contract("ik,ik->i", real_type({n}), x, x));  // a² + b²
    check_agreement(make_program({f.build()}), rows, pair);
  }
  {
    FunctionBuilder f("f", "", true);
    auto x = f.argument("x", real_type({n, 2}));
    auto w = f.argument("w", real_type({2}));
    f.result(f.contract("ik,k->i", real_type({n}), x, w));  // a − b
    check_agreement(make_program({f.build()}), {rows[0], real_input({2}, {1, -1})}, pair);
  }
}

// cross_entropy of each pair as the logits of one position, target 0 and target 1.
TEST(BallSpecials, CrossEntropyAgreesWithMpfr) {
  ir::Program program =
      single_op_program(Op::cross_entropy, {real_type({1, 2}), int_type({1})}, real_type());
  for (double a : kClasses) {
    for (double b : kClasses) {
      for (int64_t target : {0, 1}) {
        check_agreement(program, {real_input({1, 2}, {a, b}), int_input({1}, {target})},
                        [&](int64_t) {
                          return describe({a, b}) + " target " + std::to_string(target);
                        });
      }
    }
  }
}

// The cases issue 19 named, each with its answer.
TEST(BallSpecials, TheNamedCases) {
  auto ball_of = [](Op op, std::vector<double> xs) {
    const auto n = static_cast<int64_t>(xs.size());
    ir::Program program = single_op_program(op, {real_type({n})}, real_type({n}));
    return run<BallArith>(program, {real_input({n}, xs)}, at_bits());
  };
  auto log0 = ball_of(Op::log, {-0.0, 0.0});
  EXPECT_TRUE(arf_is_inf(arb_midref(log0[0].real(0))) &&
              arf_sgn(arb_midref(log0[0].real(0))) < 0);  // −∞
  auto relu = ball_of(Op::relu, {kNan});
  EXPECT_TRUE(arb_is_zero(relu[0].real(0)));  // maxNum: relu(NaN) = 0
  auto gelu = ball_of(Op::gelu_erf, {kInf});
  EXPECT_TRUE(arf_is_inf(arb_midref(gelu[0].real(0))));
  auto roots = ball_of(Op::sqrt, {-0.0});
  EXPECT_TRUE(arb_is_zero(roots[0].real(0)));  // −0: a ball's zero has no sign
  FunctionBuilder f("f", "", true);
  f.result(f.axes_op(Op::reduce_max, real_type({1}), f.argument("x", real_type({3})), {0}));
  auto top =
      run<BallArith>(make_program({f.build()}), {real_input({3}, {kNan, kInf, 1})}, at_bits());
  EXPECT_TRUE(arf_is_inf(arb_midref(top[0].real(0))) && arf_sgn(arb_midref(top[0].real(0))) > 0);
}

}  // namespace
}  // namespace presk::testing
