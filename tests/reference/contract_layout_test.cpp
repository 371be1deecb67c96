// Contractions, normalizations, the loss and the layout ops of the reference interpreter
// against values computed independently.
#include <cmath>

#include "exec/reference/exact_dot.h"
#include "reference/support.h"

namespace presk::testing {
namespace {

using ir::Op;

std::vector<double> ramp(int64_t n, double scale, double shift) {
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(std::sin(static_cast<double>(i) * scale + shift));
  return values;
}

TEST(ReferenceContract, FmaChainMatrixProductIsTheMpfrFmaLoopInIndexOrder) {
  ir::Attrs attrs;
  attrs.spec = "td,dv->tv";
  ir::Program program = single_op_program(Op::contract, {real_type({3, 4}), real_type({4, 5})},
                                          real_type({3, 5}), attrs);
  std::vector<double> x = ramp(12, 0.7, 0.1), w = ramp(20, 1.3, 0.2);
  reference::set_contraction_sums(reference::ContractionSums::FmaChain);  // the old definition
  std::vector<MpfrValue> out = run_mpfr(program, {real_input({3, 4}, x), real_input({4, 5}, w)}, 128);
  reference::set_contraction_sums(reference::ContractionSums::Exact);
  for (int t = 0; t < 3; ++t) {
    for (int v = 0; v < 5; ++v) {
      Exact acc(128);
      mpfr_set_zero(acc, 1);
      Exact a(128), b(128);
      for (int d = 0; d < 4; ++d) {
        mpfr_set_d(a, x[t * 4 + d], MPFR_RNDN);
        mpfr_set_d(b, w[d * 5 + v], MPFR_RNDN);
        mpfr_fma(acc, a, b, acc, MPFR_RNDN);
      }
      EXPECT_TRUE(mpfr_equal_p(out[0].real(t * 5 + v), acc)) << t << "," << v;
    }
  }
}

TEST(ReferenceContract, SeveralContractedAndBatchLetters) {
  ir::Attrs attrs;
  attrs.spec = "bij,bjk->bk";  // contracted i then j, row-major
  ir::Program program = single_op_program(
      Op::contract, {real_type({2, 3, 4}), real_type({2, 4, 2})}, real_type({2, 2}), attrs);
  std::vector<double> x = ramp(24, 0.3, 0.0), w = ramp(16, 0.9, 1.0);
  std::vector<MpfrValue> out = run_mpfr(program, {real_input({2, 3, 4}, x), real_input({2, 4, 2}, w)});
  for (int b = 0; b < 2; ++b) {
    for (int k = 0; k < 2; ++k) {
      double want = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) want += x[b * 12 + i * 4 + j] * w[b * 8 + j * 2 + k];
      EXPECT_NEAR(mpfr_get_d(out[0].real(b * 2 + k), MPFR_RNDN), want, 1e-14);
    }
  }
}

TEST(ReferenceNormalization, SoftmaxRowsSumToOne) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({4, 7}));
  f.result(f.axes_op(Op::softmax, real_type({4, 7}), x, {1}));
  std::vector<MpfrValue> out =
      run_mpfr(make_program({f.build()}), {real_input({4, 7}, ramp(28, 2.1, 0.3))});
  for (int r = 0; r < 4; ++r) {
    Exact total(1024);
    mpfr_set_zero(total, 1);
    for (int c = 0; c < 7; ++c) mpfr_add(total, total, out[0].real(r * 7 + c), MPFR_RNDN);
    mpfr_sub_ui(total, total, 1, MPFR_RNDN);
    EXPECT_LT(std::fabs(mpfr_get_d(total, MPFR_RNDN)), 1e-75) << "row " << r;
  }
}

TEST(ReferenceNormalization, LogSoftmaxAlongTheFirstAxisAndCrossEntropy) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({3, 2}));
  auto targets = f.argument("t", int_type({2}));
  auto ls = f.axes_op(Op::log_softmax, real_type({3, 2}), x, {0});
  auto logits = f.axes_op(Op::transpose, real_type({2, 3}), x, {1, 0});
  auto ce = f.let(Op::cross_entropy, real_type(), {logits, targets});
  auto first = f.let(Op::slice, real_type({1, 2}), {ls}, [] {
    ir::Attrs a;
    a.axes = {0};
    a.starts = {0};
    a.stops = {1};
    return a;
  }());
  auto s = f.axes_op(Op::sum, real_type({1, 1}), first, {0, 1});
  f.result(f.let(Op::add, real_type({1, 1}), {s, ce}));
  std::vector<double> xs = {1, 4, 2, 5, 3, 6};  // columns (1,2,3) and (4,5,6)
  std::vector<MpfrValue> out =
      run_mpfr(make_program({f.build()}), {real_input({3, 2}, xs), int_input({2}, {2, 0})});
  double lse1 = std::log(std::exp(1) + std::exp(2) + std::exp(3));
  double lse2 = std::log(std::exp(4) + std::exp(5) + std::exp(6));
  double first_row = (1 - lse1) + (4 - lse2);
  double loss = ((lse1 - 3) + (lse2 - 4)) / 2;
  EXPECT_NEAR(mpfr_get_d(out[0].real(0), MPFR_RNDN), first_row + loss, 1e-14);
}

TEST(ReferenceLayout, CausalMaskGivesMinusInfinityAndSoftmaxZero) {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({3, 3}));
  auto masked = f.let(Op::causal_mask, real_type({3, 3}), {x});
  f.result(f.axes_op(Op::softmax, real_type({3, 3}), masked, {1}));
  std::vector<MpfrValue> out =
      run_mpfr(make_program({f.build()}), {real_input({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  EXPECT_EQ(mpfr_get_d(out[0].real(0), MPFR_RNDN), 1.0);
  EXPECT_TRUE(mpfr_zero_p(out[0].real(1)) && mpfr_zero_p(out[0].real(2)) && mpfr_zero_p(out[0].real(5)));
  EXPECT_NEAR(mpfr_get_d(out[0].real(3), MPFR_RNDN), 1 / (1 + std::exp(1.0)), 1e-15);
}

TEST(ReferenceLayout, TransposeSliceConcatReshapeBroadcastEmbed) {
  FunctionBuilder f("f", "", true);
  auto table = f.argument("table", real_type({4, 2}));
  auto tokens = f.argument("tokens", int_type({3}));
  auto rows = f.let(Op::embed, real_type({3, 2}), {table, tokens});   // rows 3, 0, 2
  auto t = f.axes_op(Op::transpose, real_type({2, 3}), rows, {1, 0});
  ir::Attrs cut;
  cut.axes = {1};
  cut.starts = {1};
  cut.stops = {3};
  auto s = f.let(Op::slice, real_type({2, 2}), {t}, cut);
  ir::Attrs axis1;
  axis1.axes = {1};
  auto c = f.let(Op::concat, real_type({2, 5}), {s, t}, axis1);
  auto r = f.let(Op::reshape, real_type({10}), {c});
  auto b = f.let(Op::broadcast, real_type({2, 10}), {r});
  f.result(b);
  std::vector<MpfrValue> out = run_mpfr(make_program({f.build()}),
      {real_input({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}), int_input({3}, {3, 0, 2})});
  // rows: [30 31; 0 1; 20 21]; t = [30 0 20; 31 1 21]; s = [0 20; 1 21]
  double want[10] = {0, 20, 30, 0, 20, 1, 21, 31, 1, 21};
  for (int k = 0; k < 20; ++k) EXPECT_EQ(mpfr_get_d(out[0].real(k), MPFR_RNDN), want[k % 10]) << k;
}

}  // namespace
}  // namespace presk::testing
