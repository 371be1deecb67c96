// Whole programs through the reference interpreter: the parameter context rules through call
// and fold, the observer, thread-count independence, ball enclosures and the coded errors.
#include <cmath>
#include <map>

#include "exec/reference/parameters.h"
#include "reference/support.h"

namespace presk::testing {
namespace {

using ir::Op;
using reference::BallArith;
using reference::MpfrArith;

constexpr int64_t kWidth = 3;

// A 2-layer stack: entry f(x) = scale · fold blocks over x, Block.apply(x) = Lin.apply(x·w)
// with Lin at path `lin` adding its bias b. Params: scale, blocks.w [2, D], blocks.lin.b [2, D].
ir::Program stacked_program() {
  FunctionBuilder lin("Lin.apply", "Lin");
  auto y = lin.argument("y", real_type({kWidth}));
  lin.result(lin.let(Op::add, real_type({kWidth}), {y, lin.param("b", real_type({kWidth}))}));
  FunctionBuilder block("Block.apply", "Block");
  auto x = block.argument("x", real_type({kWidth}));
  auto scaled = block.let(Op::mul, real_type({kWidth}), {x, block.param("w", real_type({kWidth}))});
  block.result(block.call(Op::call, "Lin.apply", "lin", real_type({kWidth}), {scaled}));
  FunctionBuilder f("f", "Net", true);
  auto input = f.argument("x", real_type({kWidth}));
  auto folded = f.call(Op::fold, "Block.apply", "blocks", real_type({kWidth}), {input});
  f.result(f.let(Op::mul, real_type({kWidth}), {folded, f.param("scale", real_type())}));
  return make_program({lin.build(), block.build(), f.build()},
                      {make_param("scale", real_type()),
                       make_param("blocks.w", real_type({2, kWidth}), 1),
                       make_param("blocks.lin.b", real_type({2, kWidth}), 1)});
}

reference::ParameterStore stacked_parameters() {
  reference::ParameterStore params;
  params.set("scale", {0.5});
  params.set("blocks.w", {2, 3, 4, 5, 6, 7});
  params.set("blocks.lin.b", {1, 1, 1, 10, 20, 30});
  return params;
}

TEST(ReferenceProgram, ParamContextThroughCallAndFold) {
  reference::RunOptions options;
  auto out = run<MpfrArith>(stacked_program(), {real_input({kWidth}, {1, 2, 3})}, options,
                            stacked_parameters());
  for (int i = 0; i < kWidth; ++i) {
    double w0 = 2 + i, w1 = 5 + i, b1 = 10 * (i + 1);
    double want = 0.5 * (((1 + i) * w0 + 1) * w1 + b1);
    EXPECT_EQ(mpfr_get_d(out[0].real(i), MPFR_RNDN), want) << i;
  }
}

// Records the largest magnitude per site and layer, and the contraction statistics.
class MaxObserver : public reference::Observer {
 public:
  void on_value(const reference::SiteContext& site, const reference::ValueView& value) override {
    std::string key = site.site_name() + "@" + site.module_path;
    for (int64_t l : site.layers) key += "[" + std::to_string(l) + "]";
    double& largest = largest_[key];
    for (int64_t i = 0; i < value.count; ++i) {
      double magnitude = value.mpfr ? std::fabs(mpfr_get_d(value.mpfr + i, MPFR_RNDN))
                       : value.ball ? std::fabs(arf_get_d(arb_midref(value.ball + i), ARF_RND_NEAR))
                                    : std::fabs(static_cast<double>(value.integers[i]));
      largest = std::max(largest, magnitude);
    }
  }
  bool wants_terms() const override { return true; }
  void on_terms(const reference::SiteContext& site,
                std::span<const reference::TermStatistics> terms) override {
    terms_[site.site_name()].assign(terms.begin(), terms.end());
  }
  std::map<std::string, double> largest_;
  std::map<std::string, std::vector<reference::TermStatistics>> terms_;
};

TEST(ReferenceProgram, ObserverSeesEverySiteOncePerLayer) {
  MaxObserver observer;
  reference::RunOptions options;
  options.observer = &observer;
  run<MpfrArith>(stacked_program(), {real_input({kWidth}, {1, 2, 3})}, options, stacked_parameters());
  EXPECT_EQ(observer.largest_["Block.apply/%0@blocks[1]"], 7);      // w of layer 1
  EXPECT_EQ(observer.largest_["Lin.apply/%0@blocks.lin[0]"], 1);    // b of layer 0
  EXPECT_EQ(observer.largest_["f/%1@"], 0.5);
  EXPECT_EQ(observer.largest_.size(), 2u * 5 + 3);
}

TEST(ReferenceProgram, ContractionTermStatistics) {
  ir::Attrs attrs;
  attrs.spec = "d,dv->v";
  ir::Program program = single_op_program(Op::contract, {real_type({2}), real_type({2, 2})},
                                          real_type({2}), attrs);
  MaxObserver observer;
  reference::RunOptions options;
  options.observer = &observer;
  run<MpfrArith>(program, {real_input({2}, {3, -4}), real_input({2, 2}, {1, 2, -1, 0.5})}, options);
  const auto& terms = observer.terms_["f/%0"];
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].sum_abs_terms, 7);        // |3·1| + |−4·−1|
  EXPECT_EQ(terms[0].root_sum_squares, 5);     // √(9 + 16)
  EXPECT_EQ(terms[1].operand_abs_sums[0], 7);  // |3| + |−4|
  EXPECT_EQ(terms[1].operand_abs_sums[1], 2.5);
}

