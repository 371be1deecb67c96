// Elementwise ops and reductions of the reference interpreter against closed forms and
// against values computed independently with MPFR at 1024 bits.
#include <gmp.h>

#include <cmath>
#include <functional>

#include "common/error_code.h"
#include "reference/support.h"

namespace presk::testing {
namespace {

using ir::Op;

// Runs `op` on x (a vector of R[n]) at 256 bits and checks every element against
// `expected(x)` computed at 1024 bits to within `tolerance_log2` (relative).
void check_unary(Op op, const std::vector<double>& xs,
                 const std::function<void(mpfr_ptr, mpfr_srcptr)>& expected,
                 double tolerance_log2 = -250) {
  auto n = static_cast<int64_t>(xs.size());
  ir::Program program = single_op_program(op, {real_type({n})}, real_type({n}));
  std::vector<MpfrValue> out = run_mpfr(program, {real_input({n}, xs)});
  for (int64_t i = 0; i < n; ++i) {
    Exact x, want;
    mpfr_set_d(x, xs[i], MPFR_RNDN);
    expected(want, x);
    EXPECT_LE(relative_error_log2(out[0].real(i), want), tolerance_log2)
        << ir::op_name(op) << " at x = " << xs[i];
  }
}

TEST(ReferenceElementwise, TranscendentalsAreCorrectlyRounded) {
  std::vector<double> xs = {0.5, 1.0, 2.0, 3.25, 1e-3, 7.0};
  check_unary(Op::exp, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_exp(r, x, MPFR_RNDN); });
  check_unary(Op::log, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_log(r, x, MPFR_RNDN); });
  check_unary(Op::sqrt, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_sqrt(r, x, MPFR_RNDN); });
  check_unary(Op::rsqrt, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_rec_sqrt(r, x, MPFR_RNDN); });
  check_unary(Op::tanh, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_tanh(r, x, MPFR_RNDN); });
  check_unary(Op::erf, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_erf(r, x, MPFR_RNDN); });
  check_unary(Op::sin, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_sin(r, x, MPFR_RNDN); });
  check_unary(Op::cos, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_cos(r, x, MPFR_RNDN); });
  check_unary(Op::atan, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_atan(r, x, MPFR_RNDN); });
}

// The roundings against values derived by hand: ties to even, the formats' largest numbers,
// their subnormals, and the overflow to ±∞.
TEST(ReferenceElementwise, RoundingsAreExact) {
  struct Case {
    Op op;
    double x, want;
  };
  const double inf = HUGE_VAL;
  const std::vector<Case> cases = {
      {Op::round, 2.5, 2},       {Op::round, 3.5, 4},      {Op::round, -2.5, -2},   {Op::round, -0.5, 0},
      {Op::round, 0.49999999999999994, 0}, {Op::round, 1e300, 1e300}, {Op::round, -7.25, -7},
      {Op::floor, -0.5, -1},     {Op::floor, 2.999, 2},    {Op::ceil, -0.5, 0},     {Op::ceil, 2.001, 3},
      {Op::round_f16, 1 + 0x1p-11, 1},              {Op::round_f16, 1 + 3 * 0x1p-11, 1 + 0x1p-9},
      {Op::round_f16, 65504, 65504},                {Op::round_f16, 65519.99, 65504},
      {Op::round_f16, 65520, inf},                  {Op::round_f16, -1e6, -inf},
      {Op::round_f16, 0x1p-25, 0},                  {Op::round_f16, 0x1.8p-25, 0x1p-24},
      {Op::round_f16, 3 * 0x1p-25, 2 * 0x1p-24},    {Op::round_f16, 0.1, 0x1.998p-4},
      {Op::round_bf16, 1 + 0x1p-8, 1},              {Op::round_bf16, 1 + 3 * 0x1p-8, 1 + 0x1p-6},
      {Op::round_bf16, 0x1.fep127, 0x1.fep127},     {Op::round_bf16, 0x1.ffp127, inf},
      {Op::round_bf16, 0x1p-134, 0},                {Op::round_bf16, 0x1.8p-134, 0x1p-133},
      {Op::round_bf16, 3.14159265358979, 3.140625},
  };
  for (const Case& c : cases) {
    ir::Program program = single_op_program(c.op, {real_type({1})}, real_type({1}));
    std::vector<MpfrValue> out = run_mpfr(program, {real_input({1}, {c.x})});
    EXPECT_EQ(mpfr_get_d(out[0].real(0), MPFR_RNDN), c.want) << ir::op_name(c.op) << " at x = " << c.x;
  }
}