// A small MLP with softmax: contraction, gelu, normalization.
ir::Program mlp_program() {
  FunctionBuilder f("f", "", true);
  auto x = f.argument("x", real_type({8, 16}));
  auto w1 = f.argument("w1", real_type({16, 32}));
  auto w2 = f.argument("w2", real_type({32, 5}));
  auto h = f.contract("td,dh->th", real_type({8, 32}), x, w1);
  auto g = f.let(Op::gelu_erf, real_type({8, 32}), {h});
  auto o = f.contract("th,hv->tv", real_type({8, 5}), g, w2);
  f.result(f.axes_op(Op::log_softmax, real_type({8, 5}), o, {1}));
  return make_program({f.build()});
}

std::vector<reference::HostTensor> mlp_inputs() {
  ir::Function entry = mlp_program().functions[0];
  return reference::synthesize_inputs(entry, 7, 1);
}

TEST(ReferenceProgram, ThreadCountDoesNotChangeABit) {
  reference::RunOptions one, two;
  one.threads = 1;
  two.threads = 2;
  auto a = run<MpfrArith>(mlp_program(), mlp_inputs(), one);
  auto b = run<MpfrArith>(mlp_program(), mlp_inputs(), two);
  for (int64_t i = 0; i < a[0].size(); ++i) EXPECT_TRUE(mpfr_equal_p(a[0].real(i), b[0].real(i)));
}

TEST(ReferenceProgram, BallsEncloseTheMpfrResultAtTwiceTheBits) {
  for (long bits : {64L, 128L}) {
    reference::RunOptions ball_options, mpfr_options;
    ball_options.bits = bits;
    mpfr_options.bits = 2 * bits;
    auto balls = run<BallArith>(mlp_program(), mlp_inputs(), ball_options);
    auto points = run<MpfrArith>(mlp_program(), mlp_inputs(), mpfr_options);
    for (int64_t i = 0; i < balls[0].size(); ++i) {
      arb_t point;
      arb_init(point);
      arf_set_mpfr(arb_midref(point), points[0].real(i));
      EXPECT_TRUE(arb_contains(balls[0].real(i), point)) << "bits " << bits << " element " << i;
      EXPECT_LT(mag_get_d(arb_radref(balls[0].real(i))), std::ldexp(1.0, -static_cast<int>(bits) + 20));
      arb_clear(point);
    }
  }
}

TEST(ReferenceErrors, CodedRefusals) {
  ir::Program mlp = mlp_program();
  EXPECT_EQ(error_code([&] { run<MpfrArith>(mlp, mlp_inputs(), {}, {}, "loss"); }), "E0500");
  reference::RunOptions low;
  low.bits = 24;
  EXPECT_EQ(error_code([&] { run<MpfrArith>(mlp, mlp_inputs(), low); }), "E0501");
  EXPECT_EQ(error_code([&] { run<MpfrArith>(mlp, {real_input({1}, {1})}); }), "E0502");
  EXPECT_EQ(error_code([&] {
    run<MpfrArith>(stacked_program(), {real_input({kWidth}, {1, 2, 3})});
  }), "E0506");
  ir::Program gather = single_op_program(Op::embed, {real_type({2, 2}), int_type({1})}, real_type({1, 2}));
  EXPECT_EQ(error_code([&] { run<MpfrArith>(gather, {real_input({2, 2}, {1, 2, 3, 4}), int_input({1}, {2})}); }),
            "E0505");
  ir::Program loss = single_op_program(Op::cross_entropy, {real_type({1, 2}), int_type({1})}, real_type());
  EXPECT_EQ(error_code([&] { run<MpfrArith>(loss, {real_input({1, 2}, {1, 2}), int_input({1}, {-1})}); }),
            "E0504");
  ir::Program compare = single_op_program(Op::lt, {real_type({1}), real_type({1})}, bool_type({1}));
  EXPECT_EQ(error_code([&] { run<BallArith>(compare, {real_input({1}, {1}), real_input({1}, {1})}); }),
            "none");  // exact equal balls are decided
  FunctionBuilder undecided("f", "", true);
  auto x = undecided.argument("x", real_type({1}));
  auto third = undecided.let(Op::div, real_type({1}), {x, undecided.literal("3")});
  auto back = undecided.let(Op::mul, real_type({1}), {third, undecided.literal("3")});
  undecided.result(undecided.let(Op::lt, bool_type({1}), {back, x}));
  ir::Program undecided_program = make_program({undecided.build()});
  EXPECT_EQ(error_code([&] { run<BallArith>(undecided_program, {real_input({1}, {1})}); }), "E0520");
}

}  // namespace
}  // namespace presk::testing