TEST(ReferenceElementwise, GeluFormulas) {
  std::vector<double> xs = {-3.0, -0.5, 0.25, 1.0, 2.5};
  check_unary(Op::gelu_erf, xs, [](mpfr_ptr r, mpfr_srcptr x) {
    Exact t;
    mpfr_sqrt_ui(t, 2, MPFR_RNDN);
    mpfr_div(t, x, t, MPFR_RNDN);
    mpfr_erf(t, t, MPFR_RNDN);
    mpfr_add_ui(t, t, 1, MPFR_RNDN);
    mpfr_mul(t, t, x, MPFR_RNDN);
    mpfr_div_2ui(r, t, 1, MPFR_RNDN);
  }, -245);
  check_unary(Op::gelu_tanh, xs, [](mpfr_ptr r, mpfr_srcptr x) {
    Exact t, k;
    mpfr_const_pi(k, MPFR_RNDN);
    mpfr_ui_div(k, 2, k, MPFR_RNDN);
    mpfr_sqrt(k, k, MPFR_RNDN);                 // √(2/π)
    mpfr_pow_ui(t, x, 3, MPFR_RNDN);
    Exact c;
    mpfr_set_str(c, "0.044715", 10, MPFR_RNDN);
    mpfr_mul(t, t, c, MPFR_RNDN);
    mpfr_add(t, t, x, MPFR_RNDN);
    mpfr_mul(t, t, k, MPFR_RNDN);
    mpfr_tanh(t, t, MPFR_RNDN);
    mpfr_add_ui(t, t, 1, MPFR_RNDN);
    mpfr_mul(t, t, x, MPFR_RNDN);
    mpfr_div_2ui(r, t, 1, MPFR_RNDN);
  }, -240);
}

TEST(ReferenceElementwise, ExactOps) {
  std::vector<double> xs = {-2.5, -0.0, 0.0, 3.0};
  check_unary(Op::neg, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_neg(r, x, MPFR_RNDN); }, -1e8);
  check_unary(Op::abs, xs, [](mpfr_ptr r, mpfr_srcptr x) { mpfr_abs(r, x, MPFR_RNDN); }, -1e8);
  check_unary(Op::relu, xs, [](mpfr_ptr r, mpfr_srcptr x) {
    if (mpfr_sgn(x) > 0) mpfr_set(r, x, MPFR_RNDN); else mpfr_set_zero(r, 1);
  }, -1e8);
}

TEST(ReferenceElementwise, ExpOfLogIsTheIdentityToThePrecision) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({5}));
  auto l = f.let(Op::log, real_type({5}), {x});
  f.result(f.let(Op::exp, real_type({5}), {l}));
  ir::Program program = make_program({f.build()});
  std::vector<double> xs = {0.1, 1.5, 3.0, 1e10, 7e-8};
  std::vector<MpfrValue> out = run_mpfr(program, {real_input({5}, xs)});
  for (int i = 0; i < 5; ++i) {
    Exact want;
    mpfr_set_d(want, xs[i], MPFR_RNDN);
    // log rounds (≤ 2⁻²⁵⁶ relative, ≤ 2⁻²⁵⁶·|log x| absolute), exp amplifies by 1, rounds again.
    EXPECT_LE(relative_error_log2(out[0].real(i), want), -249) << xs[i];
  }
}

TEST(ReferenceElementwise, BinaryOpsBroadcast) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({2, 3}));
  auto y = f.argument("y", real_type({3}));
  auto d = f.let(Op::div, real_type({2, 3}), {x, y});
  auto m = f.let(Op::max, real_type({2, 3}), {d, f.literal("0.5")});
  f.result(f.let(Op::sub, real_type({2, 3}), {m, y}));
  ir::Program program = make_program({f.build()});
  std::vector<MpfrValue> out =
      run_mpfr(program, {real_input({2, 3}, {1, 2, 3, 4, 5, 6}), real_input({3}, {3, 4, 8})});
  double want[6] = {0.5 - 3, 0.5 - 4, 0.5 - 8, 4.0 / 3 - 3, 1.25 - 4, 0.75 - 8};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(mpfr_get_d(out[0].real(i), MPFR_RNDN), want[i], 1e-15);
  // 1/3 at 256 bits: the division rounds once.
  Exact third;
  mpfr_set_ui(third, 4, MPFR_RNDN);
  mpfr_div_ui(third, third, 3, MPFR_RNDN);
  mpfr_sub_ui(third, third, 3, MPFR_RNDN);
  EXPECT_LE(relative_error_log2(out[0].real(3), third), -254);
}

TEST(ReferenceElementwise, ComparisonsWhereAndConvert) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({4}));
  auto i = f.argument("i", int_type({4}));
  auto lt = f.let(Op::lt, bool_type({4}), {x, f.literal("1")});
  auto converted = f.let(Op::convert, real_type({4}), {i});
  auto picked = f.let(Op::where, real_type({4}), {lt, x, converted});
  auto flag = f.let(Op::convert, real_type({4}), {lt});
  f.result(f.let(Op::add, real_type({4}), {picked, flag}));
  ir::Program program = make_program({f.build()});
  std::vector<MpfrValue> out =
      run_mpfr(program, {real_input({4}, {0.5, 1.0, 2.0, -3.0}), int_input({4}, {10, 20, 30, 40})});
  double want[4] = {1.5, 20, 30, -2.0};
  for (int k = 0; k < 4; ++k) EXPECT_EQ(mpfr_get_d(out[0].real(k), MPFR_RNDN), want[k]);
}

// IEEE 754: a NaN operand is unordered, every comparison false but ≠ (it was an internal error).
TEST(ReferenceElementwise, ComparisonsWithNanAreUnordered) {
  const double nan = std::nan("");
  for (Op op : {Op::lt, Op::le, Op::gt, Op::ge, Op::eq, Op::ne}) {
    ir::Program program = single_op_program(op, {real_type({3}), real_type({3})}, bool_type({3}));
    std::vector<MpfrValue> out = run_mpfr(program, {real_input({3}, {nan, 1, nan}), real_input({3}, {1, nan, nan})});
    for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(out[0].integers[k], op == Op::ne ? 1 : 0) << ir::op_name(op) << " at " << k;
  }
}

// Z arithmetic is exact or E0550: never a wrapped value.
TEST(ReferenceElementwise, IntegerOverflowIsAUserError) {
  struct Case {
    Op op;
    int64_t x, y;
  };
  for (const Case& c : {Case{Op::add, INT64_MAX, 1}, Case{Op::sub, INT64_MIN, 1}, Case{Op::mul, int64_t{1} << 32, int64_t{1} << 31}}) {
    ir::Program program = single_op_program(c.op, {int_type({1}), int_type({1})}, int_type({1}));
    EXPECT_EQ(error_code([&] { run_mpfr(program, {int_input({1}, {c.x}), int_input({1}, {c.y})}); }), "E0550")
        << ir::op_name(c.op);
  }
  for (Op op : {Op::neg, Op::abs}) {
    ir::Program program = single_op_program(op, {int_type({1})}, int_type({1}));
    EXPECT_EQ(error_code([&] { run_mpfr(program, {int_input({1}, {INT64_MIN})}); }), "E0550") << ir::op_name(op);
  }
  ir::Attrs axis0;
  axis0.axes = {0};
  ir::Program sum = single_op_program(Op::sum, {int_type({3})}, int_type({1}), axis0);
  EXPECT_EQ(error_code([&] { run_mpfr(sum, {int_input({3}, {INT64_MAX, 1, -1})}); }), "E0550");
  std::vector<MpfrValue> fits = run_mpfr(sum, {int_input({3}, {INT64_MAX, -1, 1})});
  EXPECT_EQ(fits[0].integers[0], INT64_MAX);
}

TEST(ReferenceReduction, SumOfInverseSquaresMatchesItsExactRationalValue) {
  constexpr int64_t n = 200;
  FunctionBuilder f("f", "", true);
  ir::Attrs axis0;
  axis0.axes = {0};
  auto k0 = f.let(Op::iota, int_type({n}), {}, axis0);
  auto k = f.let(Op::add, int_type({n}), {k0, f.literal("1", int_type())});
  auto kr = f.let(Op::convert, real_type({n}), {k});
  auto k2 = f.let(Op::mul, real_type({n}), {kr, kr});
  auto inv = f.let(Op::div, real_type({n}), {f.literal("1"), k2});
  f.result(f.axes_op(Op::sum, real_type({1}), inv, {0}));
  std::vector<MpfrValue> out = run_mpfr(make_program({f.build()}), {});
  mpq_t exact, term;
  mpq_init(exact);
  mpq_init(term);
  for (int64_t j = 1; j <= n; ++j) {
    mpq_set_ui(term, 1, static_cast<unsigned long>(j * j));
    mpq_add(exact, exact, term);
  }
  Exact want(2048);
  mpfr_set_q(want, exact, MPFR_RNDN);
  mpq_clear(exact);
  mpq_clear(term);
  // 2n roundings of relative size ≤ 2⁻²⁵⁶, each on a partial sum ≤ the total.
  EXPECT_LE(relative_error_log2(out[0].real(0), want), -256 + std::log2(2.0 * n));
  EXPECT_GT(relative_error_log2(out[0].real(0), want), -400);  // it is not the exact value
}

TEST(ReferenceReduction, MeanAndMaxAlongAnAxis) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({2, 3}));
  auto mean = f.axes_op(Op::mean, real_type({2, 1}), x, {1});
  auto top = f.axes_op(Op::reduce_max, real_type({1, 3}), x, {0});
  f.result(f.let(Op::add, real_type({2, 3}), {mean, top}));
  std::vector<MpfrValue> out = run_mpfr(make_program({f.build()}),
                                        {real_input({2, 3}, {1, 5, 3, 4, -2, 0.5})});
  // means 3 and 2.5/3; column maxima 4, 5, 3
  double want[6] = {7, 8, 6, 2.5 / 3 + 4, 2.5 / 3 + 5, 2.5 / 3 + 3};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(mpfr_get_d(out[0].real(k), MPFR_RNDN), want[k], 1e-15);
}

}  // namespace
}  // namespace presk::testing
